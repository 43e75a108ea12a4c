"""JSON and TOML from strangers, parsed without a traceback (and the constants of a Python file,
read without running it): nesting, huge integers and other
parser failures become one `InputError` naming the file.

Python's parsers recurse once per nesting level (tomli refuses past 400 levels with a
RecursionError of its own; json's C scanner hits the interpreter's recursion limit), and int()
refuses integers of more than 4,300 digits with a ValueError. Each is a clean input error here,
and a parsed document nested deeper than MAX_DEPTH is refused too, so no reader that walks it
recursively can meet a RecursionError later.
"""

from __future__ import annotations

import re
from typing import Any

from wheeldoc.core.errors import InputError

MAX_DEPTH = 128  # a uv.lock nests 5 levels, an OCI index 4


def depth(obj: Any, limit: int = MAX_DEPTH) -> int:
    """How deep `obj` nests (iteratively, one level at a time; stops counting past `limit`)."""
    level = [obj] if isinstance(obj, (dict, list)) else []
    deepest = 0
    while level:
        deepest += 1
        if deepest > limit:
            return deepest
        below: list = []
        for o in level:
            below += [x for x in (o.values() if isinstance(o, dict) else o) if isinstance(x, (dict, list))]
        level = below
    return deepest


def _checked(doc: Any, path: str, what: str, member: str | None) -> Any:
    if depth(doc) > MAX_DEPTH:
        raise InputError(path, f"{what} nests deeper than {MAX_DEPTH} levels (limit MAX_DEPTH)", member=member)
    return doc


def load_json(data: str | bytes, path: str, what: str | None = None, *, member: str | None = None) -> Any:
    """`json.loads`, with every failure an `InputError` ("[`what` is ]not valid JSON: …")."""
    import json

    try:
        doc = json.loads(data)
    except RecursionError:
        raise InputError(path, f"{what or 'JSON'} nests more than {MAX_DEPTH} levels deep (limit MAX_DEPTH)",
                         member=member) from None
    except (ValueError, UnicodeDecodeError, MemoryError) as e:  # JSONDecodeError, int digits
        said = f"{what} is not" if what else "not"
        raise InputError(path, f"{said} valid JSON: {_short(e)}", member=member) from None
    return _checked(doc, path, what or "JSON", member)


def load_toml(text: str, path: str, what: str = "TOML") -> Any:
    """`tomli.loads` (tomllib where tomli is missing), with every failure an `InputError`."""
    try:
        import tomli
    except ImportError:  # pragma: no cover - tomli is a dependency
        import tomllib as tomli  # type: ignore[no-redef]
    try:
        doc = tomli.loads(text)
    except tomli.TOMLDecodeError as e:
        line = getattr(e, "lineno", None)
        raise InputError(path, f"invalid TOML: {_short(e)}", line=line) from None
    except RecursionError:
        raise InputError(path, f"{what} nests more than {MAX_DEPTH} levels deep (limit MAX_DEPTH)") from None
    except (ValueError, MemoryError) as e:  # an integer of more than 4,300 digits
        raise InputError(path, f"invalid TOML: {_short(e)}") from None
    return _checked(doc, path, what, None)


def _short(e: BaseException, limit: int = 200) -> str:
    text = str(e) or type(e).__name__
    return text if len(text) <= limit else text[:limit] + "…"


def small_int(text: str, digits: int = 18) -> int | None:
    """An ASCII decimal of at most `digits` digits as an int; None for anything else ('²',
    '٣', 5,000 digits, signs, blanks): str.isdigit() accepts what int() refuses."""
    if 0 < len(text) <= digits and text.isascii() and text.isdigit():
        return int(text)
    return None


# -- constants of a Python file (torch/version.py), never executed -----------------------------
_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]{0,63})[ \t]*(?::[^=\n]{0,200})?=[ \t]*(.*?)[ \t]*(?:#[^\n]*)?$")
_STRING = re.compile(r"""[rRuU]?(?:'(?:[^'\\\n]|\\.){0,4096}'|"(?:[^"\\\n]|\\.){0,4096}")$""")
_CONSTANTS = {"True": True, "False": False, "None": None}


def parse_version_py(data: bytes, where: str) -> dict[str, object]:
    """Top-level `NAME = <constant>` assignments of a Python file, read line by line: a string
    literal of one line (4 KiB at most), True, False, None or a small integer. Never executed,
    never compiled whole (a hostile file nested 100,000 levels deep costs one pass over it)."""
    import ast

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(where, f"not valid Python: not UTF-8 ({e.reason})", offset=e.start) from None
    out: dict[str, object] = {}
    quote = None  # inside a triple-quoted string that spans lines
    for line in text.splitlines():
        if quote is not None:
            if line.count(quote) % 2:
                quote = None
            continue
        for q in ('"""', "'''"):
            if line.count(q) % 2:
                quote = q
        if quote is not None or not line or line[0] in " \t#":
            continue  # indented: not top level
        m = _ASSIGN.match(line)
        if m is None:
            continue
        name, value = m[1], m[2]
        if value in _CONSTANTS:
            out[name] = _CONSTANTS[value]
        elif small_int(value) is not None:
            out[name] = small_int(value)
        elif _STRING.match(value):
            try:  # one short string literal: ast.literal_eval cannot nest here
                lit = ast.literal_eval(value)
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            if isinstance(lit, str):
                out[name] = lit
    return out
