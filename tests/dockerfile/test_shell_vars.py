"""Shell variables inside a RUN: what an install command's `$VAR` expands to.

The shell expands `$VAR` from variables set earlier in the same script (`A=x && pip install
foo==$A`, `export A=x;`), from ARG defaults and ENV; `[ ... ]` tests on known values decide
which side of `a && b || c` runs. A value set in a branch that may or may not run, from a
command substitution, or from a build argument without default is unknown: nothing is judged.
"""

from __future__ import annotations

import textwrap

import pytest

from wheeldoc.dockerfile.facts import DockerFacts
from wheeldoc.dockerfile.parser import parse_text
from wheeldoc.dockerfile.shell import extract_commands
from wheeldoc.dockerfile.stages import analyze


def install_argv(text: str) -> list[tuple[str, ...]]:
    df = parse_text(textwrap.dedent(text).lstrip("\n"), "Dockerfile")
    facts = DockerFacts(df, analyze(df))
    return [s.argv for s in facts.steps if s.install is not None]


def shell_vars(script: str) -> dict[str, str | None]:
    return dict(extract_commands(script)[-1].shell_vars)


@pytest.mark.parametrize("script, expected", [
    ("A=x && pip install foo", {"A": "x"}),
    ("A=x; B=$A.1; pip install foo", {"A": "x", "B": "x.1"}),
    ("true && V=a || V=b; pip install foo", {"V": "a"}),
    ("false && V=a || V=b; pip install foo", {"V": "b"}),
    ("[ 3 -gt 0 ] && V=a || V=b; pip install foo", {"V": "a"}),
    ("[ -z '' ] && V=a || V=b; pip install foo", {"V": "a"}),
    ("[ x = y ] && V=a || V=b; pip install foo", {"V": "b"}),
    ("! [ x = y ] && V=a || V=b; pip install foo", {"V": "a"}),
    # the branch depends on something the shell decides at build time: unknown
    ("[ -f /etc/x ] && V=a || V=b; pip install foo", {"V": None}),
    ("grep -q x /f && V=a; pip install foo", {"V": None}),
    ("if true; then V=1; fi; pip install foo", {"V": None}),
    ("for i in 1 2; do V=$i; done; pip install foo", {"V": None}),
    ("(V=1); pip install foo", {"V": None}),
    ("V=$(cat /version); pip install foo", {"V": None}),
    # a pipeline's commands run in subshells: the assignment does not reach the script
    ("V=1 | cat; pip install foo", {}),
    # an exported variable is the environment's, not a shell variable
    ("export V=1; pip install foo", {}),
])
def test_script_shell_variables(script, expected):
    assert shell_vars(script) == expected


def test_same_run_assignment_expands_in_the_install():
    assert install_argv("""
        FROM python:3.12
        RUN A=2.5.1 && pip install torch==$A
        RUN export B=0.20.1; pip install torchvision==${B}
    """) == [("pip", "install", "torch==2.5.1"), ("pip", "install", "torchvision==0.20.1")]


def test_arg_default_and_length_test_pick_the_branch():
    """transformers' docker images: `[ ${#PYTORCH} -gt 0 ] && VERSION='torch=='$PYTORCH'.*' || VERSION='torch'`."""
    argv = install_argv("""
        FROM python:3.12
        ARG PYTORCH='2.5.1'
        ARG TORCH_VISION=''
        ARG TORCH_AUDIO=''
        RUN [ ${#PYTORCH} -gt 0 ] && VERSION='torch=='$PYTORCH'.*' || VERSION='torch'; pip install -U $VERSION
        RUN [ ${#TORCH_VISION} -gt 0 ] && VERSION='torchvision=='$TORCH_VISION'.*' || VERSION='torchvision'; pip install -U $VERSION
        RUN V=${TORCH_AUDIO:-2.5.1}; pip install torchaudio==$V
    """)
    assert argv == [("pip", "install", "-U", "torch==2.5.1.*"), ("pip", "install", "-U", "torchvision"),
                    ("pip", "install", "torchaudio==2.5.1")]


