#!/usr/bin/env python3
"""`wheeldoc kernels WHEEL` cold on a large real GPU wheel against merely inflating its shared
objects with zipfile, and `--format json` against the text listing.

    uv run python bench/bench_kernels_wheel.py [WHEEL] [--runs 3] [--listing LIB]

Every command is a fresh child process (interpreter start included), run alternately after
one untimed warm-up each, so the wheel is in the page cache for all; wall time around each
child, peak RSS from the child's rusage (os.wait4). "Cold" means an empty wheeldoc cache, so
every member is inflated and read. The anchor is the same Python inflating every `*.so*` member
with zipfile (read in 1 MiB pieces, discarded): the least any reader of the wheel must do.
With --listing LIB (e.g. libcublasLt.so.13), `kernels LIB --list` in text and in JSON are
timed too. Targets (issue 11): cold no slower than the anchor, peak RSS under 300 MB, JSON
within 1.2x of text.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = "/work/wheels/sgl_kernel-0.3.21-cp310-abi3-manylinux2014_x86_64.whl"
INFLATE = """
import re, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for i in z.infolist():
        if re.search(r"\\.so(\\.|$)", i.filename.rsplit("/", 1)[-1]):
            with z.open(i) as f:
                while f.read(1 << 20):
                    pass
"""


def run_child(argv, env, cwd):
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        out.seek(0)
        size = len(out.read())
    return wall, usage.ru_maxrss, os.waitstatus_to_exitcode(status), size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheel", nargs="?", default=DEFAULT)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--listing", help="a library for the text / JSON listing rows")
    args = ap.parse_args()
    py = sys.executable
    subprocess.run([py, "-m", "compileall", "-q", str(ROOT / "wheeldoc")], check=True)
    scratch = tempfile.mkdtemp(prefix="bench-wheel-")
    cache = tempfile.mkdtemp(prefix="bench-wheel-cache-")
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
           "PYTHONPATH": str(ROOT), "WHEELDOC_CACHE_DIR": cache}
    wd = [py, "-m", "wheeldoc", "kernels"]
    cmds = {
        "zipfile: inflate every *.so* member (anchor)": [py, "-c", INFLATE, args.wheel],
        "wheeldoc kernels WHEEL (coverage), cold": wd + [args.wheel],
        "wheeldoc kernels WHEEL --gpu h200 --driver 580.95.05, cold":
            wd + [args.wheel, "--gpu", "h200", "--driver", "580.95.05"],
        "wheeldoc kernels WHEEL --list, cold": wd + [args.wheel, "--list"],
    }
    if args.listing:
        cmds["kernels LIB --list (text)"] = wd + [args.listing, "--list"]
        cmds["kernels LIB --list --format json"] = wd + [args.listing, "--list", "--format", "json"]
    walls = {k: [] for k in cmds}
    rss = {k: [] for k in cmds}
    for name, argv in cmds.items():  # warm-up: page cache, bytecode
        shutil.rmtree(cache, ignore_errors=True)
        _, _, code, _ = run_child(argv, env, scratch)
        if code not in (0, 1):
            sys.exit(f"{name}: exit code {code}")
    for i in range(args.runs):
        for name, argv in cmds.items():
            shutil.rmtree(cache, ignore_errors=True)  # cold: nothing cached
            wall, peak, _, _ = run_child(argv, env, scratch)
            walls[name].append(wall)
            rss[name].append(peak)
        print(f"  run {i + 1}/{args.runs} done", flush=True)
    anchor = statistics.median(walls["zipfile: inflate every *.so* member (anchor)"])
    print(f"\nwheel: {args.wheel} ({os.path.getsize(args.wheel) / 1e6:.0f} MB)\n")
    print(f"| command ({args.runs} runs, median) | wall | anchor / this | peak RSS |")
    print("|---|---|---|---|")
    for name in cmds:
        w = statistics.median(walls[name])
        print(f"| {name} | {w:.2f} s (min {min(walls[name]):.2f}) | {anchor / w:.2f}x | "
              f"{max(rss[name]) / 1024:.0f} MiB |")
    if args.listing:
        t = statistics.median(walls["kernels LIB --list (text)"])
        j = statistics.median(walls["kernels LIB --list --format json"])
        print(f"\nJSON / text on {args.listing}: {j / t:.2f}x (target <= 1.2x)")
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
