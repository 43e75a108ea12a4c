"""--output-format (full, concise, json, sarif, github; --format its alias), --statistics,
--quiet, --exit-zero, `output-format` in [tool.wheeldoc], and the pre-commit hooks' default."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import ROOT
from tests.render.test_render import report_schema, sarif_validator

STORY = "fixtures/story"  # one WD101 error (requirements.txt:19)
DOCKER = "fixtures/dockerfiles/rules/wd401-story.Dockerfile"  # one WD401 warning with a safe fix
CLEAN = "fixtures/locks/clean/ok-uv-project-cu130"
CONCISE = re.compile(r"^(?P<path>[^\s:]+)(:(?P<line>\d+):1)?: (?P<code>WD\d{3}) (?P<sev>error|warning|info): "
                     r"(?P<fix>\[\*\] )?(?P<msg>\S.*)$")


@pytest.fixture(autouse=True)
def _no_terminal(monkeypatch):
    for name in ("COLUMNS", "NO_COLOR", "FORCE_COLOR"):
        monkeypatch.delenv(name, raising=False)


def test_format_alias_and_full_are_the_same_report(cli):
    full = cli("check", STORY, "--output-format", "full")
    assert full.code == 1 and "requirements.txt:19: WD101 error" in full.out
    assert cli("check", STORY, "--format", "text").out == full.out
    assert cli("check", STORY, "--format", "full").out == full.out
    assert cli("check", STORY).out == full.out  # the default


def test_old_format_values_still_work(cli):
    for fmt in ("json", "sarif"):
        assert cli("check", STORY, "--format", fmt).out == cli("check", STORY, "--output-format", fmt).out


def test_text_is_not_an_output_format_value():
    """`text` is --format's old spelling; --output-format only knows the documented names."""
    from wheeldoc.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["check", STORY, "--output-format", "text"])


def test_concise_one_line_per_finding(cli):
    res = cli("check", STORY, DOCKER, "--output-format", "concise")
    lines = res.out.splitlines()
    assert res.code == 1
    assert lines[-1] == "Found 2 findings (1 error, 1 warning) in 2 inputs."
    parsed = [CONCISE.match(line) for line in lines[:-1]]
    assert all(parsed), lines
    got = {(m["path"], m["line"], m["code"], m["sev"], bool(m["fix"])) for m in parsed}
    assert got == {("fixtures/story/requirements.txt", "19", "WD101", "error", False),
                   (DOCKER, "14", "WD401", "warning", True)}  # [*]: check --fix applies it