def test_unknowable_values_stay_unexpanded():
    """A build argument without default, or a branch on one, leaves `$VAR` as written."""
    argv = install_argv("""
        FROM python:3.12
        ARG PYTORCH
        RUN [ -n "$PYTORCH" ] && V="torch==$PYTORCH" || V=torch; pip install $V
        RUN V=$(cat /torch-version); pip install torch==$V
    """)
    assert argv == [("pip", "install", "$V"), ("pip", "install", "torch==$V")]


def test_variable_branch_feeds_wd403(check):
    """torch pinned by one RUN, torchvision unpinned through a shell variable by the next."""
    f = check("""
        FROM nvidia/cuda:12.1.0-cudnn8-devel-ubuntu22.04
        RUN apt-get update && apt-get install -y python3 python3-pip
        ARG PYTORCH='2.5.1'
        ARG TORCH_VISION=''
        RUN [ ${#PYTORCH} -gt 0 ] && VERSION='torch=='$PYTORCH'.*' || VERSION='torch'; python3 -m pip install -U $VERSION --extra-index-url https://download.pytorch.org/whl/cu121
        RUN [ ${#TORCH_VISION} -gt 0 ] && VERSION='torchvision=='$TORCH_VISION'.*' || VERSION='torchvision'; python3 -m pip install -U $VERSION --extra-index-url https://download.pytorch.org/whl/cu121
    """)
    hits = [(x["line"], x["severity"]) for x in f if x["rule"] == "WD403" and x["severity"] != "info"]
    assert hits == [(6, "error")]


def test_unknown_variable_judges_nothing(check):
    f = check("""
        FROM nvidia/cuda:12.1.0-cudnn8-devel-ubuntu22.04
        RUN pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu121
        ARG TORCH_VISION
        RUN [ -n "$TORCH_VISION" ] && V="torchvision==$TORCH_VISION" || V=torchvision; pip install $V
    """)
    assert not [x for x in f if x["rule"] == "WD403" and x["severity"] != "info"]


def test_many_shell_variables_stay_bounded():
    """A RUN that sets thousands of variables: a bounded number is followed, the rest is unknown
    (never unset), and the snapshots are shared, so time and memory stay small."""
    import time

    from wheeldoc.dockerfile.shell import MAX_SHELL_VARS

    script = "; ".join(f"V{i}=x{i}; echo $V{i}" for i in range(2000)) + "; pip install torch==$V1999"
    t = time.perf_counter()
    cmds = extract_commands(script)
    assert time.perf_counter() - t < 2.0
    last = dict(cmds[-1].shell_vars)
    assert len(last) == MAX_SHELL_VARS + 1 and last["*"] is None and "V1999" not in last
    argv = install_argv("FROM python:3.12\nRUN " + script + "\n")
    assert argv == [("pip", "install", "torch==$V1999")]


def test_a_value_doubled_line_after_line_stays_bounded(cli, tmp_path):
    """`A=$A$A` forty times is 2**40 characters to a shell: wheeldoc stops following A past
    4 KiB (unknown), so the file is analysed in bounded time and memory, with no WD001."""
    import time

    path = tmp_path / "Dockerfile"
    path.write_text("FROM python:3.11\nRUN A=xy; " + "A=$A$A; " * 40 + "pip install requests==$A\n")
    t = time.perf_counter()
    res = cli("check", str(path), "--format", "json", "--fail-on", "never")
    assert time.perf_counter() - t < 5
    assert res.code == 0 and [f["rule"] for f in res.json()["findings"] if f["rule"] == "WD001"] == []
    cmds = extract_commands("A=xy; " + "A=$A$A; " * 40 + "pip install requests==$A")
    assert cmds[-1].argv[:2] == ("pip", "install") and max(len(a) for a in cmds[-1].argv) < 10_000
