"""`parse_headers` reads METADATA and WHEEL as `email.parser.HeaderParser` does (compat32), which
it replaces to keep the email package out of every run: the same fields, in the same order, on
real files and on random compositions of awkward lines."""

from __future__ import annotations

import random
from email.parser import HeaderParser
from pathlib import Path

from wheeldoc.binary.wheelmeta import get, get_all, parse_headers

ROOT = Path(__file__).resolve().parents[2]

PIECES = ["Name: x\n", "Version: 1\n", " cont\n", "\tcont2\r\n", ":novalue\n", "From me\n", "From x\n", "\n",
          "\r\n", "\r", "Key:v\r", "Bad line\n", "Requires-Dist: a\n", "requires-dist: b ; extra == 'x'\n",
          "X:  spaced  \n", "Tag: py3-none-any\n", "", "a b: c\n", "\u00dc: x\n", "Key:\n", "  \n", "From \n",
          "Description: one\n       |two\n", "Summary: tab\tinside\n", "\x0c\n", "Name: \u2028x\n"]


def email_items(text: str) -> list[tuple[str, str]]:
    return list(HeaderParser().parsestr(text).items())


def test_random_compositions_read_as_the_email_parser_reads_them() -> None:
    rnd = random.Random(12)
    for _ in range(20_000):
        text = "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 9)))
        if rnd.random() < 0.3:
            text = text.rstrip("\n")
        assert parse_headers(text) == email_items(text), repr(text)


def test_real_metadata_files_read_the_same() -> None:
    files = [p for p in ROOT.glob("fixtures/**/*") if p.name in ("METADATA", "WHEEL", "PKG-INFO") and p.is_file()]
    assert files
    for p in files:
        text = p.read_text("utf-8", "replace")
        assert parse_headers(text) == email_items(text), p


def test_lookups_are_case_insensitive_and_ordered() -> None:
    headers = parse_headers("Name: a\nrequires-dist: x\nRequires-Dist: y\n\nRequires-Dist: body\n")
    assert get(headers, "name") == "a" and get(headers, "Version") is None
    assert get_all(headers, "Requires-Dist") == ["x", "y"]
