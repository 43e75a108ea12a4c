"""Writing one report in the chosen format (a file or stdout) and deciding the exit code."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from wheeldoc.core.engine import exit_code
from wheeldoc.core.model import Report
from wheeldoc.core.redact import redact_json_text, redact_text

if TYPE_CHECKING:
    from wheeldoc.core.settings import Settings


def emit(report: Report, settings: Settings, sections: tuple[Callable, ...] = ()) -> int:
    if settings.fmt == "json":
        from wheeldoc.render.json import render as render_json

        text = render_json(report, settings.fail_on)
    elif settings.fmt == "sarif":
        from wheeldoc.render.sarif import render as render_sarif

        text = render_sarif(report, settings.fail_on)
    else:
        from wheeldoc.render.text import render as render_text

        text = render_text(report, settings.fail_on, color=settings.color, sections=sections)
    return deliver(text, report, settings)


def deliver(text: str, report: Report, settings: Settings) -> int:
    """Write a rendered report (file or stdout), repeat input errors on stderr, return the exit code."""
    if settings.fmt in ("json", "sarif"):
        text = redact_json_text(text)  # value by value, never through the escaped text
    write(text, settings.output)
    for f in report.findings:
        if f.rule == "WD001":
            say(f"wheeldoc: error: {f.location.display()}: {f.message}")
    return exit_code(report, settings.fail_on)


def write(text: str, output: str | None = None) -> None:
    """The one door out for reports and listings: credentials masked (`core.redact`), then the
    file given with `-o`, or stdout."""
    text = redact_text(text)
    if output:
        Path(output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


def say(line: str) -> None:
    """One line on stderr (errors, notes), credentials masked like every report."""
    print(redact_text(line), file=sys.stderr)
