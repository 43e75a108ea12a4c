"""render.jsontext writes what json writes, without importing json for plain values."""

from __future__ import annotations

import json

import pytest

from wheeldoc.render.jsontext import BIG, dumps, encode_string


@pytest.mark.parametrize("text", ["", "abc", "/tmp/lib cublas.so", 'a"b', "a\\b", "x\x7fy", "é",
                                  "\x1b[31m", " ~", "tab\t", "\u2028", "\udcff", "\0", "🙂",
                                  "".join(map(chr, range(128))), "\0entries", "\\u0000"])
def test_strings_as_json_writes_them(text):
    assert encode_string(text) == json.dumps(text)


def test_documents_as_json_writes_them():
    class Odd:
        def __str__(self) -> str:
            return "odd"

    doc = {"a": [1, -2, 3.5, float("inf"), True, False, None, "x\n"], "b": {}, "c": [],
           "d": {"e": Odd(), 7: "seven"}, "big": [{"i": i, "s": "é"} for i in range(BIG + 1)],
           "nested": [[1, 2], {"k": [3]}], "n": 10 ** 30}
    compact = json.JSONEncoder(separators=(", ", ": "), default=str)
    text = dumps(doc)
    small = {k: v for k, v in doc.items() if k != "big"}
    assert json.loads(text)["big"] == json.loads(compact.encode(doc["big"]))
    assert dumps(small) == json.dumps(json.loads(compact.encode(small)), indent=2) + "\n"
    assert text.count("\n    {\"i\": ") == BIG + 1  # one record per line
