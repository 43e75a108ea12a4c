"""Human output. Facts first, then the fix as an instruction.

Lines are built as styled segments; on a terminal they are printed in colour with ANSI codes
(`_to_ansi`), otherwise joined as plain text.
"""

from __future__ import annotations

import sys
from typing import Callable, List, Tuple

from wheeldoc.core.model import Finding, Report, Severity
from wheeldoc.core.terminal import escape_controls

STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}

Segment = Tuple[str, str]  # (text, style: "bold red", "dim", … or "")
Line = List[Segment]


class Lines:
    """A sink for styled lines; commands add sections (tables, verdicts) through it too."""

    def __init__(self, width: int | None = None) -> None:
        self.lines: list[Line] = []
        self.width = width  # the columns to fit tables in (None: no limit)

    def add(self, *segments: Segment | str) -> None:
        self.lines.append([(s, "") if isinstance(s, str) else s for s in segments])


Section = Callable[[Lines], None]


def render(report: Report, fail_on: str, *, color: bool | None = None,
           sections: tuple[Section, ...] = (), findings: Section | None = None, quiet: bool = False,
           statistics: bool = False, width: int | None = None) -> str:
    """The full report: the sections, the findings (or, with `statistics`, their counts per
    rule), the summary line. `quiet`: the findings alone. `findings`: a command's own layout of
    them (the doctor groups them by severity)."""
    out = Lines(width)
    if not quiet:
        for section in sections:
            section(out)
    if statistics:
        from wheeldoc.render.concise import statistics_lines

        for line in statistics_lines(report):
            out.add(line)
        if report.findings:
            out.add()
    elif findings is not None:
        findings(out)
    else:
        for f in report.findings:
            _finding(out, f)
    if not quiet:
        _summary(out, report)
    use_color = sys.stdout.isatty() if color is None else color
    return _to_ansi(out, width) if use_color else _to_plain(out)


def _summary(out: Lines, report: Report) -> None:
    n_in = len(report.inputs)
    inputs = f"{n_in} input{'s' if n_in != 1 else ''}"
    if report.findings:
        n = len(report.findings)
        parts = [f"{k} {label}{'s' if k != 1 else ''}" for label, k in report.counts().items() if k]
        out.add(f"Found {n} finding{'s' if n != 1 else ''} ({', '.join(parts)}) in {inputs}.")
    else:
        out.add(("No findings", "green"), f" in {inputs}.")


def _finding(out: Lines, f: Finding) -> None:
    style = STYLES[f.severity]
    out.add((escape_controls(f.location.display(), single_line=True), "bold"), ": ", (f.rule, style), " ", (f.severity.label, style),
            f" {f.title}")
    for line in f.message.splitlines():
        out.add(f"  {line}")
    for ev in f.evidence:
        out.add(("  |", "dim"), f" {ev}")
    if f.fix is not None:
        note = "" if f.fix.applicability == "display-only" else f" ({f.fix.applicability} fix)"
        out.add(("  fix:", "green"), f" {f.fix.title}", (note, "dim"))
        if f.fix.text:
            for line in f.fix.text.rstrip("\n").splitlines():
                out.add(f"      {line}")
        if f.fix.command:
            for line in f.fix.command.splitlines():
                out.add(("    $", "bold"), f" {line}")
        for e in f.fix.edits:
            verb = "insert after line" if e.action == "insert_after" else "replace line"
            out.add(f"    {verb} {e.line} of {e.path}: {e.content}")
    out.add()


def _to_plain(out: Lines) -> str:
    parts = []
    if not out.lines:
        return ""
    for line in out.lines:
        parts.append("".join(text for text, _ in line))
    return "\n".join(parts) + "\n"


def _to_ansi(out: Lines, width: int | None = None) -> str:
    """Colour with ANSI SGR codes (the eight standard colours, bold, dim, reverse: all the styles
    use). Every piece of text is escaped before it is styled: the writer cannot tell our escape
    codes from an artifact's once they are mixed."""
    parts = []
    for line in out.lines:
        for segment, style in line:
            text = escape_controls(segment)
            codes = _sgr(style) if style else ""
            parts.append(f"\x1b[{codes}m{text}\x1b[0m" if codes and text else text)
        parts.append("\n")
    return "".join(parts)


_SGR = {"bold": "1", "dim": "2", "italic": "3", "underline": "4", "reverse": "7",
        "black": "30", "red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35",
        "cyan": "36", "white": "37"}


def _sgr(style: str) -> str:
    """`bold red` -> `1;31` (unknown words are dropped)."""
    return ";".join(_SGR[w] for w in style.split() if w in _SGR)