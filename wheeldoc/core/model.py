"""The shared vocabulary: severities, locations, fixes, findings and the report."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Literal, Mapping

Applicability = Literal["safe", "unsafe", "display-only"]


class Severity(enum.IntEnum):
    INFO = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r} (error, warning, info)") from None


@dataclass(frozen=True)
class Location:
    """Where a finding points: a file and line, or a member inside a wheel, a section, a symbol."""

    path: str
    line: int | None = None
    end_line: int | None = None
    member: str | None = None
    section: str | None = None
    symbol: str | None = None

    def display(self) -> str:
        out = self.path
        if self.member:
            out += f"!{self.member}"
        if self.line is not None:
            out += f":{self.line}"
        return out


@dataclass(frozen=True)
class Edit:
    """A text edit: replace lines [line, end_line] with `content`, or insert it after `line`."""

    path: str
    line: int
    content: str
    action: Literal["insert_after", "replace"] = "insert_after"
    end_line: int | None = None


@dataclass(frozen=True)
class Fix:
    """The fix for a finding: the title is an instruction; applicability says if it is safe to apply."""

    title: str
    applicability: Applicability = "display-only"
    command: str | None = None
    edits: tuple[Edit, ...] = ()
    text: str | None = None  # a file body to write (e.g. an overrides file)


@dataclass(frozen=True)
class Finding:
    rule: str
    title: str
    severity: Severity
    location: Location
    message: str
    evidence: tuple[str, ...] = ()
    fix: Fix | None = None
    data: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def with_severity(self, severity: Severity) -> Finding:
        return Finding(self.rule, self.title, severity, self.location, self.message,
                       self.evidence, self.fix, self.data)


@dataclass(frozen=True)
class Skipped:
    """Something that could not be checked, and why: a result, never a silent drop."""

    path: str
    reason: str
    member: str | None = None
    line: int | None = None
    severity: Severity = Severity.WARNING  # INFO for a part that is not meant to be checked (an unpinned input line)


@dataclass
class Report:
    command: str
    target: Mapping[str, Any]
    inputs: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)  # command-specific top-level JSON keys
    input_errors: int = 0

    def counts(self) -> dict[str, int]:
        out = {s.label: 0 for s in sorted(Severity, reverse=True)}
        for f in self.findings:
            out[f.severity.label] += 1
        return out


# The dictionary form of a finding: the JSON report's, and what the caches keep.
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


def finding_from_dict(d: dict) -> Finding:
    """A finding back from its dictionary form (`finding_to_dict`): what the caches store."""
    fix = None
    if d["fix"] is not None:
        x = d["fix"]
        fix = Fix(x["title"], x["applicability"], x["command"],
                  tuple(Edit(e["path"], e["line"], e["content"], e["action"], e["end_line"]) for e in x["edits"]),
                  x["text"])
    return Finding(d["rule"], d["title"], Severity.parse(d["severity"]),
                   Location(d["path"], d["line"], d["end_line"], d["member"], d["section"], d["symbol"]),
                   d["message"], tuple(d["evidence"]), fix, d["data"])
