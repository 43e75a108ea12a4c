"""JSON output: versioned, and checked against `wheeldoc/render/report.schema.json` in the tests."""

from __future__ import annotations

import json
from typing import Any

from wheeldoc import __version__
from wheeldoc.engine import exit_code
from wheeldoc.model import Finding, Fix, Report

SCHEMA_VERSION = 1


def fix_to_dict(fix: Fix | None) -> dict[str, Any] | None:
    if fix is None:
        return None
    return {
        "title": fix.title,
        "applicability": fix.applicability,
        "command": fix.command,
        "text": fix.text,
        "edits": [
            {"path": e.path, "line": e.line, "end_line": e.end_line, "action": e.action,
             "content": e.content}
            for e in fix.edits
        ],
    }


def finding_to_dict(f: Finding) -> dict[str, Any]:
    loc = f.location
    return {
        "rule": f.rule,
        "title": f.title,
        "severity": f.severity.label,
        "path": loc.path,
        "line": loc.line,
        "end_line": loc.end_line,
        "member": loc.member,
        "section": loc.section,
        "symbol": loc.symbol,
        "message": f.message,
        "evidence": list(f.evidence),
        "fix": fix_to_dict(f.fix),
        "data": dict(f.data),
    }


def report_to_dict(report: Report, fail_on: str) -> dict[str, Any]:
    counts = report.counts()
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "wheeldoc", "version": __version__},
        "command": report.command,
        "target": dict(report.target),
        "inputs": list(report.inputs),
        "findings": [finding_to_dict(f) for f in report.findings],
        "skipped": [{"path": s.path, "member": s.member, "reason": s.reason} for s in report.skipped],
        "summary": {
            **counts,
            "total": len(report.findings),
            "skipped": len(report.skipped),
            "fail_on": fail_on,
            "exit_code": exit_code(report, fail_on),
        },
    }
    out.update(report.extra)
    return out


def render(report: Report, fail_on: str) -> str:
    return json.dumps(report_to_dict(report, fail_on), indent=2, sort_keys=False, default=str) + "\n"
