"""What every command shares: settings from flags + [tool.wheeldoc], usage errors."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from wheeldoc.core.config import Config, load_config
from wheeldoc.core.engine import EXIT_ERROR, Selection
from wheeldoc.core.target import Target, TargetError, build_target


class UsageError(Exception):
    """Bad flags or settings: one line on stderr, exit 2."""


@dataclass(frozen=True)
class Settings:
    fmt: str
    fail_on: str
    selection: Selection
    target: Target
    output: str | None
    color: bool | None
    config: Config


def _codes(values: list[str] | None) -> tuple[str, ...] | None:
    if values is None:
        return None
    out = []
    for v in values:
        out.extend(c.strip().upper() for c in v.split(",") if c.strip())
    return tuple(out)


def _as_codes(value, key: str, config: Config) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{config.path}: [tool.wheeldoc] {key} must be a list of codes")
    return tuple(v.upper() for v in value)


def settings_from(args: argparse.Namespace) -> Settings:
    config = load_config(getattr(args, "config", None))
    fmt = args.format or config.get("format", "text")
    fail_on = args.fail_on or config.get("fail-on", "warning")
    if fmt not in ("text", "json", "sarif"):
        raise UsageError(f"unknown format {fmt!r}")
    if fail_on not in ("error", "warning", "info", "never"):
        raise UsageError(f"unknown fail-on level {fail_on!r}")
    select = _codes(args.select) or _as_codes(config.get("select"), "select", config) or ("WD",)
    ignore = (_as_codes(config.get("ignore"), "ignore", config) or ()) + (_codes(args.ignore) or ())
    selection = Selection(select, ignore, config.get("severity", {}))
    try:
        target = build_target(
            platform=getattr(args, "platform", None) or config.get("platform"),
            gpu=getattr(args, "gpu", None) or config.get("gpu"),
            driver=getattr(args, "driver", None) or config.get("driver"),
            python=getattr(args, "python_version", None) or config.get("python"),
        )
    except TargetError as e:
        raise UsageError(str(e)) from None
    color = {"always": True, "never": False}.get(getattr(args, "color", "auto"))
    return Settings(fmt, fail_on, selection, target, args.output, color, config)


def guarded(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Turn usage errors into one line on stderr and exit 2."""

    def wrapper(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except UsageError as e:
            from wheeldoc.core.redact import redact_text

            print(f"wheeldoc: error: {redact_text(str(e))}", file=sys.stderr)
            return EXIT_ERROR

    return wrapper


def not_yet(name: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        print(f"wheeldoc: error: `wheeldoc {name}` is not available in this build yet", file=sys.stderr)
        return EXIT_ERROR

    return run
