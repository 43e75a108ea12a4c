"""Tests for wheeldoc.dockerfile.shell: commands inside RUN and installer recognition."""

from __future__ import annotations

import shlex
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wheeldoc.dockerfile.parser import parse_dockerfile, parse_text
from wheeldoc.dockerfile.shell import (
    MAX_COMMANDS,
    commands_in_run,
    extract_commands,
    find_installs,
    parse_install,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "dockerfiles"


def argvs(text: str) -> list[tuple[str, ...]]:
    return [c.argv for c in extract_commands(text)]


# -- tokenizing -------------------------------------------------------------------------

_PLAIN = st.text(alphabet="abcxyz019-_./:*?~+,@%^", min_size=1, max_size=6)
_SINGLE = _PLAIN.map(lambda s: "'" + s.replace("'", "") + " ;&|$`\"\\'")
_DOUBLE = st.text(alphabet="abc 19;&|'()<>#", max_size=6).map(lambda s: '"' + s + '"')
_ESCAPED = st.sampled_from(["\\ ", "\\'", '\\"', "\\\\", "\\;", "\\&", "\\#", "\\a"])
_WORD = st.lists(st.one_of(_PLAIN, _SINGLE, _DOUBLE, _ESCAPED), min_size=1, max_size=3).map("".join)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(words=st.lists(_WORD, min_size=1, max_size=6), sep=st.sampled_from([" ", "  ", "\t"]))
def test_words_agree_with_shlex(words, sep):
    text = "cmd " + sep.join(words)
    (cmd,) = extract_commands(text)
    assert cmd.argv == tuple(shlex.split(text)), text
    assert not cmd.incomplete


def test_lists_pipelines_and_groups():
    assert argvs("a && b || c; d | e & f") == [("a",), ("b",), ("c",), ("d",), ("e",), ("f",)]
    assert argvs("a&&b;c|d") == [("a",), ("b",), ("c",), ("d",)]
    assert argvs("(cd /x && make) || { echo fail; exit 1; }") == [
        ("cd", "/x"), ("make",), ("echo", "fail"), ("exit", "1")]
    assert argvs("if [ -f x ]; then pip install a; else pip install b; fi") == [
        ("[", "-f", "x", "]"), ("pip", "install", "a"), ("pip", "install", "b")]
    assert argvs("for p in a b; do pip install $p; done") == [("pip", "install", "$p")]
    assert argvs("while true; do uv sync; done") == [("true",), ("uv", "sync")]


def test_continuations_comments_and_lines():
    cmds = extract_commands("pip install a\\\n  b && echo c # comment && pip install x\n\npip install d")
    assert [(c.argv, c.line, c.line_offset) for c in cmds] == [
        (("pip", "install", "a", "b"), 1, 0), (("echo", "c"), 2, 1), (("pip", "install", "d"), 4, 3)]
    assert cmds[0].text == "pip install a\\\n  b" and cmds[0].span == (0, len(cmds[0].text))


def test_redirections_are_not_arguments():
    assert argvs("pip install x > /tmp/log 2>&1 </dev/null") == [("pip", "install", "x")]
    assert argvs("uv pip install y &>/dev/null") == [("uv", "pip", "install", "y")]
    assert argvs("echo 2>err a") == [("echo", "a")]


def test_env_prefixes_exports_and_wrappers():
    (c,) = extract_commands("UV_TORCH_BACKEND=auto A='x y' uv pip install torch")
    assert c.assignments == (("UV_TORCH_BACKEND", "auto"), ("A", "x y")) and c.argv[:3] == ("uv", "pip", "install")
    cmds = extract_commands("export UV_HTTP_TIMEOUT=600 UV_LINK_MODE=copy && uv sync && UV_HTTP_TIMEOUT=1 uv add x")
    assert cmds[1].exported == (("UV_HTTP_TIMEOUT", "600"), ("UV_LINK_MODE", "copy"))
    assert cmds[2].env()["UV_HTTP_TIMEOUT"] == "1"
    (w,) = extract_commands("sudo -E -u root env -i FOO=1 nohup /opt/venv/bin/python -m pip install q")
    assert w.wrappers == ("sudo", "env", "nohup") and w.assignments == (("FOO", "1"),)
    assert w.argv[0] == "/opt/venv/bin/python" and w.name == "python"
    (bare,) = extract_commands("FOO=bar")
    assert bare.argv == () and bare.assignments == (("FOO", "bar"),)
    assert argvs('"A=1" cmd') == [("A=1", "cmd")]


def test_nested_shell_strings_and_substitutions():
    cmds = extract_commands("bash -o pipefail -ec 'curl -fsSL x | sh -c \"pip install y\"'")
    assert [(c.argv, c.depth, c.source) for c in cmds] == [
        (("bash", "-o", "pipefail", "-ec", 'curl -fsSL x | sh -c "pip install y"'), 0, "text"),
        (("curl", "-fsSL", "x"), 1, "-c"),
        (("sh", "-c", "pip install y"), 1, "-c"),
        (("pip", "install", "y"), 2, "-c"),
    ]
    sub = extract_commands('echo "$(uv pip freeze | grep torch)" `which pip`')
    assert [(c.argv, c.depth) for c in sub] == [
        (("uv", "pip", "freeze"), 1), (("grep", "torch"), 1), (("which", "pip"), 1),
        (("echo", "$(uv pip freeze | grep torch)", "`which pip`"), 0)]
    assert argvs("bash script.sh arg") == [("bash", "script.sh", "arg")]


def test_shell_reading_a_heredoc():
    cmds = extract_commands("bash -eux <<-X\n\tpip install tabbed\n\tX\necho after\n")
    assert [(c.argv, c.line, c.depth) for c in cmds] == [
        (("bash", "-eux"), 1, 0), (("pip", "install", "tabbed"), 2, 1), (("echo", "after"), 4, 0)]
    piped = extract_commands("cat <<'EOF' | sh\nuv pip install inside\nEOF\n")
    assert ("uv", "pip", "install", "inside") in [c.argv for c in piped]
    data = extract_commands("cat <<EOF > /etc/conf\npip install not-a-command\nEOF\n")
    assert [c.argv for c in data] == [("cat",)]


def test_malformed_shell_never_raises():
    (c,) = extract_commands("echo 'unbalanced && pip install x")
    assert c.incomplete and c.argv == ("echo", "unbalanced && pip install x")
    for text in ['echo "open $(x', "a $(b `c", "${x", "cat <<EOF\nno end", "echo $'\\x", ")", "&&", "<<", "2>"]:
        extract_commands(text)


def test_work_is_bounded():
    t0 = time.perf_counter()
    cmds = extract_commands("true && " * 20000)
    assert len(cmds) <= MAX_COMMANDS + 2
    assert time.perf_counter() - t0 < 2.0
    deep = "sh -c " + shlex.quote("sh -c " + shlex.quote("sh -c " + shlex.quote("sh -c " + shlex.quote(
        "sh -c " + shlex.quote("sh -c " + shlex.quote("pip install deep"))))))
    assert max(c.depth for c in extract_commands(deep)) <= 5


# -- RUN instructions -------------------------------------------------------------------


def test_commands_in_run_lines_from_fixture():
    df = parse_dockerfile(FIXTURES / "vllm-gb10-multistage.Dockerfile")
    torch_run = df.at_line(41)
    (c,) = commands_in_run(torch_run)
    assert (c.line, c.line_offset, c.source) == (41, 1, "run")
    assert c.argv[:4] == ("uv", "pip", "install", "--index-url")
    heredoc = commands_in_run(df.at_line(52))
    assert [(x.line, x.argv[0]) for x in heredoc] == [
        (52, "set"), (53, "export"), (54, "uv"), (55, "uv"), (56, "python")]
    assert heredoc[2].exported == (("FLASHINFER_CUDA_ARCH_LIST", "${TORCH_CUDA_ARCH_LIST}"),)
    assert heredoc[2].source == "heredoc:EOF"
    vllm = commands_in_run(df.at_line(67))
    assert vllm[0].assignments == (("UV_TORCH_BACKEND", "auto"),) and vllm[0].line == 67
    assert [x.argv for x in vllm[1:]] == [("echo", "install failed"), ("exit", "1")]
    assert vllm[1].line == 69
    assert commands_in_run(df.at_line(95)) == ()  # ENTRYPOINT is not a RUN


def test_commands_in_run_forms():
    df = parse_dockerfile(FIXTURES / "heredocs.Dockerfile")
    assert [c.argv[0] for c in commands_in_run(df.at_line(8))] == ["set", "apt-get", "apt-get", "rm"]
    tabbed = commands_in_run(df.at_line(16))
    assert tabbed[0].argv == ("echo", "tab-indented body") and tabbed[0].line == 17
    bash = commands_in_run(df.at_line(49))
    assert [(c.argv[0], c.line, c.depth) for c in bash] == [
        ("bash", 49, 0), ("python3", 50, 1), ("/opt/venv/bin/pip", 51, 1), ("/opt/venv/bin/uv", 52, 1)]
    assert commands_in_run(df.at_line(56)) == ()  # a python shebang script
    assert commands_in_run(df.at_line(74))[0].argv == ("echo", "runs in child images")  # ONBUILD RUN
    forms = parse_dockerfile(FIXTURES / "json-shell-forms.Dockerfile")
    js = commands_in_run(forms.at_line(4))
    assert [(c.argv, c.source, c.depth) for c in js] == [
        (("sh", "-c", "echo exec form && uv pip install --system requests"), "json", 0),
        (("echo", "exec", "form"), "-c", 1), (("uv", "pip", "install", "--system", "requests"), "-c", 1)]
    assert commands_in_run(forms.at_line(5))[0].argv[:2] == ("pip", "install")
    crlf = parse_dockerfile(FIXTURES / "crlf-bom.Dockerfile")
    assert commands_in_run(crlf.instructions[3])[0].argv == ("echo", "crlf", "heredoc")


def test_shebang_shell_heredoc_is_parsed():
    df = parse_text("FROM a\nRUN <<EOF\n#!/bin/bash -e\nuv pip install x\nEOF\n")
    assert [c.argv[0] for c in commands_in_run(df.instructions[1])] == ["uv"]


# -- installers -------------------------------------------------------------------------


def _inst(text):
    (c,) = [c for c in extract_commands(text) if parse_install(c)]
    return parse_install(c)


@pytest.mark.parametrize(
    "text, tool, action",
    [
        ("uv pip install torch", "uv", "pip install"),
        ("uv pip sync requirements.txt", "uv", "pip sync"),
        ("uv sync --frozen", "uv", "sync"),
        ("uv add 'torch>=2.8'", "uv", "add"),
        ("uv run --with rich python x.py", "uv", "run"),
        ("uv tool install ruff", "uv", "tool install"),
        ("pip install x", "pip", "install"),
        ("pip3 install x", "pip", "install"),
        ("pip3.12 install x", "pip", "install"),
        ("python -m pip install x", "pip", "install"),
        ("python3 -m pip wheel -w /out .", "pip", "wheel"),
        ("python3.11 -u -mpip download x", "pip", "download"),
        ("/opt/venv/bin/pip install x", "pip", "install"),
        ("/opt/venv/bin/python -m pip install x", "pip", "install"),
        ("python -m uv pip install x", "uv", "pip install"),
        ("uv --no-cache -q pip install x", "uv", "pip install"),
        ("pip --no-cache-dir --timeout 60 install x", "pip", "install"),
        ("uv run -- python -m pip install x", "pip", "install"),
    ],
)
def test_installer_recognition(text, tool, action):
    inst = _inst(text)
    assert (inst.tool, inst.action) == (tool, action)


@pytest.mark.parametrize("text", ["pip list", "pip freeze", "uv venv /opt/venv", "uv pip freeze", "uv pip compile x",
                                  "python -m venv /v", "python -c 'import pip'", "pipx install x", "uvx ruff",
                                  "python script.py -m pip", "echo pip install x"])
def test_not_installers(text):
    assert all(parse_install(c) is None for c in extract_commands(text))


def test_installer_options_and_packages():
    i = _inst(
        "uv pip install -r req.txt -c cons.txt --override over.txt --index-url https://download.pytorch.org/whl/cu130 "
        "--extra-index-url=https://pypi.org/simple --torch-backend auto --no-build-isolation --system "
        "--find-links /wheels -e ./pkg 'torch==2.11.0+cu130' /tmp/vllm-0.11-cp38-abi3-linux_aarch64.whl"
    )
    assert i.requirements == ("req.txt",) and i.constraints == ("cons.txt",) and i.overrides == ("over.txt",)
    assert i.index_url == "https://download.pytorch.org/whl/cu130"
    assert i.extra_index_urls == ("https://pypi.org/simple",)
    assert i.torch_backend == "auto" and i.no_build_isolation and i.system
    assert i.find_links == ("/wheels",) and i.editables == ("./pkg",)
    assert i.packages == ("torch==2.11.0+cu130", "/tmp/vllm-0.11-cp38-abi3-linux_aarch64.whl")
    assert i.wheels == ("/tmp/vllm-0.11-cp38-abi3-linux_aarch64.whl",)
    p = _inst("pip install -Ur requirements.txt -crequirements/constraints.txt -i https://idx/simple -- -weird")
    assert p.has("--upgrade") and p.requirements == ("requirements.txt",)
    assert p.constraints == ("requirements/constraints.txt",) and p.index_url == "https://idx/simple"
    assert p.packages == ("-weird",)
    uvp = _inst("uv pip install --overrides o.txt --constraints c.txt --requirements r.txt x")
    assert (uvp.overrides, uvp.constraints, uvp.requirements) == (("o.txt",), ("c.txt",), ("r.txt",))
    run = _inst("uv run --with rich --python 3.12 pytest -q")
    assert run.run_argv == ("pytest", "-q") and run.values("--with") == ("rich",)
    sync = _inst("uv pip sync reqs.txt --python-platform aarch64-manylinux_2_28")
    assert sync.packages == ("reqs.txt",) and sync.option("--python-platform") == "aarch64-manylinux_2_28"


def test_find_installs_in_fixtures():
    df = parse_dockerfile(FIXTURES / "vllm-gb10-multistage.Dockerfile")
    found = [(i.command.line, i.tool, i.action, i.packages) for ins in df.instructions
             for i in find_installs(commands_in_run(ins))]
    assert found == [
        (41, "uv", "pip install", ("torch==${TORCH_VERSION}+cu130", "torchvision")),
        (54, "uv", "pip install", (".",)),
        (55, "uv", "pip install", ("ninja",)),
        (67, "uv", "pip install", ("/tmp/wheels/${VLLM_WHEEL}",)),
        (74, "uv", "pip install", ("pytest==8.3.3",)),
        (78, "pip", "install", ("mkdocs-material==9.5.0",)),
        (92, "uv", "pip install", ("nvidia-cublas==13.1.1.3",)),
    ]
    vllm = [i for ins in df.instructions for i in find_installs(commands_in_run(ins)) if i.command.line == 67][0]
    assert vllm.overrides == ("/tmp/overrides.txt",) and vllm.command.assignments == (("UV_TORCH_BACKEND", "auto"),)
    classic = parse_dockerfile(FIXTURES / "pip-classic.Dockerfile")
    vias = [i.via for ins in classic.instructions for i in find_installs(commands_in_run(ins))]
    assert vias == ["/opt/venv/bin/pip", "/opt/venv/bin/pip", "pip3", "python3 -m pip"]
