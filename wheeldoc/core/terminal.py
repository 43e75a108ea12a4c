"""What reaches a terminal: control characters made visible, colour and width decided once.

Text read from artifacts (file names, package names, METADATA, image tags, ENV values) can hold
ESC, BEL, CR and other C0/C1 control characters that a terminal would obey: move the cursor,
rewrite a line, set the window title, ring the bell. `escape_controls` turns each into a visible
escape (`\\x1b`, `\\u202e`); the text writer (`wheeldoc.render.output`) applies it to everything a
text format prints, and every line wheeldoc writes on stderr goes through `stderr_line`.
JSON and SARIF never need it: `json.dumps` escapes every control character itself.

No imports beyond the standard library: the pre-commit path and `--version` pay nothing for it.
"""

from __future__ import annotations

import os
import re
import sys
from typing import IO

# C0 (but TAB and LF, which text output uses for its own structure), DEL, C1 (NEL included),
# and the Unicode format characters that reorder or hide text on a terminal: the bidirectional
# embeddings, overrides and isolates ("Trojan Source", CVE-2021-42574) and the line and
# paragraph separators; and lone surrogates: the bytes of a file name that is not UTF-8
# (Python's surrogateescape), printed as the byte they stand for (`\xff`), so text output is
# always valid UTF-8 and a raw 8-bit C1 byte (0x9b, CSI) never reaches the terminal.
_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_ANY = re.compile(f"[{_CONTROLS}]")
_WITH_LAYOUT = re.compile(f"[{_CONTROLS}\t\n]")


def _visible(m: re.Match) -> str:
    c = ord(m.group())
    if 0xDC80 <= c <= 0xDCFF:  # a byte of a non-UTF-8 name
        c -= 0xDC00
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def escape_controls(text: str, *, single_line: bool = False) -> str:
    """`text` with every control character replaced by its visible escape (`\\x1b`).

    TAB and LF are kept (the text formats lay lines out with them) unless `single_line`: a field
    the layout prints on one line (a path in `path:line: CODE`) escapes them too.
    """
    pattern = _WITH_LAYOUT if single_line else _ANY
    return pattern.sub(_visible, text) if pattern.search(text) else text


def stderr_line(message: str, stream: IO[str] | None = None) -> None:
    """One line on stderr, credentials masked and control characters escaped (the one way
    wheeldoc writes there)."""
    from wheeldoc.core.redact import redact_text

    print(escape_controls(redact_text(message)), file=stream or sys.stderr)


_quiet = False


def set_quiet(quiet: bool) -> None:
    """`--quiet`: no progress lines either."""
    global _quiet
    _quiet = quiet


def quiet() -> bool:
    return _quiet


def progress(message: str, stream: IO[str] | None = None) -> None:
    """A progress line for work that takes a while (a download, a resolution, a range of
    releases), on stderr and only when stderr is a terminal: never in a pipe, a file or a CI log,
    never with `--quiet`. Library code calls this sink; it never prints itself."""
    stream = stream or sys.stderr
    if _quiet:
        return
    try:
        if not stream.isatty():
            return
    except (AttributeError, ValueError):
        return
    stderr_line(f"wheeldoc: {message}", stream)


def human_size(n: int | None) -> str:
    if n is None:
        return "size unknown"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _env_set(name: str) -> bool:
    return bool(os.environ.get(name, ""))


def use_color(flag: bool | None, stream: IO[str] | None = None, *, to_file: bool = False) -> bool:
    """Whether to draw colour. A report written to a file (`-o`) never has escape codes. Then
    `--color always|never` (the flag) decides; with `auto`: `NO_COLOR` set and not empty turns
    colour off (https://no-color.org), else `FORCE_COLOR` set and not empty turns it on
    (https://force-color.org), else `TERM=dumb` turns it off, else colour on a terminal only."""
    if to_file:
        return False
    if flag is not None:
        return flag
    if _env_set("NO_COLOR"):
        return False
    if _env_set("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    stream = stream or sys.stdout
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def terminal_width(stream: IO[str] | None = None) -> int | None:
    """The width to lay text out in: `COLUMNS` when set to a number, else the terminal's width
    when writing to one, else None (a pipe or a file: no limit)."""
    raw = os.environ.get("COLUMNS", "").strip()
    if re.fullmatch(r"[0-9]{1,5}", raw, re.ASCII) and int(raw) > 0:
        return max(int(raw), 20)
    stream = stream or sys.stdout
    try:
        if stream.isatty():
            return max(os.get_terminal_size(stream.fileno()).columns, 20)
    except (AttributeError, ValueError, OSError):
        pass
    return None
