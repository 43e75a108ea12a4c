"""Shared plumbing of the fuzz harnesses: the contract, seeds, atheris (or hypothesis).

Each `fuzz_<parser>.py` defines `test_one_input(data: bytes)` and `seeds()`, imports the
parser inside `instrumented()`, and ends with `main(__file__, test_one_input, seeds)`.

The contract: a parser fed any bytes returns, or raises `wheeldoc.core.errors.InputError`
(`LimitExceeded` included). Any other exception, a hang past `-timeout` or memory past
`-rss_limit_mb` is a crash: libFuzzer stops and writes the input to `-artifact_prefix`.

Standalone use (libFuzzer flags, then corpus folders; the first one receives new inputs):

    uv run python tests/fuzz/fuzz_elf.py -runs=100000 -max_total_time=60 tests/fuzz/corpus/elf

A corpus folder that is missing or empty is first filled with the harness's seeds (taken
from the committed fixtures). Without a corpus folder, `tests/fuzz/corpus/<parser>` is used
(gitignored). Where atheris is not installed (it ships wheels for x86_64 Linux only), or with
`WHEELDOC_FUZZ_ENGINE=hypothesis`, the same `test_one_input` runs under hypothesis: the seeds,
then random and mutated inputs, for `-runs` examples or `-max_total_time` seconds.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import os
import pkgutil
import sys
import time
from pathlib import Path
from typing import Callable, Iterable, Iterator

REPO = Path(__file__).resolve().parents[2]
FUZZ_DIR = Path(__file__).resolve().parent
if str(REPO) not in sys.path:  # tests.imagefactory, tests.wheelfactory
    sys.path.insert(0, str(REPO))

from wheeldoc.core.errors import InputError  # noqa: E402  (not instrumented: it holds no logic)

try:
    import atheris
except ImportError:  # not x86_64 Linux, or a Python atheris has no wheel for
    atheris = None
if os.environ.get("WHEELDOC_FUZZ_ENGINE") == "hypothesis":  # force the fallback (to test it)
    atheris = None

DEFAULT_FLAGS = ("-timeout=20", "-rss_limit_mb=2048")


@contextlib.contextmanager
def instrumented() -> Iterator[None]:
    """Wrap the imports of the code under test (coverage feedback for wheeldoc only).

    Every `wheeldoc` module is imported here too: parsers import each other lazily
    (`parse_lockfile` imports `uv_lock` on first use), and a module first imported after
    this block would run uninstrumented, invisible to the fuzzer."""
    if atheris is None:
        yield
        return
    with atheris.instrument_imports(include=["wheeldoc"]):
        import wheeldoc

        for mod in pkgutil.walk_packages(wheeldoc.__path__, "wheeldoc."):
            if not mod.name.endswith("__main__"):
                importlib.import_module(mod.name)
        yield


def contract(fn: Callable[[bytes], object]) -> Callable[[bytes], None]:
    """`fn` with `InputError` swallowed: everything else escapes and is a crash."""

    @functools.wraps(fn)
    def test_one_input(data: bytes) -> None:
        try:
            fn(data)
        except InputError:
            pass

    return test_one_input


class Provider:
    """`atheris.FuzzedDataProvider` when atheris is there, else a small stand-in with the
    same methods the harnesses use (front-to-back consumption of the input)."""

    def __new__(cls, data: bytes):  # type: ignore[misc]
        if atheris is not None:
            return atheris.FuzzedDataProvider(data)
        return super().__new__(cls)

    def __init__(self, data: bytes) -> None:
        self._data, self._pos = data, 0

    def _take(self, n: int) -> bytes:
        out = self._data[self._pos:self._pos + max(n, 0)]
        self._pos += len(out)
        return out

    def remaining_bytes(self) -> int:
        return len(self._data) - self._pos

    def ConsumeBytes(self, n: int) -> bytes:  # noqa: N802 (atheris's names)
        return self._take(n)

    def ConsumeIntInRange(self, lo: int, hi: int) -> int:  # noqa: N802
        span = hi - lo
        if span <= 0:
            return lo
        raw = self._take((span.bit_length() + 7) // 8)
        return lo + int.from_bytes(raw, "little") % (span + 1)

    def ConsumeBool(self) -> bool:  # noqa: N802
        return bool(self.ConsumeIntInRange(0, 1))

    def PickValueInList(self, values: list):  # noqa: N802
        return values[self.ConsumeIntInRange(0, len(values) - 1)]

    def ConsumeUnicodeNoSurrogates(self, n: int) -> str:  # noqa: N802
        return self._take(n).decode("utf-8", "replace")


# -- seeds and corpus folders ------------------------------------------------------------------

def read_seed_files(patterns: Iterable[str], *, max_size: int = 256 << 10) -> list[bytes]:
    """The bytes of committed fixture files matching the globs (relative to the repo), small first."""
    out: list[bytes] = []
    for pattern in patterns:
        for p in sorted(REPO.glob(pattern)):
            if p.is_file() and 0 < p.stat().st_size <= max_size:
                out.append(p.read_bytes())
    return out


def write_seeds(folder: Path, seeds: Iterable[bytes]) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    n = 0
    for s in seeds:
        (folder / hashlib.sha1(s).hexdigest()).write_bytes(s)
        n += 1
    return n


def _split_argv(argv: list[str]) -> tuple[list[str], list[str]]:
    flags = [a for a in argv if a.startswith("-")]
    dirs = [a for a in argv if not a.startswith("-")]
    return flags, dirs


def _flag(flags: list[str], name: str) -> str | None:
    for f in flags:
        if f.startswith(f"-{name}="):
            return f.split("=", 1)[1]
    return None


def main(harness_file: str, test_one_input: Callable[[bytes], None],
         seeds: Callable[[], list[bytes]]) -> None:
    name = Path(harness_file).stem.removeprefix("fuzz_")
    flags, dirs = _split_argv(sys.argv[1:])
    if not dirs:
        dirs = [str(FUZZ_DIR / "corpus" / name)]
    first = Path(dirs[0])  # a file instead of a folder: libFuzzer runs just those inputs
    if not first.exists() or first.is_dir():  # seeds named by their hash: added once, kept
        write_seeds(first, seeds())
    for d in DEFAULT_FLAGS:
        if _flag(flags, d[1:].split("=")[0]) is None:
            flags.append(d)
    if _flag(flags, "artifact_prefix") is None:
        crashes = FUZZ_DIR / "crashes" / name
        crashes.mkdir(parents=True, exist_ok=True)
        flags.append(f"-artifact_prefix={crashes}/")
    if atheris is not None:
        atheris.Setup([sys.argv[0], *flags, *dirs], test_one_input)
        atheris.Fuzz()
    else:
        _hypothesis(name, test_one_input, dirs, flags)


def _hypothesis(name: str, test_one_input: Callable[[bytes], None], dirs: list[str],
                flags: list[str]) -> None:
    """The fallback: every corpus input once, then hypothesis-generated inputs (random bytes
    and seeds with bytes flipped, cut or spliced) until the budget is spent."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    corpus = [p.read_bytes() for d in dirs for p in sorted(Path(d).iterdir()) if p.is_file()]
    runs = int(_flag(flags, "runs") or 100_000)
    budget = float(_flag(flags, "max_total_time") or 0) or float("inf")
    start = time.monotonic()
    for data in corpus:
        test_one_input(data)

    @st.composite
    def mutated(draw) -> bytes:
        base = bytearray(draw(st.sampled_from(corpus))) if corpus else bytearray()
        for _ in range(draw(st.integers(0, 8))):
            op = draw(st.integers(0, 3))
            at = draw(st.integers(0, max(len(base) - 1, 0)))
            if op == 0 and base:
                base[at] = draw(st.integers(0, 255))
            elif op == 1:
                del base[at:at + draw(st.integers(1, 64))]
            elif op == 2:
                base[at:at] = draw(st.binary(max_size=64))
            elif base:
                base = base[:at]
        return bytes(base)

    done = 0
    chunk = 500
    while done < runs and time.monotonic() - start < budget:
        n = min(chunk, runs - done)

        @settings(max_examples=n, deadline=None, database=None, derandomize=False,
                  suppress_health_check=list(HealthCheck))
        @given(st.one_of(st.binary(max_size=4096), mutated()))
        def round_(data: bytes) -> None:
            test_one_input(data)

        round_()
        done += n
    print(f"#{done} DONE (hypothesis fallback, {name}) in {time.monotonic() - start:.0f}s", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit("run a fuzz_<parser>.py harness, not this module")

