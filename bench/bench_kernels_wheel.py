#!/usr/bin/env python3
"""`wheeldoc kernels WHEEL` cold on a large real GPU wheel against merely inflating its shared
objects with zipfile, and `--format json` against the text listing.

    uv run python bench/bench_kernels_wheel.py [WHEEL] [--runs 5] [--listing LIB]

Every command is a fresh child process (interpreter start included), after one untimed warm-up
each, so the wheel is in the page cache for all; wall time around each child, peak RSS from the
child's rusage (os.wait4). "Cold" means an empty wheeldoc cache, so every member is inflated and
read. The anchor is the same Python inflating every `*.so*` member with zipfile (zlib, read in
1 MiB pieces, CRC-32 checked, discarded): the least any reader of the wheel must do. The anchor
runs right before every wheeldoc command (A B A C A D ...), and each ratio is the median of
(anchor just before / that command), so a machine shared with others loads both sides alike.

wheeldoc is timed twice: with zlib, as the anchor inflates (python-isal hidden from the child),
and, when python-isal is installed, with it (`wheeldoc[fast]`). With --listing LIB (e.g.
libcublasLt.so.13), `kernels LIB --list` in text and in JSON are timed too. Targets (issue 11):
cold no slower than the anchor (zlib against zlib), peak RSS under 300 MB, JSON within 1.2x of
text. CPU time (user + system of all threads) is shown too: wheeldoc inflates two members at
once and hashes on other threads, so its wall time can beat the anchor's while it spends more
CPU (the sha256 of every member, for RECORD and the cache key).
"""

from __future__ import annotations

import argparse
import importlib.util
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
# `python -m wheeldoc` with python-isal hidden: the inflater falls back to zlib
ZLIB_ONLY = ("import sys, runpy; sys.modules['isal'] = None; "
             "runpy.run_module('wheeldoc', run_name='__main__', alter_sys=True)")
ANCHOR = "zipfile: inflate every *.so* member (anchor)"


def run_child(argv, env, cwd):
    """Wall seconds, peak RSS (KiB), exit code and CPU seconds (user + system, all threads)."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    return wall, usage.ru_maxrss, os.waitstatus_to_exitcode(status), usage.ru_utime + usage.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheel", nargs="?", default=DEFAULT)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--listing", help="a library for the text / JSON listing rows")
    ap.add_argument("--no-isal", action="store_true", help="skip the rows with python-isal")
    args = ap.parse_args()
    py = sys.executable
    subprocess.run([py, "-m", "compileall", "-q", str(ROOT / "wheeldoc")], check=True)
    scratch = tempfile.mkdtemp(prefix="bench-wheel-")
    cache = tempfile.mkdtemp(prefix="bench-wheel-cache-")
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
           "PYTHONPATH": str(ROOT), "WHEELDOC_CACHE_DIR": cache}
    zlib_wd = [py, "-c", ZLIB_ONLY, "kernels"]
    isal_wd = [py, "-m", "wheeldoc", "kernels"]
    target = ["--gpu", "h200", "--driver", "580.95.05"]
    cmds = {
        ANCHOR: [py, "-c", INFLATE, args.wheel],
        "kernels WHEEL (coverage), zlib": zlib_wd + [args.wheel],
        "kernels WHEEL --gpu h200 --driver 580.95.05, zlib": zlib_wd + [args.wheel, *target],
        "kernels WHEEL --list, zlib": zlib_wd + [args.wheel, "--list"],
    }
    if not args.no_isal and importlib.util.find_spec("isal") is not None:
        cmds["kernels WHEEL (coverage), isal"] = isal_wd + [args.wheel]
        cmds["kernels WHEEL --gpu h200 --driver 580.95.05, isal"] = isal_wd + [args.wheel, *target]
    if args.listing:
        cmds["kernels LIB --list (text)"] = isal_wd + [args.listing, "--list"]
        cmds["kernels LIB --list --format json"] = isal_wd + [args.listing, "--list", "--format", "json"]
    walls = {k: [] for k in cmds}
    cpus = {k: [] for k in cmds}
    rss = {k: [] for k in cmds}
    ratios = {k: [] for k in cmds}
    for name, argv in cmds.items():  # warm-up: page cache, bytecode
        shutil.rmtree(cache, ignore_errors=True)
        _, _, code, _ = run_child(argv, env, scratch)
        if code not in (0, 1):
            sys.exit(f"{name}: exit code {code}")
    for i in range(args.runs):
        for name, argv in cmds.items():
            if name == ANCHOR:
                continue
            for which, av in ((ANCHOR, cmds[ANCHOR]), (name, argv)):  # A B A C ...
                shutil.rmtree(cache, ignore_errors=True)  # cold: nothing cached
                wall, peak, _, cpu = run_child(av, env, scratch)
                walls[which].append(wall)
                cpus[which].append(cpu)
                rss[which].append(peak)
            ratios[name].append(walls[ANCHOR][-1] / walls[name][-1])
        print(f"  run {i + 1}/{args.runs} done (load average {os.getloadavg()[0]:.1f})", flush=True)
    print(f"\nwheel: {args.wheel} ({os.path.getsize(args.wheel) / 1e6:.0f} MB)\n")
    print(f"| command ({args.runs} runs) | wall, median (min) | anchor / this, median of pairs "
          "(min, max) | CPU, median | anchor CPU / this | peak RSS |")
    print("|---|---|---|---|---|---|")
    anchor_cpu = statistics.median(cpus[ANCHOR])
    for name in cmds:
        w = walls[name]
        r = ratios[name]
        ratio = "1.00x" if name == ANCHOR else \
            f"{statistics.median(r):.2f}x ({min(r):.2f}-{max(r):.2f})"
        cpu = statistics.median(cpus[name])
        print(f"| {name} | {statistics.median(w):.2f} s ({min(w):.2f}) | {ratio} | {cpu:.2f} s | "
              f"{anchor_cpu / cpu:.2f}x | {max(rss[name]) / 1024:.0f} MiB |")
    if args.listing:
        t = statistics.median(walls["kernels LIB --list (text)"])
        j = statistics.median(walls["kernels LIB --list --format json"])
        print(f"\nJSON / text on {args.listing}: {j / t:.2f}x (target <= 1.2x)")
    shutil.rmtree(scratch, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
