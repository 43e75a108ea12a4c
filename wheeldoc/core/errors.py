"""Errors raised by sources when an artifact cannot be read.

Sources never print and never let a low-level exception escape: they raise
`InputError`, which the engine turns into a WD0xx finding and the CLI into a
one-line message naming the file (and line or byte offset) with exit code 2.
"""

from __future__ import annotations


class InputError(Exception):
    """An input that cannot be read or parsed."""

    def __init__(
        self,
        path: str,
        message: str,
        *,
        line: int | None = None,
        offset: int | None = None,
        member: str | None = None,
    ) -> None:
        self.path = str(path)
        self.message = clip(message)
        self.line = line
        self.offset = offset
        self.member = member
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = self.path
        if self.member:
            where += f"!{self.member}"
        if self.line is not None:
            where += f":{self.line}"
        if self.offset is not None:
            where += f" (offset {self.offset:#x})"
        return f"{where}: {self.message}"


class LimitExceeded(InputError):
    """An input that declares or needs more than wheeldoc's resource limits allow."""


class UsageError(Exception):
    """Bad flags or settings: one line on stderr, exit 2."""


MAX_MESSAGE = 1000  # characters of one error message; inputs quoted in it are cut to fit


def clip(text: str, limit: int = MAX_MESSAGE) -> str:
    """`text`, or its start and end around how much was left out: a 7 MB requirements line
    quoted in an error stays a one-line error."""
    if len(text) <= limit:
        return text
    head, tail = text[: limit * 3 // 4], text[-(limit // 5):]
    return f"{head} … ({len(text) - len(head) - len(tail):,} characters left out) … {tail}"
