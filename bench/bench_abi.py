#!/usr/bin/env python3
"""`wheeldoc abi torchvision.whl torch.whl`, cold and warm, side by side with the floor.

    uv run python bench/bench_abi.py [--runs 3] [--warm-runs 7]

The floor is what a cold run cannot avoid: inflating, with zipfile alone, exactly the torch
members wheeldoc reads (taken from the run's own JSON `members_read`; for torch 2.14.1 the
string tables sit at the end of libtorch_cpu.so and libtorch_cuda.so, so those inflate
whole). Floor and cold runs alternate, each cold run with an empty cache; warm runs reuse the
last cache. Every wheeldoc run is a fresh interpreter (start-up included) with its bytecode
compiled first, as an install would have it. Targets (issue 3): cold within 1.3x of the floor,
warm under 0.5 s.
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
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FILES = Path("/opt/pypi-more/files")
TORCH = FILES / "torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl"
VISION = FILES / "torchvision-0.29.1-cp311-cp311-manylinux_2_28_x86_64.whl"


def wheeldoc(ext: Path, torch: Path, cache: Path, fmt: str = "text") -> tuple[float, str]:
    env = {**os.environ, "WHEELDOC_CACHE_DIR": str(cache)}
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "wheeldoc", "abi", str(ext), str(torch), "--format", fmt,
                           "--color", "never"], cwd=REPO, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"wheeldoc failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def inflate(wheel: Path, members: list[str]) -> float:
    t = time.perf_counter()
    with zipfile.ZipFile(wheel) as zf:
        for m in members:
            with zf.open(m) as f:
                while f.read(8 << 20):
                    pass
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ext", type=Path, default=VISION)
    ap.add_argument("--torch", type=Path, default=TORCH)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--warm-runs", type=int, default=7)
    args = ap.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "wheeldoc")], check=True,
                   capture_output=True)
    print(f"ext:   {args.ext}\ntorch: {args.torch}\n{sys.executable}, {os.cpu_count()} CPUs")

    with tempfile.TemporaryDirectory(prefix="wheeldoc-bench-abi-") as tmp:
        probe = Path(tmp) / "probe"
        _, out = wheeldoc(args.ext, args.torch, probe, "json")
        doc = json.loads(out)
        members = [m["member"] for m in doc["members_read"] if m["package"] == (doc["torch"]["name"] or "torch")]
        with zipfile.ZipFile(args.torch) as zf:
            inflated = sum(zf.getinfo(m).file_size for m in members)
        print(f"verdict: {doc['verdict']}; torch members read: {len(members)} ({inflated / 1e6:.0f} MB inflated)")

        floors, colds = [], []
        for i in range(args.runs):
            floors.append(inflate(args.torch, members))
            cache = Path(tmp) / f"cold-{i}"
            colds.append(wheeldoc(args.ext, args.torch, cache)[0])
        warms = [wheeldoc(args.ext, args.torch, cache)[0] for _ in range(args.warm_runs)]

    def line(label: str, times: list[float]) -> str:
        return f"  {label:<44} median {statistics.median(times):6.3f} s   best {min(times):6.3f} s"

    ratio = statistics.median(colds) / statistics.median(floors)
    print(line("floor: zipfile inflate of those members", floors))
    print(line("wheeldoc abi, cold (empty cache)", colds))
    print(line("wheeldoc abi, warm (cached)", warms))
    print(f"  cold / floor (medians): {ratio:.2f}x (target <= 1.3x); "
          f"warm median {statistics.median(warms):.3f} s (target < 0.5 s)")
    return 0 if ratio <= 1.3 and statistics.median(warms) < 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
