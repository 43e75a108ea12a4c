"""SARIF 2.1.0 output, validated against the official OASIS schema in the tests."""

from __future__ import annotations

import json
from typing import Any

from wheeldoc import __version__
from wheeldoc.core.model import Finding, Report, Severity
from wheeldoc.core.registry import get_rule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
INFO_URI = "https://github.com/wheeldoc/wheeldoc"


def _rule_descriptor(code: str) -> dict[str, Any]:
    rule = get_rule(code)
    if rule is None:
        return {"id": code}
    first = rule.doc.split("## Why is this bad?")[0].replace("## What it does", "").strip()
    return {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": first or rule.title},
        "help": {"text": rule.doc or rule.title, "markdown": rule.doc or rule.title},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"family": rule.family, "fix": rule.fix_applicability},
    }


def _replacement(e) -> dict[str, Any]:
    if e.action == "replace":
        region = {"startLine": e.line, "endLine": e.end_line or e.line}
        text = e.content + "\n"
    else:  # an insertion point at the start of the next line
        region = {"startLine": e.line + 1, "startColumn": 1, "endLine": e.line + 1, "endColumn": 1}
        text = e.content + "\n"
    return {"deletedRegion": region, "insertedContent": {"text": text}}


def _result(f: Finding, index: int) -> dict[str, Any]:
    text = f.message
    if f.fix is not None:
        text += f"\nFix: {f.fix.title}"
        if f.fix.command:
            text += f"\n  {f.fix.command}"
    region: dict[str, Any] = {}
    if f.location.line:
        region["startLine"] = f.location.line
        if f.location.end_line and f.location.end_line >= f.location.line:
            region["endLine"] = f.location.end_line
    physical: dict[str, Any] = {"artifactLocation": {"uri": f.location.path}}
    if region:
        physical["region"] = region
    location: dict[str, Any] = {"physicalLocation": physical}
    logical = [
        {"name": name, "kind": kind}
        for name, kind in ((f.location.member, "module"), (f.location.section, "member"),
                           (f.location.symbol, "function"))
        if name
    ]
    if logical:
        location["logicalLocations"] = logical
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index,
        "level": LEVELS[f.severity],
        "message": {"text": text},
        "locations": [location],
        "properties": {"evidence": list(f.evidence), "data": dict(f.data)},
    }
    edits = f.fix.edits if f.fix else ()
    if edits:
        by_path: dict[str, list] = {}
        for e in edits:
            by_path.setdefault(e.path, []).append(_replacement(e))
        result["fixes"] = [{
            "description": {"text": f.fix.title},
            "artifactChanges": [{"artifactLocation": {"uri": p}, "replacements": reps}
                                for p, reps in by_path.items()],
        }]
    return result


def render(report: Report, fail_on: str) -> str:
    codes = sorted({f.rule for f in report.findings})
    index = {c: i for i, c in enumerate(codes)}
    run = {
        "tool": {"driver": {
            "name": "wheeldoc",
            "version": __version__,
            "informationUri": INFO_URI,
            "rules": [_rule_descriptor(c) for c in codes],
        }},
        "results": [_result(f, index[f.rule]) for f in report.findings],
        "properties": {"command": report.command, "target": dict(report.target)},
    }
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, default=str) + "\n"
