#!/usr/bin/env python3
"""`wheeldoc abi EXT torch==X` from the torch index, side by side with today's resolve-and-download path.

    python bench/bench_abi_index.py EXT.whl torch==X [--range 'torch>=2.4,<2.16'] [--runs 3]

Every command runs in a fresh process with a fresh, empty cache folder (cold: the extension's
members are read and cached inside the timed run), as the `wheeldoc` command of an install (this
checkout built and installed with uv into a fresh virtual environment with `wheeldoc[fast,resolve]`,
bytecode compiled: bench/installed.py), from a scratch working directory; `--source` runs
`python -m wheeldoc` from this checkout instead:
- index: `wheeldoc abi EXT torch==X` (the torch index answers; no uv, no download), with
  python-isal (`wheeldoc[fast]`) and without it (zlib, a plain install);
- wheel: `wheeldoc abi EXT torch==X --no-torch-index` (uv resolves torch on the package index and
  the wheel is downloaded into the empty cache, then read) — run once, it downloads ~1 GB;
- range: `wheeldoc abi EXT RANGE` over every release the index holds in the range.
Prints wall seconds (median of --runs for the index runs), CPU seconds (user + system: what a
busy machine cannot hide) and the ratio wheel / index. Targets (issue 15): index < 1 s (with
wheeldoc[fast]), range < 3 s. Exit status 1 when a target is missed or a command fails.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


CPU: list[float] = []  # user + system seconds of each timed command, in order
WHEELDOC: list[str] = [sys.executable, "-m", "wheeldoc"]  # the installed command (main() sets it)
CWD = str(ROOT)


NO_ISAL = tempfile.mkdtemp(prefix="bench-no-isal-")  # on PYTHONPATH: `import isal` fails, as without wheeldoc[fast]
Path(NO_ISAL, "isal.py").write_text("raise ImportError('python-isal hidden by the benchmark')\n")


def timed(argv: list[str], isal: bool = True) -> tuple[float, dict]:
    import resource

    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "WHEELDOC_CACHE_DIR": cache}
        if not isal:
            env["PYTHONPATH"] = NO_ISAL + os.pathsep + env.get("PYTHONPATH", "")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        proc = subprocess.run([*WHEELDOC, *argv, "--format", "json"], cwd=CWD, env=env,
                              capture_output=True, text=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        CPU.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, json.loads(proc.stdout)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("extension")
    ap.add_argument("torch")
    ap.add_argument("--range", default="torch>=2.4,<2.16")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-wheel", action="store_true", help="do not run the download path")
    ap.add_argument("--source", action="store_true", help="run `python -m wheeldoc` from this checkout")
    args = ap.parse_args()
    args.extension = str(Path(args.extension).resolve()) if Path(args.extension).exists() else args.extension
    if args.source:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "wheeldoc")], check=True)
    else:
        global CWD
        from installed import install

        CWD = tempfile.mkdtemp(prefix="bench-abi-")
        WHEELDOC[:] = [str(install(CWD, "fast,resolve"))]
    plain = [timed(["abi", args.extension, args.torch], isal=False) for _ in range(args.runs)]
    plain_cpu = statistics.median(CPU[-args.runs:])
    index = [timed(["abi", args.extension, args.torch]) for _ in range(args.runs)]
    index_cpu = statistics.median(CPU[-args.runs:])
    walls = [w for w, _ in index]
    doc = index[0][1]
    assert doc["torch"].get("origin") == "index", doc["torch"]
    ranged = [timed(["abi", args.extension, args.range]) for _ in range(args.runs)]
    range_cpu = statistics.median(CPU[-args.runs:])
    rows = [("index: abi EXT " + args.torch + " (wheeldoc[fast]: python-isal)", statistics.median(walls), min(walls)),
            ("index: abi EXT " + args.torch + " (zlib: no extras)", statistics.median(w for w, _ in plain),
             min(w for w, _ in plain)),
            (f"range over the index: {args.range} ({len(ranged[0][1]['matrix'])} releases)",
             statistics.median(w for w, _ in ranged), min(w for w, _ in ranged))]
    failed = rows[0][1] >= 1.0 or rows[2][1] >= 3.0
    if not args.skip_wheel:
        wall, wdoc = timed(["abi", args.extension, args.torch, "--no-torch-index"])
        rows.append(("wheel: resolve + download + read (--no-torch-index)", wall, wall))
        wheel_cpu = CPU[-1]
        same = (wdoc["verdict"], wdoc["extensions"]) == (doc["verdict"], doc["extensions"])
        print(f"same verdict and per-object answers from the index and the wheel: {same}")
        failed |= not same
    cpus = [index_cpu, plain_cpu, range_cpu] + ([wheel_cpu] if not args.skip_wheel else [])
    print(f"{'command':<72} {'median s':>9} {'best s':>8} {'CPU s':>7}")
    for (name, med, best), cpu in zip(rows, cpus):
        print(f"{name:<72} {med:>9.3f} {best:>8.3f} {cpu:>7.2f}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    if not args.skip_wheel:
        print(f"ratio wheel / index: {rows[3][1] / rows[0][1]:.1f}x (fast), {rows[3][1] / rows[1][1]:.1f}x (zlib)")
    print(f"verdict {doc['verdict']} on {doc['torch']['wheel']} (sha256 {doc['torch']['wheel_sha256'][:16]}…)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
