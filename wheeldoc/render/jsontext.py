"""The JSON text of a report document: indented as `json.dumps(indent=2)`, large arrays through
the C encoder (no import of the report machinery, so a verb's fast path can use it)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BIG = 256  # arrays longer than this print one compact element per line

_encoder = None


# json's escapes for ASCII (ensure_ascii escapes every character outside ' '..'~')
_ASCII_ESCAPES = {**{i: f"\\u{i:04x}" for i in (*range(0x20), 0x7F)}, 0x22: '\\"', 0x5C: "\\\\",
                  0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0C: "\\f", 0x0D: "\\r"}


def encode_string(text: str) -> str:
    """`text` as a JSON string, as json writes it (ensure_ascii): ASCII here (printable ASCII
    without quote or backslash as it is), anything else by the C encoder's function (loaded
    on first use; json itself imports re)."""
    if text.isascii():
        if text.isprintable() and '"' not in text and "\\" not in text:
            return f'"{text}"'  # isprintable: no control character, no DEL
        return f'"{text.translate(_ASCII_ESCAPES)}"'
    try:
        from _json import encode_basestring_ascii
    except ImportError:  # another Python: json's own
        from json.encoder import encode_basestring_ascii
    return encode_basestring_ascii(text)


def _compact(obj: Any) -> str:
    """`obj` as the C encoder writes it (separators ", " and ": ", str() of anything JSON has
    no type for); a str, an int, None, True and False without importing json: what it writes
    for them (ensure_ascii: `encode_basestring_ascii`; `int.__repr__`)."""
    if obj is None:
        return "null"
    if obj is True:
        return "true"
    if obj is False:
        return "false"
    kind = type(obj)
    if kind is str:
        return encode_string(obj)
    if kind is int:
        return int.__repr__(obj)
    global _encoder
    if _encoder is None:
        import json

        _encoder = json.JSONEncoder(separators=(", ", ": "), default=str).encode
    return _encoder(obj)


def dumps(doc: Any) -> str:
    """Indented JSON, as `json.dumps(indent=2)` writes it, except that an array of more than
    BIG elements (a listing's `entries`: 5,666 for cuBLASLt) has one compact element per line,
    each encoded by the C encoder: the indented encoder is pure Python and made a large
    listing's JSON twice as slow as its text."""
    out: list[str] = []
    _encode(doc, 0, out)
    out.append("\n")
    return "".join(out)


def _encode(obj: Any, level: int, out: list[str]) -> None:
    if isinstance(obj, dict):
        if not obj:
            out.append("{}")
            return
        pad = "\n" + "  " * (level + 1)
        out.append("{")
        for i, (k, v) in enumerate(obj.items()):
            out.append(("," if i else "") + pad + _compact(k if isinstance(k, str) else str(k))
                       + ": ")
            _encode(v, level + 1, out)
        out.append("\n" + "  " * level + "}")
    elif isinstance(obj, (list, tuple)):
        if not obj:
            out.append("[]")
            return
        pad = "\n" + "  " * (level + 1)
        if len(obj) > BIG:
            whole = _compact(obj)  # one call into the C encoder for the whole array
            if all(isinstance(x, dict) for x in obj) and whole.count("}, {") == len(obj) - 1:
                body = whole[1:-1].replace("}, {", "}," + pad + "{")  # each boundary, once
            else:
                body = ("," + pad).join(map(_compact, obj))
            out.append("[" + pad + body + "\n" + "  " * level + "]")
            return
        out.append("[")
        for i, v in enumerate(obj):
            out.append(("," if i else "") + pad)
            _encode(v, level + 1, out)
        out.append("\n" + "  " * level + "]")
    else:
        out.append(_compact(obj))
