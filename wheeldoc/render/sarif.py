"""SARIF 2.1.0 output, validated against the official OASIS schema in the tests.

- Paths under the working directory are relative URIs with `uriBaseId: %SRCROOT%`
  (`run.originalUriBaseIds` gives the directory); others are absolute `file://` URIs.
- `partialFingerprints["wheeldoc/v1"]`: sha256 of the rule, the path, member and symbol, and the
  message and evidence with line references taken out, so an alert survives its lines moving.
- `helpUri`: the rule's page under docs/rules/ (`RULE_DOCS_URL`), written from the registry by
  scripts/make_rule_docs.py.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from wheeldoc import __version__
from wheeldoc.core.model import Finding, Report, Severity
from wheeldoc.core.registry import get_rule

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
INFO_URI = "https://github.com/wheeldoc/wheeldoc"
# The rule pages, docs/rules/WD301.md, as GitHub shows them from the default branch: the one
# place that names where they live (docs/output.md explains it).
RULE_DOCS_URL = INFO_URI + "/blob/main/docs/rules/{code}.md"
SRCROOT = "%SRCROOT%"
FINGERPRINT = "wheeldoc/v1"
_LINE_REFS = re.compile(r"\b(lines?)\s+\d+(?:\s*(?:-|–|to|and)\s*\d+)*", re.I)


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
        "helpUri": RULE_DOCS_URL.format(code=code),
        "help": {"text": rule.doc or rule.title, "markdown": rule.doc or rule.title},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"family": rule.family, "fix": rule.fix_applicability},
    }


def artifact_location(path: str, root: Path) -> dict[str, Any]:
    """A path as a SARIF artifactLocation: relative to %SRCROOT% (the working directory) when it
    lies under it, else an absolute file:// URI."""
    p = Path(path)
    full = p if p.is_absolute() else root / p
    try:
        rel = PurePosixPath(Path(os.path.normpath(full)).relative_to(root))
    except ValueError:
        return {"uri": Path(os.path.normpath(full)).as_uri()}
    return {"uri": quote(os.fsencode(str(rel)), safe="/"), "uriBaseId": SRCROOT}  # bytes: any file name


def fingerprint(f: Finding, uri: str) -> str:
    """Stable across runs and line moves: what the finding says, not where its lines are.
    `uri`: the path as SARIF writes it (`./Dockerfile` and `Dockerfile` are one file)."""
    loc = f.location
    said = [_LINE_REFS.sub(lambda m: m.group(1) + " #", t) for t in (f.message, *f.evidence)]
    key = "\0".join([f.rule, uri, loc.member or "", loc.section or "", loc.symbol or "", *said])
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def _replacement(e) -> dict[str, Any]:
    if e.action == "replace":
        region = {"startLine": e.line, "endLine": e.end_line or e.line}
        text = e.content + "\n"
    else:  # an insertion point at the start of the next line
        region = {"startLine": e.line + 1, "startColumn": 1, "endLine": e.line + 1, "endColumn": 1}
        text = e.content + "\n"
    return {"deletedRegion": region, "insertedContent": {"text": text}}


def _result(f: Finding, index: int, root: Path) -> dict[str, Any]:
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
    artifact = artifact_location(f.location.path, root)
    physical: dict[str, Any] = {"artifactLocation": artifact}
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
        "partialFingerprints": {FINGERPRINT: fingerprint(f, artifact["uri"])},
        "properties": {"evidence": list(f.evidence), "data": dict(f.data)},
    }
    edits = f.fix.edits if f.fix else ()
    if edits:
        by_path: dict[str, list] = {}
        for e in edits:
            by_path.setdefault(e.path, []).append(_replacement(e))
        result["fixes"] = [{
            "description": {"text": f.fix.title},
            "artifactChanges": [{"artifactLocation": artifact_location(p, root), "replacements": reps}
                                for p, reps in by_path.items()],
        }]
    return result


def render(report: Report, fail_on: str, root: Path | None = None) -> str:
    """`root`: the directory %SRCROOT% stands for (default: the working directory)."""
    root = Path(os.path.abspath(root or os.getcwd()))
    codes = sorted({f.rule for f in report.findings})
    index = {c: i for i, c in enumerate(codes)}
    run = {
        "tool": {"driver": {
            "name": "wheeldoc",
            "version": __version__,
            "informationUri": INFO_URI,
            "rules": [_rule_descriptor(c) for c in codes],
        }},
        "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri() + "/"}},
        "results": [_result(f, index[f.rule], root) for f in report.findings],
        "properties": {"command": report.command, "target": dict(report.target)},
    }
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(doc, indent=2, default=str) + "\n"
