"""The engine: selects rules, applies severity overrides and suppressions, decides the exit code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from wheeldoc.core.errors import InputError
from wheeldoc.core.model import Finding, Location, Report, Severity
from wheeldoc.core.registry import family_rules

EXIT_OK, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
FAIL_ON = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFO, "never": None}


@dataclass(frozen=True)
class Selection:
    """Which codes run (ruff-style: the longest matching prefix of select/ignore wins)."""

    select: tuple[str, ...] = ("WD",)
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, Severity] = field(default_factory=dict)

    def enabled(self, code: str) -> bool:
        best_sel = max((len(p) for p in self.select if code.startswith(p)), default=-1)
        best_ign = max((len(p) for p in self.ignore if code.startswith(p)), default=-1)
        if code.startswith("WD0"):  # input errors cannot be switched off by a family prefix
            return best_ign < len(code)
        return best_sel >= 0 and best_sel > best_ign

    def severity_for(self, code: str, default: Severity) -> Severity:
        return self.severity.get(code, default)


@dataclass
class Context:
    """What every rule gets besides its facts: the target and the selection."""

    target: Any
    selection: Selection = field(default_factory=Selection)
    options: dict[str, Any] = field(default_factory=dict)

    def enabled(self, code: str) -> bool:
        return self.selection.enabled(code)


def run_family(prefix: str, facts: Any, ctx: Context) -> list[Finding]:
    """Run every enabled rule whose code starts with `prefix` over `facts`."""
    out: list[Finding] = []
    for rule in family_rules(prefix):
        if ctx.enabled(rule.code):
            out.extend(rule.check(facts, ctx))
    return out


def finalize(
    report: Report,
    findings: Iterable[Finding],
    selection: Selection,
    suppressed: Callable[[Finding], bool] = lambda f: False,
) -> Report:
    """Filter, override severities and sort; the report is then ready for every renderer.
    Every skipped part of an input also becomes a WD002 finding, so it counts towards --fail-on."""
    kept = []
    skipped = [Finding("WD002", "part of an input could not be analyzed", s.severity,
                       Location(s.path, s.line, member=s.member), f"skipped: {s.reason}") for s in report.skipped]
    for f in [*findings, *skipped]:
        if not selection.enabled(f.rule) or suppressed(f):
            continue
        sev = selection.severity_for(f.rule, f.severity)
        kept.append(f if sev == f.severity else f.with_severity(sev))
    kept.sort(key=lambda f: (f.location.path, f.location.line or 0, f.rule, f.message))
    report.findings.extend(kept)
    return report


def input_error_finding(err: InputError) -> Finding:
    return Finding(
        rule="WD001",
        title="input could not be read",
        severity=Severity.ERROR,
        location=Location(err.path, err.line, member=err.member),
        message=err.message,
        data={"offset": err.offset} if err.offset is not None else {},
    )


def exit_code(report: Report, fail_on: str) -> int:
    if report.input_errors:
        return EXIT_ERROR
    threshold = FAIL_ON[fail_on]
    if threshold is None:
        return EXIT_OK
    worst = max((f.severity for f in report.findings), default=None)
    return EXIT_FINDINGS if worst is not None and worst >= threshold else EXIT_OK
