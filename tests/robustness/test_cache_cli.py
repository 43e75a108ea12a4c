"""The cache seen from the CLI: every verb that caches gives the same report cold, warm, after
its entries were damaged (each is detected, dropped and rebuilt), and when several runs share
one cold cache at once (entries are written to a temporary file and renamed).

The cache's own tests (tests/core/test_cache.py) cover the format: `test_corrupted_entry_is_detected_and_rebuilt`
(truncated, flipped, foreign, empty entries), `test_concurrent_writers_never_corrupt` (4 processes
writing one key), `test_unwritable_cache_is_ignored`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.robustness.hostile import Hostile, build
from wheeldoc.core.cache import Cache

GPU = ("--gpu", "h200", "--driver", "580.95.05")
REPO = Path(__file__).resolve().parents[2]  # subprocesses run the wheeldoc of this checkout


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Hostile:
    return build(tmp_path_factory.mktemp("hostile"))


def run(cache: Path, *argv: str) -> tuple[int, dict]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "WHEELDOC_CACHE_DIR": str(cache), "NO_COLOR": "1"}
    proc = subprocess.run([sys.executable, "-m", "wheeldoc", *argv, "--format", "json"], env=env,
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.returncode, _stable(json.loads(proc.stdout))


def _stable(value):
    """The report less what must differ between runs: timings and cache hit/miss counters."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in value.items() if k != "timings" and not k.startswith("cache_")}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def entries(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*") if p.is_file())


def verbs(h: Hostile) -> dict[str, tuple[str, ...]]:
    return {"kernels": ("kernels", str(h.wheel), *GPU),
            "abi": ("abi", str(h.wheel), str(h.torch_wheel)),
            "doctor": ("doctor", "--site-packages", str(h.site), *GPU),
            "image": ("image", str(h.image), *GPU)}


@pytest.mark.slow
@pytest.mark.parametrize("verb", ["kernels", "abi", "doctor", "image"])
def test_damaged_entries_are_rebuilt_and_change_nothing(hostile, tmp_path, verb):
    argv = verbs(hostile)[verb]
    cache = tmp_path / "cache"
    cold = run(cache, *argv)
    written = entries(cache)
    assert written, f"{verb} wrote nothing to the cache"
    assert all(valid(cache, p) for p in written)
    assert run(cache, *argv) == cold  # warm
    for i, p in enumerate(written):  # three kinds of damage, in turn
        raw = p.read_bytes()
        p.write_bytes([raw[: len(raw) // 2], raw[:-1] + bytes([raw[-1] ^ 0xFF]), b"garbage"][i % 3])
    assert run(cache, *argv) == cold
    after = entries(cache)
    assert [p.name for p in after] == [p.name for p in written]
    assert all(valid(cache, p) for p in after)  # each damaged entry was dropped and written again


def valid(cache: Path, entry: Path) -> bool:
    """The entry decodes (checksum and JSON) through the cache itself: <root>/<kind>/<xx>/<sha>.<version>."""
    kind = entry.relative_to(cache).parts[0]
    sha, version = entry.name.split(".", 1)
    c = Cache(cache)
    return c.get(kind, sha, version) is not None and c.rebuilt == 0


@pytest.mark.slow
@pytest.mark.parametrize("verb", ["kernels", "doctor"])
def test_concurrent_runs_share_a_cold_cache(hostile, tmp_path, verb):
    argv = verbs(hostile)[verb]
    expected = run(tmp_path / "alone", *argv)
    cache = tmp_path / "shared"
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: run(cache, *argv), range(4)))
    assert results == [expected] * 4
    files = entries(cache)
    assert [p.name for p in files] == [p.name for p in entries(tmp_path / "alone")]
    assert not [p for p in files if p.name.startswith(".tmp-")]  # no temporary file left behind
    assert all(valid(cache, p) for p in files)
    assert run(cache, *argv) == expected
