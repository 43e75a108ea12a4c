"""Fuzz the shell scanner behind RUN analysis: `extract_commands` (quotes, `$( )`, backquotes,
heredocs, `bash -c` strings, wrappers) and the installer recognizer (`find_installs`)."""

from __future__ import annotations

import re

from _harness import REPO, contract, instrumented, main

with instrumented():
    from wheeldoc.dockerfile.shell import extract_commands, find_installs


def seeds() -> list[bytes]:
    """The RUN bodies of the Dockerfile fixtures, continuations kept as written."""
    out = []
    for p in sorted(REPO.glob("fixtures/dockerfiles/**/*Dockerfile")) + sorted(REPO.glob("dockerfiles/**/*Dockerfile")):
        if p.stat().st_size > 32 << 10:
            continue
        text = p.read_bytes().decode("utf-8", "replace")
        out += [m[1].encode() for m in re.finditer(r"^RUN\s+((?:.*\\\n)*.*)$", text, re.M)]
    import _hostile_seeds

    return out + _hostile_seeds.shell()  # the shapes tests/hostile/ proves bounded


@contract
def test_one_input(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    for cmd in find_installs(extract_commands(text)):
        cmd.command


if __name__ == "__main__":
    main(__file__, test_one_input, seeds)
