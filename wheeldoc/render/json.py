"""JSON output: versioned, and checked against `wheeldoc/render/report.schema.json` in the tests."""

from __future__ import annotations

from typing import Any

from wheeldoc import __version__
from wheeldoc.core.engine import exit_code
from wheeldoc.core.model import Report, finding_to_dict
from wheeldoc.render.jsontext import dumps

SCHEMA_VERSION = 1


def report_to_dict(report: Report, fail_on: str, exit_code_: int | None = None) -> dict[str, Any]:
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
            "exit_code": exit_code(report, fail_on) if exit_code_ is None else exit_code_,
        },
    }
    out.update(report.extra)
    return out


def render(report: Report, fail_on: str, *, exit_code: int | None = None) -> str:
    """`exit_code`: the process's (after `--exit-zero`), when it differs from the threshold's."""
    return dumps(report_to_dict(report, fail_on, exit_code))
