"""The one-line formats: `concise` (a line per finding, ruff's and hadolint's shape), the
per-rule `--statistics` table, and the `github` workflow commands. docs/output.md shows each.

concise:   PATH[!MEMBER][:LINE:1]: CODE SEVERITY: [*] MESSAGE
  - the column is always 1: wheeldoc locates lines, not columns (editors' `%f:%l:%c: %m` parses it);
  - a finding without a line (a wheel member, a whole environment) has no `:LINE:1`;
  - `[*]`: a safe fix that `check --fix` applies;
  - the message's lines are joined with a space; the path escapes tabs and newlines too.
"""

from __future__ import annotations

from collections import Counter

from wheeldoc.core.model import Finding, Report, Severity
from wheeldoc.core.registry import get_rule
from wheeldoc.core.terminal import escape_controls

GITHUB_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def where(f: Finding) -> str:
    loc = f.location
    out = escape_controls(loc.path + (f"!{loc.member}" if loc.member else ""), single_line=True)
    return out + (f":{loc.line}:1" if loc.line is not None else "")


def one_line(text: str) -> str:
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def concise_line(f: Finding) -> str:
    mark = "[*] " if f.fix is not None and f.fix.applicability == "safe" else ""
    return f"{where(f)}: {f.rule} {f.severity.label}: {mark}{one_line(f.message)}"


def summary_line(report: Report) -> str:
    n_in = len(report.inputs)
    inputs = f"{n_in} input{'s' if n_in != 1 else ''}"
    if not report.findings:
        return f"No findings in {inputs}."
    n = len(report.findings)
    parts = [f"{k} {label}{'s' if k != 1 else ''}" for label, k in report.counts().items() if k]
    return f"Found {n} finding{'s' if n != 1 else ''} ({', '.join(parts)}) in {inputs}."


# -- statistics ----------------------------------------------------------------------------------

def statistics(report: Report) -> list[dict]:
    """Findings counted per rule and severity (a severity override can split a rule), most first."""
    counts = Counter((f.rule, f.severity) for f in report.findings)
    fixable = Counter((f.rule, f.severity) for f in report.findings
                      if f.fix is not None and f.fix.applicability == "safe")
    out = []
    for (code, sev), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0][0], -kv[0][1])):
        rule = get_rule(code)
        out.append({"code": code, "name": rule.name if rule else code, "severity": sev.label,
                    "count": n, "fixable": fixable[(code, sev)]})
    return out


def statistics_lines(report: Report) -> list[str]:
    """`COUNT  CODE  SEVERITY  [*] name` per rule, like `ruff check --statistics`."""
    rows = statistics(report)
    if not rows:
        return []
    w = max(len(str(r["count"])) for r in rows)
    return [f"{r['count']:>{w}}  {r['code']}  {r['severity']:<7}  {'[*] ' if r['fixable'] else ''}{r['name']}"
            for r in rows]


def render_concise(report: Report, *, quiet: bool = False, statistics_only: bool = False) -> str:
    lines = statistics_lines(report) if statistics_only else [concise_line(f) for f in report.findings]
    if not quiet:
        lines.append(summary_line(report))
    return "".join(line + "\n" for line in lines)


# -- GitHub workflow commands ---------------------------------------------------------------------
# https://docs.github.com/en/actions/reference/workflow-commands-for-github-actions
# The escaping is @actions/core's (src/command.ts): data escapes % CR LF; a property also : and ,.

def _data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def github_line(f: Finding) -> str:
    loc = f.location
    props = [f"file={_prop(loc.path)}"]
    if loc.line is not None:
        props.append(f"line={loc.line}")
        if loc.end_line is not None and loc.end_line > loc.line:
            props.append(f"endLine={loc.end_line}")
    props.append(f"title={_prop(f'{f.rule} {f.title}')}")
    message = f.message
    if loc.member:
        message = f"{loc.member}: {message}"
    if f.fix is not None:
        message += f"\nFix: {f.fix.title}"
        if f.fix.command:
            message += f"\n  {f.fix.command}"
    return f"::{GITHUB_LEVELS[f.severity]} {','.join(props)}::{_data(message)}"


def render_github(report: Report) -> str:
    return "".join(github_line(f) + "\n" for f in report.findings)