def test_concise_without_a_line_has_no_line_number(cli, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    res = cli("check", str(empty), "--output-format", "concise")
    assert res.out.splitlines()[0] == (f"{empty}: WD002 warning: skipped: no lockfile "
                                       "or Dockerfile in this directory or below it")


def test_concise_joins_a_multiline_message():
    from wheeldoc.core.model import Finding, Location, Report, Severity
    from wheeldoc.render.concise import render_concise

    r = Report("check", {}, inputs=["a"])
    r.findings.append(Finding("WD101", "t", Severity.ERROR, Location("a", 3), "first\n  second\n\nthird"))
    assert render_concise(r, quiet=True) == "a:3:1: WD101 error: first second third\n"


def test_github_workflow_commands(cli):
    res = cli("check", STORY, DOCKER, "--output-format", "github")
    lines = res.out.splitlines()
    assert res.code == 1 and len(lines) == 2
    assert lines[0].startswith(f"::warning file={DOCKER},line=14,title=WD401 a variable set in another stage")
    assert lines[1].startswith("::error file=fixtures/story/requirements.txt,line=19,title=WD101 torch "
                               "resolved to a CPU-only build::torch 2.10.0+cpu is a CPU-only build")
    assert "%0AFix: Add `ENV UV_HTTP_TIMEOUT=600`" in lines[0]


def test_github_escaping_matches_actions_toolkit():
    """@actions/core: data escapes % CR LF; properties also : and , (so a title cannot end
    the property list or the command early)."""
    from wheeldoc.core.model import Finding, Fix, Location, Severity
    from wheeldoc.render.concise import github_line

    f = Finding("WD402", "a: b, c", Severity.INFO, Location("dir,x/a:b%.txt", 2, end_line=4),
                "50% done\r\nnext: line, more", fix=Fix("Do it"))
    assert github_line(f) == ("::notice file=dir%2Cx/a%3Ab%25.txt,line=2,endLine=4,title=WD402 a%3A b%2C c"
                              "::50%25 done%0D%0Anext: line, more%0AFix: Do it")


@pytest.mark.parametrize("fmt", ["full", "concise"])
def test_statistics_text(cli, fmt):
    res = cli("check", STORY, DOCKER, "--output-format", fmt, "--statistics")
    assert res.code == 1
    lines = [line for line in res.out.splitlines() if line]
    assert lines == ["1  WD101  error    cpu-torch", "1  WD401  warning  [*] stage-env-gap",
                     "Found 2 findings (1 error, 1 warning) in 2 inputs."]


def test_statistics_json_validates(cli):
    doc = cli("check", STORY, DOCKER, "--output-format", "json", "--statistics").json()
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    assert doc["statistics"] == [
        {"code": "WD101", "name": "cpu-torch", "severity": "error", "count": 1, "fixable": 0},
        {"code": "WD401", "name": "stage-env-gap", "severity": "warning", "count": 1, "fixable": 1}]
    bad = dict(doc, statistics=[{"code": "WD101", "count": 0}])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(report_schema()).validate(bad)


@pytest.mark.parametrize("fmt", ["sarif", "github"])
def test_statistics_elsewhere_is_a_usage_error(cli, fmt):
    res = cli("check", STORY, "--output-format", fmt, "--statistics")
    assert res.code == 2 and "--statistics works with" in res.err and res.out == ""


@pytest.mark.parametrize("fmt", ["full", "concise", "github"])
def test_quiet_prints_nothing_on_success(cli, fmt):
    res = cli("check", CLEAN, "--output-format", fmt, "--quiet")
    assert res.code == 0 and res.out == "" and res.err == ""
    assert cli("check", CLEAN, "--output-format", fmt).code == 0


def test_quiet_prints_only_findings(cli):
    concise = cli("check", STORY, "--output-format", "concise", "-q")
    assert concise.out.count("\n") == 1 and "Found" not in concise.out and concise.code == 1
    full = cli("check", STORY, "-q")
    assert "WD101" in full.out and "Found" not in full.out


def test_quiet_leaves_machine_formats_whole(cli):
    assert cli("check", STORY, "--format", "json", "-q").out == cli("check", STORY, "--format", "json").out


def test_exit_zero(cli, tmp_path):
    res = cli("check", STORY, "--exit-zero", "--output-format", "json")
    assert res.code == 0 and res.json()["summary"]["exit_code"] == 0 and res.json()["summary"]["error"] == 1
    # an input error is not a finding: still 2
    assert cli("check", str(tmp_path / "missing.lock"), "--exit-zero").code == 2


def test_flags_on_every_verb():
    from wheeldoc.cli import build_parser

    parser = build_parser()
    for verb, argv in (("check", ["x"]), ("abi", ["x"]), ("kernels", ["x"]), ("doctor", []), ("image", ["x"])):
        ns = parser.parse_args([verb, *argv, "--output-format", "github", "--statistics", "-q", "--exit-zero"])
        assert (ns.format, ns.statistics, ns.quiet, ns.exit_zero) == ("github", True, True, True), verb


def test_output_format_in_pyproject(cli, tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.wheeldoc]\noutput-format = "concise"\n')
    res = cli("check", str(ROOT / STORY), cwd=tmp_path)
    assert CONCISE.match(res.out.splitlines()[0]) and res.code == 1
    (tmp_path / "pyproject.toml").write_text('[tool.wheeldoc]\noutput-format = "full"\n')
    assert "WD101 error torch" in cli("check", str(ROOT / STORY), cwd=tmp_path).out
    (tmp_path / "pyproject.toml").write_text('[tool.wheeldoc]\noutput-format = "fancy"\n')
    res = cli("check", str(ROOT / STORY), cwd=tmp_path)
    assert res.code == 2 and "unknown output format 'fancy'" in res.err
    # the flag beats the file
    (tmp_path / "pyproject.toml").write_text('[tool.wheeldoc]\noutput-format = "concise"\n')
    assert cli("check", str(ROOT / STORY), "--output-format", "json", cwd=tmp_path).json()["command"] == "check"


def test_sarif_still_validates_with_the_new_flags(cli):
    sarif_validator().validate(json.loads(cli("check", STORY, DOCKER, "--output-format", "sarif", "-q").out))


def test_precommit_hooks_default_to_concise():
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    entries = re.findall(r"^  entry: (.*)$", text, re.M)
    assert entries and all(e == "wheeldoc check --output-format concise" for e in entries)
