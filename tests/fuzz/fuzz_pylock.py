"""Fuzz the pylock.toml reader (`parse_lockfile(path, text, "pylock")`), seeded with the lockfile fixtures.

The text is decoded as `wheeldoc check` does (NUL bytes and invalid UTF-8 never reach a
parser); the result's derived fields and `detect_format` are exercised too.
"""

from __future__ import annotations

from _harness import contract, main, read_seed_files
from _lock import read_as


def _fixture_seeds() -> list[bytes]:
    return read_seed_files(['fixtures/**/pylock*.toml'])


def seeds() -> list[bytes]:
    import _hostile_seeds

    return _fixture_seeds() + _hostile_seeds.pylock()  # the shapes tests/hostile/ proves bounded


@contract
def test_one_input(data: bytes) -> None:
    read_as("pylock", "pylock.toml", data)


if __name__ == "__main__":
    main(__file__, test_one_input, seeds)
