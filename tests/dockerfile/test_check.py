"""`wheeldoc check Dockerfile`: --fix / --diff, suppression pragmas, JSON schema, bad input,
the reference Dockerfiles, and parser parity with BuildKit's Go parser on every WD4 fixture."""

from __future__ import annotations

import json
import os
import shutil
import stat
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from wheeldoc.dockerfile.command import apply_edits
from wheeldoc.core.model import Edit
from wheeldoc.dockerfile.parser import parse_dockerfile

from tests.conftest import run_subprocess

ROOT = Path(__file__).resolve().parents[2]
D = ROOT / "fixtures" / "dockerfiles"
R = D / "rules"
REFERENCE = ROOT / "dockerfiles"
ALL_NEW = sorted(R.glob("*.Dockerfile")) + sorted(REFERENCE.glob("*.Dockerfile"))


def schema_validate(doc: dict) -> None:
    schema = json.loads(resources.files("wheeldoc.render").joinpath("report.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)


def copy_fixture(tmp_path: Path, *names: str) -> list[Path]:
    out = []
    for n in names:
        dst = tmp_path / Path(n).name
        shutil.copy(R / n if (R / n).exists() else D / n, dst)
        out.append(dst)
    return out


# -- --diff and --fix ----------------------------------------------------------------------------


def test_diff_shows_safe_edits_and_changes_nothing(cli, tmp_path):
    (path,) = copy_fixture(tmp_path, "wd401-story.Dockerfile")
    before = path.read_bytes()
    res = cli("check", str(path), "--diff")
    assert res.code == 1
    assert f"+++ b/{str(path).lstrip('/')}" in res.out
    assert "\n+ENV UV_HTTP_TIMEOUT=600\n" in res.out
    assert path.read_bytes() == before
    doc = cli("check", str(path), "--diff", "--format", "json").json()
    schema_validate(doc)
    assert doc["diff"][0]["path"] == str(path) and "+ENV UV_HTTP_TIMEOUT=600" in doc["diff"][0]["diff"]
    assert path.read_bytes() == before


def test_fix_applies_safe_edits_and_recheck_is_clean(cli, tmp_path):
    paths = copy_fixture(tmp_path, "wd401-story.Dockerfile", "wd402-global-arg.Dockerfile",
                         "wd401-global-arg.Dockerfile")
    codes = {p: sorted(f["rule"] for f in cli("check", str(p), "--format", "json").json()["findings"])
             for p in paths}
    assert codes[paths[0]] == ["WD401"] and codes[paths[1]] == ["WD402"] * 3 and codes[paths[2]] == ["WD401"] * 2
    os.chmod(paths[0], 0o640)
    res = cli("check", str(tmp_path), "--fix", "--format", "json")
    doc = res.json()
    schema_validate(doc)
    assert res.code == 0 and doc["findings"] == []
    assert len(doc["fixed"]) == 6 and all(f["resolved"] for f in doc["fixed"])
    story = paths[0].read_text().splitlines()
    assert story[10:12] == ["FROM nvidia/cuda:13.0.1-runtime-ubuntu24.04 AS runner", "ENV UV_HTTP_TIMEOUT=600"]
    assert stat.S_IMODE(os.stat(paths[0]).st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)  # no temp file left
    # a second run changes nothing and finds nothing
    texts = [p.read_bytes() for p in paths]
    again = cli("check", str(tmp_path), "--fix")
    assert again.code == 0 and "No findings in 3 inputs" in again.out
    assert [p.read_bytes() for p in paths] == texts
    parse_dockerfile(paths[1])  # still a valid Dockerfile


def test_fix_leaves_unsafe_and_suppressed_findings(cli, tmp_path):
    paths = copy_fixture(tmp_path, "wd404-auto.Dockerfile", "wd401-suppressed.Dockerfile")
    before = [p.read_bytes() for p in paths]
    res = cli("check", *map(str, paths), "--fix", "--format", "json")
    assert [p.read_bytes() for p in paths] == before
    assert sorted(f["rule"] for f in res.json()["findings"]) == ["WD404", "WD404"]
    assert "fixed" not in res.json()


def test_fix_writes_through_a_symlink(cli, tmp_path):
    (real,) = copy_fixture(tmp_path, "wd401-story.Dockerfile")
    link = tmp_path / "Dockerfile"
    link.symlink_to(real.name)
    assert cli("check", str(link), "--fix").code == 0
    assert link.is_symlink() and "ENV UV_HTTP_TIMEOUT=600" in real.read_text()


def test_fix_that_cannot_be_written_is_an_input_error(cli, tmp_path, monkeypatch):
    (path,) = copy_fixture(tmp_path, "wd401-story.Dockerfile")
    before = path.read_bytes()

    def refuse(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)  # the rename step fails (read-only folder, full disk)
    res = cli("check", str(path), "--fix")
    assert res.code == 2 and "cannot write the fixes: Permission denied" in res.err
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == [path.name]


def test_fix_text_output_lists_what_it_fixed(cli, tmp_path):
    (path,) = copy_fixture(tmp_path, "wd401-story.Dockerfile")
    res = cli("check", str(path), "--fix")
    assert res.code == 0
    assert "Fixed 1 finding in 1 file:" in res.out and "WD401 Add `ENV UV_HTTP_TIMEOUT=600`" in res.out


def test_fix_keeps_bom_and_crlf(cli, tmp_path):
    text = "\ufeffFROM python:3.12 AS a\r\nENV PIP_DEFAULT_TIMEOUT=120\r\nFROM python:3.12 AS b\r\n" \
           "RUN pip install requests\r\n"
    path = tmp_path / "Dockerfile"
    path.write_bytes(text.encode())
    assert cli("check", str(path), "--fix").code == 0
    assert path.read_bytes() == ("\ufeffFROM python:3.12 AS a\r\nENV PIP_DEFAULT_TIMEOUT=120\r\n"
                                 "FROM python:3.12 AS b\r\nENV PIP_DEFAULT_TIMEOUT=120\r\n"
                                 "RUN pip install requests\r\n").encode()


def test_apply_edits_orders_dedupes_and_handles_no_final_newline():
    text = "A\nB\nC"
    edits = [Edit("f", 3, "Z"), Edit("f", 1, "X"), Edit("f", 1, "Y"), Edit("f", 1, "X"),
             Edit("f", 2, "b", action="replace", end_line=2), Edit("f", 2, "ignored", action="replace", end_line=2)]
    assert apply_edits(text, edits) == "A\nX\nY\nb\nC\nZ"
    assert apply_edits("A\n", [Edit("f", 1, "X")]) == "A\nX\n"


def test_multi_line_from_and_heredoc_stage(cli, tmp_path):
    path = tmp_path / "Dockerfile"
    path.write_text("FROM python:3.12 AS a\nENV UV_HTTP_TIMEOUT=300\nFROM \\\n  python:3.12 \\\n  AS b\n"
                    "RUN <<EOF\nuv pip install --system requests\nEOF\n")
    res = cli("check", str(path), "--fix")
    assert res.code == 0, res.out
    assert path.read_text().splitlines()[5] == "ENV UV_HTTP_TIMEOUT=300"


def test_wd4_runner_is_the_registry_family():
    from wheeldoc.dockerfile.command import wd4_rules
    from wheeldoc.core.registry import family_rules

    assert [r.code for r in wd4_rules()] == [r.code for r in family_rules("WD4")]


def test_dockerfile_path_imports_stay_light():
    """The pre-commit path never imports packaging, rich, pyelftools or other rule families."""
    code = ("import sys, io; from wheeldoc.cli import main; sys.stdout = io.StringIO(); "
            f"main(['check', {str(D / 'vllm-gb10-multistage.Dockerfile')!r}]); sys.stdout = sys.__stdout__; "
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in ('packaging', 'rich', 'elftools') "
            "or (m.startswith('wheeldoc.') and m.endswith(('.rules', '.fixes', '_rules'))) "
            "or m.startswith(('wheeldoc.lockfile.source', 'wheeldoc.lockfile.facts')))))")
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT).stdout.split()
    assert out == ["wheeldoc.dockerfile.fixes", "wheeldoc.dockerfile.rules"]


# -- suppression, exit codes, bad input ------------------------------------------------------------


def test_pragma_on_the_line_above_and_between_continuations(cli, tmp_path):
    path = tmp_path / "Dockerfile"
    path.write_text("FROM python:3.12 AS a\nENV UV_HTTP_TIMEOUT=300 PIP_RETRIES=9\nFROM python:3.12 AS b\n"
                    "RUN uv pip install --system requests \\\n  # wheeldoc: ignore=WD401\n  && true\n"
                    "# wheeldoc: ignore=WD402\nRUN pip install requests\n")
    findings = cli("check", str(path), "--format", "json").json()["findings"]
    assert [(f["rule"], f["line"], f["data"]["variable"]) for f in findings] == [("WD401", 8, "PIP_RETRIES")]


def test_ignore_and_select_flags(cli):
    path = str(R / "wd401-story.Dockerfile")
    assert cli("check", path, "--ignore", "WD401").code == 0
    assert cli("check", path, "--select", "WD402").code == 0
    assert cli("check", path, "--fail-on", "error").code == 0
    assert cli("check", path).code == 1


@pytest.mark.parametrize("name, needle", [
    ("unterminated-heredoc.Dockerfile", "unterminated heredoc"),
    ("long-line.Dockerfile", "over BuildKit's limit"),
    ("binary.Dockerfile", "binary data"),
])
def test_malformed_dockerfiles_exit_2_with_a_message(cli, name, needle):
    res = cli("check", str(D / "malformed" / name), "--format", "json")
    assert res.code == 2
    doc = res.json()
    schema_validate(doc)
    assert doc["findings"][0]["rule"] == "WD001" and needle in doc["findings"][0]["message"]
    assert "Traceback" not in res.err and needle in res.err


def test_directory_detection_picks_dockerfile_names(cli, tmp_path):
    for name in ("Dockerfile", "Containerfile", "prod.dockerfile", "Dockerfile.dev"):
        shutil.copy(R / "wd401-story.Dockerfile", tmp_path / name)
    doc = cli("check", str(tmp_path), "--format", "json").json()
    assert len(doc["inputs"]) == 4 and {f["rule"] for f in doc["findings"]} == {"WD401"}


def test_sarif_output(cli):
    res = cli("check", str(R / "wd401-story.Dockerfile"), "--format", "sarif")
    run = json.loads(res.out)["runs"][0]
    assert run["results"][0]["ruleId"] == "WD401"


def test_real_interpreter(tmp_path):
    res = run_subprocess("check", str(R / "wd401-story.Dockerfile"))
    assert res.code == 1 and "WD401" in res.out


def test_golden_text_output(cli):
    """The text report on the story and the vLLM fixture, byte for byte
    (regenerate: WHEELDOC_UPDATE_GOLDEN=1)."""
    golden = ROOT / "tests" / "golden" / "dockerfile-check.txt"
    res = cli("check", "fixtures/dockerfiles/rules/wd401-story.Dockerfile",
              "fixtures/dockerfiles/vllm-gb10-multistage.Dockerfile", "--gpu", "gb10", "--driver", "580.95.05",
              "--color", "never")
    if os.environ.get("WHEELDOC_UPDATE_GOLDEN"):
        golden.write_text(res.out)
    assert res.code == 1
    assert res.out == golden.read_text()


# -- the reference Dockerfiles --------------------------------------------------------------------


@pytest.mark.parametrize("name, flags", [
    ("vllm-gb10.Dockerfile", ("--gpu", "gb10", "--driver", "580.95.05")),
    ("vllm-gb10.Dockerfile", ()),
    ("wheeldoc.Dockerfile", ()),
    ("wheeldoc.Dockerfile", ("--gpu", "h100", "--driver", "575.57.08")),
])
def test_reference_dockerfiles_lint_clean(cli, name, flags):
    res = cli("check", str(REFERENCE / name), *flags, "--fail-on", "info")
    assert res.code == 0, res.out


def test_reference_vllm_applies_every_lesson():
    from wheeldoc.dockerfile.facts import DockerFacts
    from wheeldoc.dockerfile.stages import analyze

    df = parse_dockerfile(REFERENCE / "vllm-gb10.Dockerfile")
    facts = DockerFacts(df, analyze(df))
    downloading = {s.stage.label for s in facts.steps if s.install is not None and s.network}
    assert {"torch", "vllm", "runner"} <= downloading
    for s in facts.steps:
        if s.install is not None and s.network and s.tool == "uv":
            assert facts.var(s, "UV_HTTP_TIMEOUT").value == "600", s.stage.label
            assert facts.var(s, "UV_TORCH_BACKEND").value == "cu130"
            assert any(t.kind == "override" and t.variant == "cu130" for t in facts.torch_sources(s))
    assert all(facts.platform(st) == "aarch64" for st in facts.graph.stages)
    fi = facts.graph.stage("flashinfer-build")
    assert facts.graph.final_scope(fi).vars["TORCH_CUDA_ARCH_LIST"].value == "12.1a"
    assert facts.base_cuda(facts.graph.stage("runner"))[0] == (13, 0)


# -- parser parity with BuildKit's Go parser on the WD4 fixtures and the reference files -----------


@pytest.mark.parametrize("path", ALL_NEW, ids=lambda p: p.name)
def test_parity_with_go_parser(path):
    oracle = pytest.importorskip("dockerfile", reason="the Go parser binding has Linux x86_64 wheels only")
    ours = parse_dockerfile(path)
    theirs = oracle.parse_file(str(path))
    assert len(ours.instructions) == len(theirs)
    for a, b in zip(ours.instructions, theirs):
        t = a.trigger
        assert (a.written, a.start_line, a.end_line, tuple(f.raw for f in a.flags)) == \
            (b.cmd, b.start_line, b.end_line, tuple(b.flags))
        assert (t.value, t.json) == (tuple(b.value), b.json)
        if a.heredocs and a.sub is None:
            assert tuple((h.name, h.raw_body) for h in a.heredocs) == tuple((h.name, h.content) for h in b.heredocs)
