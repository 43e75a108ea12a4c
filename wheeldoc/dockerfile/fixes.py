"""Edits the Dockerfile rules propose: a line after a stage's FROM, a value replaced in one line.

Each returns an `Edit` over the file's physical lines (as BuildKit numbers them), so the
command can show it as a diff or apply it. Values written into ENV lines are quoted and
escaped with the file's escape character when they need it.
"""

from __future__ import annotations

import re

from wheeldoc.dockerfile.facts import DockerFacts
from wheeldoc.core.model import Edit
from wheeldoc.dockerfile.stages import Stage

_PLAIN = re.compile(r"[A-Za-z0-9_./:@%+,=-]+\Z")


def from_line(facts: DockerFacts, stage: Stage) -> int:
    """The last physical line of the stage's FROM instruction."""
    return facts.df.instructions[stage.instructions[0]].end_line


def insert_after_from(facts: DockerFacts, stage: Stage, content: str) -> Edit:
    return Edit(facts.path, from_line(facts, stage), content)


def env_assignment(name: str, value: str, escape: str = "\\") -> str:
    """`NAME=value` as an ENV word, quoted when the value has blanks, quotes or `$`."""
    if value and _PLAIN.match(value):
        return f"{name}={value}"
    escaped = value.replace(escape, escape + escape).replace('"', escape + '"').replace("$", escape + "$")
    return f'{name}="{escaped}"'


def replace_in_lines(facts: DockerFacts, first: int, last: int, pattern: re.Pattern[str],
                     repl: str) -> Edit | None:
    """Replace the one match of `pattern` in lines [first, last]; None unless exactly one
    line matches exactly once."""
    lines = facts.lines
    hits = [n for n in range(first, min(last, len(lines)) + 1) if pattern.search(lines[n - 1])]
    if len(hits) != 1:
        return None
    n = hits[0]
    new, count = pattern.subn(repl, lines[n - 1])
    if count != 1:
        return None
    return Edit(facts.path, n, new, action="replace", end_line=n)
