"""Human output (rich). Facts first, then the fix as an instruction."""

from __future__ import annotations

import io
import sys
from typing import Callable

from wheeldoc.model import Finding, Report, Severity

STYLES = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}

# Commands may add their own sections (a coverage table, a verdict line) before the findings.
Section = Callable[["object"], None]


def render(report: Report, fail_on: str, *, color: bool | None = None,
           sections: tuple[Section, ...] = ()) -> str:
    from rich.console import Console
    from rich.markup import escape

    buf = io.StringIO()
    force = sys.stdout.isatty() if color is None else color
    console = Console(file=buf, force_terminal=force, no_color=not force, width=110,
                      highlight=False, soft_wrap=True)
    for section in sections:
        section(console)
    for f in report.findings:
        _finding(console, f, escape)
    counts = report.counts()
    if report.findings:
        parts = [f"{n} {label}{'s' if n != 1 else ''}" for label, n in counts.items() if n]
        console.print(f"\nFound {len(report.findings)} finding{'s' if len(report.findings) != 1 else ''}"
                      f" ({', '.join(parts)}) in {len(report.inputs)} input"
                      f"{'s' if len(report.inputs) != 1 else ''}.")
    else:
        console.print(f"[green]No findings[/] in {len(report.inputs)} input"
                      f"{'s' if len(report.inputs) != 1 else ''}.")
    return buf.getvalue()


def _finding(console, f: Finding, escape) -> None:
    style = STYLES[f.severity]
    console.print(f"[bold]{escape(f.location.display())}[/]: [{style}]{f.rule}[/] "
                  f"[{style}]{f.severity.label}[/] {escape(f.title)}")
    for line in f.message.splitlines():
        console.print(f"  {escape(line)}")
    for ev in f.evidence:
        console.print(f"  [dim]|[/] {escape(ev)}")
    if f.fix is not None:
        note = "" if f.fix.applicability == "display-only" else f" [dim]({f.fix.applicability} fix)[/]"
        console.print(f"  [green]fix:[/] {escape(f.fix.title)}{note}")
        if f.fix.text:
            for line in f.fix.text.rstrip("\n").splitlines():
                console.print(f"      {escape(line)}")
        if f.fix.command:
            for line in f.fix.command.splitlines():
                console.print(f"    [bold]$[/] {escape(line)}")
        for e in f.fix.edits:
            verb = "insert after line" if e.action == "insert_after" else "replace line"
            console.print(f"    {verb} {e.line} of {escape(e.path)}: {escape(e.content)}")
    console.print()
