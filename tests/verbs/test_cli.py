"""The CLI contract: formats, --fail-on, --select/--ignore, [tool.wheeldoc], targets, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import ROOT, run_subprocess
from tests.render.test_render import report_schema, sarif_validator

STORY = "fixtures/story"


def test_story_text_exit_1(cli):
    res = cli("check", STORY)
    assert res.code == 1 and "WD101" in res.out and res.err == ""


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_machine_formats_validate(cli, fmt):
    res = cli("check", STORY, "fixtures/locks/real-index/hit-torch-lt-2.14/requirements.txt",
              "--format", fmt)
    doc = json.loads(res.out)
    if fmt == "json":
        jsonschema.Draft202012Validator(report_schema()).validate(doc)
        assert {f["rule"] for f in doc["findings"]} == {"WD101", "WD102"}
        f = next(f for f in doc["findings"] if f["rule"] == "WD101")
        assert {"package", "version", "index", "pulled_in_by"} <= set(f["data"])
    else:
        sarif_validator().validate(doc)
        assert {r["ruleId"] for r in doc["runs"][0]["results"]} == {"WD101", "WD102"}


@pytest.mark.parametrize("args,code", [
    (("--fail-on", "never"), 0), (("--fail-on", "error"), 1), (("--select", "WD103"), 0),
    (("--ignore", "WD1"), 0), (("--ignore", "WD101"), 0), (("--select", "WD1", "--ignore", "WD102"), 1),
])
def test_threshold_and_selection(cli, args, code):
    assert cli("check", STORY, *args).code == code


def test_output_file(cli, tmp_path):
    out = tmp_path / "r.json"
    res = cli("check", STORY, "--format", "json", "-o", str(out))
    assert res.code == 1 and res.out == "" and json.loads(out.read_text())["summary"]["error"] == 1


def test_pyproject_settings(cli, tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.wheeldoc]\nfail-on = "error"\nformat = "json"\n[tool.wheeldoc.severity]\nWD101 = "info"\n')
    (tmp_path / ".git").mkdir()
    res = cli("check", str(ROOT / STORY), cwd=tmp_path)
    doc = res.json()
    assert doc["findings"][0]["severity"] == "info" and res.code == 0
    (tmp_path / "pyproject.toml").write_text('[tool.wheeldoc]\nignore = ["WD1"]\n')
    assert cli("check", str(ROOT / STORY), cwd=tmp_path).code == 0
    (tmp_path / "pyproject.toml").write_text('[tool.wheeldoc]\nbogus = 1\n')
    res = cli("check", str(ROOT / STORY), cwd=tmp_path)
    assert res.code == 2 and "unknown [tool.wheeldoc] keys: bogus" in res.err


@pytest.mark.parametrize("gpu,arch,platform", [
    ("gb10", "sm_121", "linux-aarch64"), ("h200", "sm_90", None), ("sm_121", "sm_121", None),
    ("12.1", "sm_121", None), ("RTX 5090", "sm_120", None), ("b200", "sm_100", None)])
def test_gpu_target_forms(cli, gpu, arch, platform):
    doc = cli("check", STORY, "--gpu", gpu, "--format", "json").json()
    assert doc["target"]["gpu"]["arch"] == arch
    assert doc["target"]["platform"] == platform


@pytest.mark.parametrize("driver,cuda,isa", [("580.95.05", "13.0", "9.0"), ("13.0", "13.0", "9.0"),
                                             ("575.57.08", "12.9", "8.8"), ("12.8", "12.8", "8.7")])
def test_driver_target_forms(cli, driver, cuda, isa):
    doc = cli("check", STORY, "--driver", driver, "--format", "json").json()
    assert doc["target"]["driver"]["cuda"] == cuda and doc["target"]["driver"]["max_ptx_isa"] == isa


@pytest.mark.parametrize("flag,value,msg", [("--gpu", "voodoo5", "unknown GPU"),
                                            ("--driver", "abc", "cannot read driver"),
                                            ("--platform", "solaris", "unknown platform")])
def test_bad_target_is_a_usage_error(cli, flag, value, msg):
    res = cli("check", STORY, flag, value)
    assert res.code == 2 and msg in res.err and res.out == ""


def test_platform_override_beats_gpu_implied(cli):
    doc = cli("check", STORY, "--gpu", "gb10", "--platform", "linux-x86_64", "--format", "json").json()
    assert doc["target"]["platform"] == "linux-x86_64"


@pytest.mark.parametrize("name", ["truncated-uv.lock", "binary-garbage.txt", "requirements-random.txt"])
def test_broken_inputs_one_line_exit_2(name):
    res = run_subprocess("check", f"fixtures/broken/{name}")
    assert res.code == 2
    assert "Traceback" not in res.err
    errors = [line for line in res.err.splitlines() if line.startswith("wheeldoc: error:")]
    assert len(errors) == 1 and f"fixtures/broken/{name}:" in errors[0]


def test_missing_file_and_mixed_inputs(cli):
    res = cli("check", "no/such/uv.lock", STORY, "--format", "json")
    assert res.code == 2  # an unreadable input wins over findings
    rules = [f["rule"] for f in res.json()["findings"]]
    assert "WD001" in rules and "WD101" in rules  # the readable input is still analyzed


def test_huge_lock_is_refused_quickly(tmp_path):
    import time

    big = tmp_path / "uv.lock"
    line = '[[package]]\nname = "x"\nversion = "1.0"\n' * 1
    with big.open("w") as f:
        f.write("version = 1\n")
        while f.tell() < 50 * 1024 * 1024:
            f.write(line * 10000)
    t = time.perf_counter()
    res = run_subprocess("check", str(big))
    assert time.perf_counter() - t < 5
    assert res.code == 2 and "limit" in res.err and "Traceback" not in res.err


def test_version_and_help():
    assert run_subprocess("--version").out.startswith("wheeldoc ")
    res = run_subprocess()
    assert res.code == 2 and "check" in res.out
