"""JSON output: versioned, and checked against `wheeldoc/render/report.schema.json` in the tests."""

from __future__ import annotations

import json
from typing import Any

from wheeldoc import __version__
from wheeldoc.core.engine import exit_code
from wheeldoc.core.model import Report, finding_to_dict

SCHEMA_VERSION = 1


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


BIG = 256  # arrays longer than this print one compact element per line


_compact = json.JSONEncoder(separators=(", ", ": "), default=str).encode  # the C encoder


def render(report: Report, fail_on: str) -> str:
    """Indented JSON, as `json.dumps(indent=2)` writes it, except that an array of more than
    BIG elements (a listing's `entries`: 5,666 for cuBLASLt) has one compact element per line,
    each encoded by the C encoder: the indented encoder is pure Python and made a large
    listing's JSON twice as slow as its text."""
    out: list[str] = []
    _encode(report_to_dict(report, fail_on), 0, out)
    out.append("\n")
    return "".join(out)


def _encode(obj: Any, level: int, out: list[str]) -> None:
    if isinstance(obj, dict):
        if not obj:
            out.append("{}")
            return
        pad = "\n" + "  " * (level + 1)
        out.append("{")
        for i, (k, v) in enumerate(obj.items()):
            out.append(("," if i else "") + pad + _compact(k if isinstance(k, str) else str(k))
                       + ": ")
            _encode(v, level + 1, out)
        out.append("\n" + "  " * level + "}")
    elif isinstance(obj, (list, tuple)):
        if not obj:
            out.append("[]")
            return
        pad = "\n" + "  " * (level + 1)
        if len(obj) > BIG:
            whole = _compact(obj)  # one call into the C encoder for the whole array
            if all(isinstance(x, dict) for x in obj) and whole.count("}, {") == len(obj) - 1:
                body = whole[1:-1].replace("}, {", "}," + pad + "{")  # each boundary, once
            else:
                body = ("," + pad).join(map(_compact, obj))
            out.append("[" + pad + body + "\n" + "  " * level + "]")
            return
        out.append("[")
        for i, v in enumerate(obj):
            out.append(("," if i else "") + pad)
            _encode(v, level + 1, out)
        out.append("\n" + "  " * level + "]")
    else:
        out.append(_compact(obj))
