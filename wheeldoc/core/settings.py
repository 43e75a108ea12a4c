"""What every command shares: settings from flags + [tool.wheeldoc], usage errors."""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from wheeldoc.core.config import Config, load_config
from wheeldoc.core.engine import EXIT_ERROR, Selection
from wheeldoc.core.errors import UsageError  # noqa: F401  (verbs import it from here)
from wheeldoc.core.target import Target, TargetError, build_target
from wheeldoc.core.terminal import set_quiet, stderr_line


# The output formats (docs/output.md). "text" is the full report's internal name (the old
# `--format text`); `full` is its documented one.
FORMATS = ("text", "concise", "json", "sarif", "github")
FORMAT_ALIASES = {"full": "text"}


@dataclass(frozen=True)
class Settings:
    fmt: str
    fail_on: str
    selection: Selection
    target: Target
    output: str | None
    color: bool | None
    config: Config
    statistics: bool = False
    quiet: bool = False
    exit_zero: bool = False

    @property
    def is_text(self) -> bool:
        """A format people read (full, concise, github): control characters get escaped."""
        return self.fmt not in ("json", "sarif")


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


def _known(codes: tuple[str, ...] | None, said_by: str, *, prefixes: bool = True) -> tuple[str, ...] | None:
    """Codes and prefixes that name at least one rule; anything else is a usage error, never a
    selection that silently checks nothing (`--select WD999`). Only the families a code can
    reach are imported, so `--select WD4` stays on the fast path."""
    if not codes:
        return codes
    from wheeldoc.core.registry import family_rules, get_rule

    for code in codes:
        if code == "WD" and prefixes:
            continue
        ok = bool(re.fullmatch(r"WD\d{1,3}", code)) and (
            bool(family_rules(code)) if prefixes else get_rule(code) is not None)
        if not ok:
            what = "code or prefix" if prefixes else "code"
            raise UsageError(f"{said_by}: no rule has the {what} {code!r} (see `wheeldoc rule --all`)")
    return codes


def settings_from(args: argparse.Namespace) -> Settings:
    config = load_config(getattr(args, "config", None))

    def pick(flag: str, key: str, default: str | None = None) -> tuple[str | None, str]:
        """A flag's value, else the config's, with who said it (for the error message)."""
        value = getattr(args, flag, None)
        if value is not None:
            return value, f"--{key}"
        if config.get(key) is not None:
            return config.get(key), f"{config.path}: [tool.wheeldoc] {key}"
        return default, f"--{key}"

    fmt, fmt_from = pick("format", "output-format")
    if fmt is None:
        fmt, fmt_from = pick("format", "format", "text")
    fail_on, fail_on_from = pick("fail_on", "fail-on", "warning")
    fmt = FORMAT_ALIASES.get(fmt, fmt) if isinstance(fmt, str) else fmt
    if fmt not in FORMATS:
        raise UsageError(f"{fmt_from}: unknown output format {fmt!r} (full, concise, json, sarif, github)")
    if fail_on not in ("error", "warning", "info", "never"):
        raise UsageError(f"{fail_on_from}: unknown fail-on level {fail_on!r}")
    where = f"{config.path}: [tool.wheeldoc]"
    select = _known(_codes(args.select), "--select") \
        or _known(_as_codes(config.get("select"), "select", config), f"{where} select") or ("WD",)
    ignore = (_known(_as_codes(config.get("ignore"), "ignore", config), f"{where} ignore") or ()) \
        + (_known(_codes(args.ignore), "--ignore") or ())
    severity = config.get("severity", {})
    _known(tuple(severity), f"{config.path}: [tool.wheeldoc.severity]", prefixes=False)
    selection = Selection(select, ignore, severity)
    values = {key: pick(flag, key) for flag, key in
              (("platform", "platform"), ("gpu", "gpu"), ("driver", "driver"), ("python_version", "python"))}
    for key, (value, said_by) in values.items():  # each value alone first, so the error names who said it
        if said_by != f"--{key}":
            try:
                build_target(**{key: value})
            except TargetError as e:
                raise UsageError(f"{said_by}: {e}") from None
    try:
        target = build_target(platform=values["platform"][0], gpu=values["gpu"][0],
                              driver=values["driver"][0], python=values["python"][0])
    except TargetError as e:
        raise UsageError(str(e)) from None
    color = {"always": True, "never": False}.get(getattr(args, "color", "auto"))
    statistics = bool(getattr(args, "statistics", False))
    if statistics and fmt in ("sarif", "github"):
        raise UsageError(f"--statistics works with the full, concise and json formats, not {fmt}")
    set_quiet(bool(getattr(args, "quiet", False)))
    return Settings(fmt, fail_on, selection, target, _writable(args.output), color, config, statistics,
                    bool(getattr(args, "quiet", False)), bool(getattr(args, "exit_zero", False)))


def _writable(output: str | None) -> str | None:
    """`-o FILE`: refused before any work when its folder is missing or it names a folder."""
    if output is None:
        return None
    path = Path(output)
    try:
        if path.is_dir():
            raise UsageError(f"-o {output}: is a directory, not a file")
        if not path.parent.is_dir():
            raise UsageError(f"-o {output}: the folder {str(path.parent)!r} does not exist")
    except OSError as e:  # a name too long, a loop of links
        raise UsageError(f"-o {output}: {e.strerror or e}") from None
    return output


def guarded(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """Turn usage errors into one line on stderr and exit 2."""

    def wrapper(args: argparse.Namespace) -> int:
        try:
            return run(args)
        except UsageError as e:
            stderr_line(f"wheeldoc: error: {e}")
            return EXIT_ERROR

    return wrapper


def not_yet(name: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        print(f"wheeldoc: error: `wheeldoc {name}` is not available in this build yet", file=sys.stderr)
        return EXIT_ERROR

    return run
