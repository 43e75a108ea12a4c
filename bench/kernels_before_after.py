#!/usr/bin/env python3
"""`wheeldoc kernels WHEEL --format json` from two revisions of this repository, byte for byte.

    uv run python bench/kernels_before_after.py REV WHEEL... [--modes cov,list,h200]

REV's tree is exported with `git archive` into a temporary folder; each wheel is read by both
trees in three views (the coverage table, `--list`, `--gpu h200 --driver 580.95.05`), each with
an empty cache, by the same interpreter. Prints one line per wheel and view and exits 1 when
any document (or exit code) differs. Used to show that reading large members while they
inflate (wheeldoc.kernels.stream) changed no report on the real wheels.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODES = {"cov": [], "list": ["--list"], "h200": ["--gpu", "h200", "--driver", "580.95.05"]}


def run(tree: Path, wheel: str, extra: list[str], scratch: str) -> tuple[int, bytes, float]:
    cache = tempfile.mkdtemp(prefix="wd-cache-", dir=scratch)
    env = {**os.environ, "PYTHONPATH": str(tree), "WHEELDOC_CACHE_DIR": cache}
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "wheeldoc", "kernels", wheel, *extra,
                           "--format", "json"], capture_output=True, env=env, cwd=scratch)
    wall = time.perf_counter() - t0
    shutil.rmtree(cache, ignore_errors=True)
    return proc.returncode, proc.stdout, wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", help="the revision to compare with (e.g. a commit before the change)")
    ap.add_argument("wheels", nargs="+")
    ap.add_argument("--modes", default="cov,list,h200")
    args = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="wd-before-after-")
    old = Path(scratch) / "old"
    old.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.rev], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
    differ = 0
    try:
        for wheel in args.wheels:
            for mode in args.modes.split(","):
                a = run(old, wheel, MODES[mode], scratch)
                b = run(ROOT, wheel, MODES[mode], scratch)
                same = a[:2] == b[:2]
                differ += not same
                print(f"{'same' if same else 'DIFF'} {Path(wheel).name} {mode}: exit {a[0]}/{b[0]}, "
                      f"{len(a[1]):,} bytes; {a[2]:.1f} s before, {b[2]:.1f} s now", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"\n{differ} of {len(args.wheels) * len(args.modes.split(','))} documents differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
