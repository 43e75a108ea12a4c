"""The lockfile harnesses' shared body: one format, read as `wheeldoc check` reads it."""

from __future__ import annotations

from _harness import instrumented

with instrumented():
    from wheeldoc.lockfile.source import detect_format, parse_lockfile


def read_as(fmt: str, name: str, data: bytes) -> None:
    # read_text refuses NUL and non-UTF-8 bytes before any parser sees them; do the same.
    text = data.replace(b"\0", b"").decode("utf-8", "replace")
    lock = parse_lockfile(name, text, fmt)
    for p in lock.packages:
        p.local, p.public_version
        lock.get(p.name)
    lock.indexes_seen
    detect_format(name, text)
