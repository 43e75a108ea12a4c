"""`[tool.wheeldoc]` in pyproject.toml: the same settings as the command-line flags."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wheeldoc.core.errors import InputError
from wheeldoc.core.model import Severity

KNOWN_KEYS = {"select", "ignore", "fail-on", "severity", "format", "output-format", "gpu", "driver", "platform",
              "python", "glibc", "libstdcxx", "pull-base"}
TEXT_KEYS = ("fail-on", "format", "output-format", "gpu", "driver", "platform", "python", "glibc", "libstdcxx")


@dataclass(frozen=True)
class Config:
    path: str | None = None
    values: dict[str, Any] = field(default_factory=dict)

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)


def find_pyproject(start: Path) -> Path | None:
    start = start.resolve()
    for d in (start, *start.parents):
        candidate = d / "pyproject.toml"
        if candidate.is_file():
            return candidate
        if (d / ".git").exists():
            return None
    return None


def load_config(explicit: str | None = None, start: Path | None = None) -> Config:
    path = Path(explicit) if explicit else find_pyproject(start or Path.cwd())
    if path is None:
        return Config()
    try:
        import tomli
    except ImportError:  # tomli is a dependency; a bare interpreter still has tomllib (3.11+)
        import tomllib as tomli  # type: ignore[no-redef]

    from wheeldoc.core.safeload import load_toml

    try:
        from wheeldoc.core.files import read_text

        text = read_text(path)
        try:
            data = tomli.loads(text)
        except (RecursionError, ValueError) as e:  # nesting, a 4,300-digit integer; TOMLDecodeError too
            if isinstance(e, tomli.TOMLDecodeError):
                raise
            data = load_toml(text, str(path), "the configuration")  # raises, naming the file
    except tomli.TOMLDecodeError as e:
        raise InputError(str(path), f"invalid TOML: {e.msg}", line=e.lineno) from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(str(path), f"cannot read: {e}") from None
    section = data.get("tool", {}).get("wheeldoc", {})
    if not isinstance(section, dict):
        raise InputError(str(path), "[tool.wheeldoc] must be a table")
    unknown = set(section) - KNOWN_KEYS
    if unknown:
        raise InputError(str(path), f"unknown [tool.wheeldoc] keys: {', '.join(sorted(unknown))}")
    section = {**section, **{k: _text(path, k, section[k]) for k in TEXT_KEYS if k in section}}
    sev = section.get("severity", {})
    if not isinstance(sev, dict):
        raise InputError(str(path), "[tool.wheeldoc.severity] must be a table of CODE = level")
    try:
        section = {**section, "severity": {k.upper(): Severity.parse(v) for k, v in sev.items()}}
    except (ValueError, AttributeError) as e:
        raise InputError(str(path), f"[tool.wheeldoc.severity]: {e}") from None
    return Config(str(path), section)


def _text(path: Path, key: str, value: Any) -> str:
    """A setting the flags spell as text. An integer is unambiguous (`driver = 580` is "580");
    a float is not (TOML's `python = 3.10` is 3.1), so it must be quoted."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        raise InputError(str(path), f"[tool.wheeldoc] {key} must be a quoted string: unquoted, TOML "
                                    f"reads it as the number {value!r}")
    raise InputError(str(path), f"[tool.wheeldoc] {key} must be a string, got {type(value).__name__} "
                                f"{value!r}")
