"""Writing one report in the chosen format (a file or stdout) and deciding the exit code."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from wheeldoc.core.engine import exit_code
from wheeldoc.core.errors import InputError
from wheeldoc.core.model import Report

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
    write_text(text, settings.output)
    for f in report.findings:
        if f.rule == "WD001":
            print(f"wheeldoc: error: {f.location.display()}: {f.message}", file=sys.stderr)
    return exit_code(report, settings.fail_on)


def write_text(text: str, output: str | None) -> None:
    """stdout, or `-o FILE`; a file that cannot be written is an input error (exit 2), not a crash."""
    if not output:
        sys.stdout.write(text)
        return
    try:
        Path(output).write_text(text, encoding="utf-8")
    except OSError as e:
        raise InputError(output, f"cannot write the report: {e.strerror or e}") from None
