#!/usr/bin/env python3
"""`wheeldoc check` on a big uv.lock, side by side with a bare interpreter that only loads it.

    python bench/bench_check.py [LOCKFILE] [--runs 15] [--packages 1000]

Without LOCKFILE it generates a 1,000-package uv.lock (fixtures/locks/make_big_lock.py)
in a temporary folder. Each command runs in a fresh interpreter (start-up included), with
the same Python as this script; the table shows the median and best wall time of `--runs`
runs and the ratio to the bare tomli load. Targets (issue 2): `wheeldoc check` < 0.3 s and
within 2x of the bare load.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed(cmd: list[str], runs: int) -> tuple[list[float], subprocess.CompletedProcess]:
    times = []
    proc = None
    for _ in range(runs):
        t = time.perf_counter()
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        times.append(time.perf_counter() - t)
    assert proc is not None
    return times, proc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("lockfile", nargs="?", type=Path)
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--packages", type=int, default=1000)
    args = ap.parse_args()

    tmp = None
    lock = args.lockfile
    if lock is None:
        sys.path.insert(0, str(REPO / "fixtures" / "locks"))
        from make_big_lock import big_lock

        tmp = tempfile.TemporaryDirectory()
        lock = Path(tmp.name) / "uv.lock"
        lock.write_text(big_lock(args.packages))
    size = lock.stat().st_size
    print(f"{lock}: {size / 1e6:.2f} MB, {lock.read_text().count('[[package]]')} [[package]] tables, "
          f"{args.runs} runs each, {sys.executable}")

    py = sys.executable
    # An installed wheeldoc has its bytecode compiled (pip and `uv tool install` do it); this
    # checkout may run with PYTHONDONTWRITEBYTECODE, so compile once, as an install would.
    subprocess.run([py, "-m", "compileall", "-q", str(REPO / "wheeldoc")], check=True)
    commands = [
        ("bare: python -c tomli.load", [py, "-c", f"import tomli; tomli.load(open({str(lock)!r}, 'rb'))"]),
        ("source: load_lockfile", [py, "-c", "from wheeldoc.lockfile.source import load_lockfile; "
                                              f"load_lockfile({str(lock)!r})"]),
        ("python -m wheeldoc check", [py, "-m", "wheeldoc", "check", str(lock)]),
        ("wheeldoc --version", [py, "-m", "wheeldoc", "--version"]),
    ]
    rows = []
    base = None
    status = 0
    for label, cmd in commands:
        times, proc = timed(cmd, args.runs)
        if proc.returncode not in (0, 1):  # 1 = findings, a normal result for `check`
            last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
            print(f"{label:28s} FAILED (exit {proc.returncode}): {last[0]}")
            if "check" in label:
                print("  `wheeldoc check` is not usable yet: the CLI may not exist at this commit.")
            status = 1
            continue
        med, best = statistics.median(times), min(times)
        base = base or med
        rows.append((label, med, best, med / base))
    print(f"{'command':28s} {'median s':>9s} {'best s':>8s} {'ratio':>6s}")
    for label, med, best, ratio in rows:
        print(f"{label:28s} {med:9.3f} {best:8.3f} {ratio:6.2f}x")
    if tmp:
        tmp.cleanup()
    return status


if __name__ == "__main__":
    raise SystemExit(main())
