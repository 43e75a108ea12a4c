"""JSON against the committed schema; SARIF against the official OASIS SARIF 2.1.0 schema."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from wheeldoc.core.model import Edit, Finding, Fix, Location, Report, Severity
from wheeldoc.render import json as render_json
from wheeldoc.render import sarif as render_sarif
from wheeldoc.render import text as render_text

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"


def report_schema() -> dict:
    return json.loads(resources.files("wheeldoc.render").joinpath("report.schema.json").read_text())


def sarif_validator() -> jsonschema.Validator:
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text())
    return jsonschema.Draft4Validator(schema)


def sample_report() -> Report:
    r = Report("check", {"platform": "linux-x86_64", "gpu": None, "driver": None, "python": None,
                         "source": "flags"}, inputs=["requirements.lock", "Dockerfile"])
    r.findings.append(Finding(
        "WD101", "torch resolved to a CPU-only build", Severity.ERROR, Location("requirements.lock", 7),
        "torch 2.10.0+cpu is a CPU-only build", ("via flashinfer-python",),
        Fix("Write overrides.txt", "display-only", command="uv pip compile --override overrides.txt",
            text="torch==2.11.0+cu130\n"),
        {"package": "torch", "version": "2.10.0+cpu", "index": None, "pulled_in_by": ["flashinfer-python"]}))
    r.findings.append(Finding(
        "WD102", "mixed", Severity.WARNING, Location("Dockerfile", 3, end_line=4),
        "an edit", (), Fix("Insert ENV", "safe", edits=(Edit("Dockerfile", 3, "ENV A=1"),
                                                        Edit("Dockerfile", 4, "ENV B=1", "replace", 4)))))
    r.findings.append(Finding("WD001", "input could not be read", Severity.INFO,
                              Location("x.whl", None, member="a/b.so", section=".nv_fatbin", symbol="_Z1fv"),
                              "bad"))
    return r


def test_json_output_validates_against_committed_schema():
    doc = json.loads(render_json.render(sample_report(), "warning"))
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    assert doc["schema_version"] == 1
    assert doc["findings"][0]["data"]["pulled_in_by"] == ["flashinfer-python"]
    assert doc["summary"] == {"error": 1, "warning": 1, "info": 1, "total": 3, "skipped": 0,
                              "fail_on": "warning", "exit_code": 1}


def test_schema_rejects_a_broken_report():
    doc = json.loads(render_json.render(sample_report(), "warning"))
    del doc["findings"][0]["rule"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(report_schema()).validate(doc)


def test_sarif_validates_against_official_schema():
    doc = json.loads(render_sarif.render(sample_report(), "warning"))
    sarif_validator().validate(doc)
    run = doc["runs"][0]
    assert [r["ruleId"] for r in run["results"]] == ["WD101", "WD102", "WD001"]
    assert run["results"][1]["fixes"][0]["artifactChanges"][0]["replacements"][1]["deletedRegion"]["startLine"] == 4
    assert run["results"][0]["level"] == "error" and run["results"][2]["level"] == "note"


def test_sarif_schema_catches_a_wrong_level():
    doc = json.loads(render_sarif.render(sample_report(), "warning"))
    doc["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        sarif_validator().validate(doc)


def test_text_shows_fix_and_summary():
    out = render_text.render(sample_report(), "warning", color=False)
    colored = render_text.render(sample_report(), "warning", color=True)
    assert "\x1b[" in colored and "WD101" in colored
    assert "requirements.lock:7: WD101 error" in out
    assert "torch==2.11.0+cu130" in out and "$ uv pip compile --override overrides.txt" in out
    assert "Found 3 findings (1 error, 1 warning, 1 info) in 2 inputs." in out
