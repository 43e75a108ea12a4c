"""Writing one report in the chosen format (a file or stdout) and deciding the exit code.

`deliver` is the single point where a report's text leaves wheeldoc: for the formats people
read (full, concise, github) it escapes every control character the artifacts brought in
(`wheeldoc.core.terminal.escape_controls`); JSON and SARIF are written exactly as `json.dumps`
made them (which escapes control characters itself). Colour is decided here, once, and never
reaches a file written with `-o`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from wheeldoc.core.engine import EXIT_FINDINGS, EXIT_OK, exit_code
from wheeldoc.core.errors import InputError
from wheeldoc.core.model import Report
from wheeldoc.core.redact import redact_json_text, redact_text
from wheeldoc.core.terminal import escape_controls, stderr_line, terminal_width, use_color

if TYPE_CHECKING:
    from wheeldoc.core.settings import Settings


def final_exit_code(report: Report, settings: Settings) -> int:
    """The threshold's exit code; `--exit-zero` turns "findings" (1) into 0, never an error (2)."""
    code = exit_code(report, settings.fail_on)
    return EXIT_OK if code == EXIT_FINDINGS and settings.exit_zero else code


def emit(report: Report, settings: Settings, sections: tuple[Callable, ...] = (),
         findings: Callable | None = None) -> int:
    """Render and deliver. `sections` (tables, verdicts) and `findings` (a command's own layout
    of the findings) shape the full text report only."""
    styled = False
    if settings.statistics:
        from wheeldoc.render.concise import statistics

        report.extra["statistics"] = statistics(report)
    if settings.fmt == "json":
        from wheeldoc.render.json import render as render_json

        text = render_json(report, settings.fail_on, exit_code=final_exit_code(report, settings))
    elif settings.fmt == "sarif":
        from wheeldoc.render.sarif import render as render_sarif

        text = render_sarif(report, settings.fail_on)
    elif settings.fmt == "concise":
        from wheeldoc.render.concise import render_concise

        text = render_concise(report, quiet=settings.quiet, statistics_only=settings.statistics)
    elif settings.fmt == "github":
        from wheeldoc.render.concise import render_github

        text = render_github(report)
    else:
        from wheeldoc.render.text import render as render_text

        styled = use_color(settings.color, sys.stdout, to_file=bool(settings.output))
        width = None if settings.output else terminal_width(sys.stdout)
        text = render_text(report, settings.fail_on, color=styled, sections=sections, findings=findings,
                           quiet=settings.quiet, statistics=settings.statistics, width=width)
    return deliver(text, report, settings, styled=styled)


def deliver(text: str, report: Report, settings: Settings, *, styled: bool = False) -> int:
    """Write a rendered report (file or stdout), repeat input errors on stderr, return the exit code.

    JSON and SARIF have their credentials masked value by value (never through the escaped text);
    `styled`: the text carries our own colour codes, and its pieces were escaped before styling
    (`render.text._to_ansi`); anything else in a text format is escaped here, whole."""
    if settings.fmt in ("json", "sarif"):
        text = redact_json_text(text)
    elif not styled:
        text = escape_controls(text)
    write_text(text, settings.output)
    for f in report.findings:
        if f.rule == "WD001":
            stderr_line(f"wheeldoc: error: {escape_controls(f.location.display(), single_line=True)}: {f.message}")
    return final_exit_code(report, settings)


def write_text(text: str, output: str | None) -> None:
    """The one door out for reports and listings: credentials masked (`core.redact`), then the
    file given with `-o` (one that cannot be written is an input error, exit 2), or stdout."""
    text = redact_text(text)
    if not output:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as e:
        raise InputError(output, f"cannot write the report: {e.strerror or e}") from None


write = write_text


def say(line: str) -> None:
    """One line on stderr (errors, notes): control characters escaped, credentials masked."""
    stderr_line(line)
