#!/usr/bin/env python3
"""On a machine with a GPU and a real CUDA Python environment: every installed library with GPU
code, wheeldoc's entry listing against `cuobjdump -lelf -lptx`, and a sample of containers loaded
with cuModuleLoadData against wheeldoc's prediction for the device.

    PYTHONPATH=. python3 bench/h200_libraries.py [--site-packages DIR]... [--out DIR] [--sample 24]

Needs Python 3, this repository, cuobjdump on PATH (or --cuobjdump) and libcuda.so.1. Writes
h200_libraries.md and h200_libraries.json to --out (default $OUT or the current directory).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from wheeldoc.data.tables import ptx_isa_for_cuda  # noqa: E402
from wheeldoc.errors import InputError  # noqa: E402
from wheeldoc.kernels_model import predict_container  # noqa: E402
from wheeldoc.sources.fatbin import container_bytes, listing, open_fatbin  # noqa: E402


def gpu_libraries(roots: list[Path]) -> list[Path]:
    """Regular ELF files named *.so* under the roots that hold a fatbin section."""
    out = []
    for root in roots:
        for dirpath, _, files in os.walk(root):
            for name in files:
                if ".so" not in name:
                    continue
                p = Path(dirpath, name)
                if p.is_symlink() or not p.is_file():
                    continue
                with open(p, "rb") as f:
                    if f.read(4) != b"\x7fELF":
                        continue
                try:
                    fb = open_fatbin(p)
                except InputError:
                    continue
                if fb.format == "elf" and fb.containers:
                    out.append(p)
    return sorted(set(out))


def same_but_f_quirk(mine: list[str], theirs: list[str]) -> tuple[bool, int, str]:
    if len(mine) != len(theirs):
        return False, 0, f"{len(mine)} vs {len(theirs)} lines"
    quirks = 0
    for a, b in zip(mine, theirs):
        if a == b:
            continue
        if re.sub(r"(\.sm_\d+)f\.cubin$", r"\1.cubin", a) == b:
            quirks += 1
            continue
        return False, quirks, f"first difference: {a!r} vs {b!r}"
    return True, quirks, ""


def entry_record(e) -> dict:
    """What the load prediction reads from an entry, so the JSON can be replayed later
    (bench/groundtruth_replay.py) without the library file."""
    return {"kind": e.kind, "sm": e.sm, "suffix": e.suffix, "code_version": list(e.code_version),
            "concat": e.parent is not None}


def sample(containers, n: int) -> list:
    if len(containers) <= n:
        return list(containers)
    step = len(containers) / n
    return [containers[int(i * step)] for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--site-packages", action="append", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    ap.add_argument("--sample", type=int, default=24, help="containers loaded per library")
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    args = ap.parse_args()
    roots = args.site_packages or [Path(sysconfig.get_paths()["purelib"])]
    t0 = time.perf_counter()
    libs = gpu_libraries(roots)
    t_find = time.perf_counter() - t0
    print(f"{len(libs)} libraries with GPU code under {', '.join(map(str, roots))} ({t_find:.2f} s)", flush=True)

    t0 = time.perf_counter()
    mine = {}
    for p in libs:
        fb = open_fatbin(p)
        mine[p] = (fb, listing(fb, p.name))
    t_wheeldoc = time.perf_counter() - t0
    print(f"wheeldoc listed all in {t_wheeldoc:.2f} s", flush=True)

    def run_cuobjdump(p: Path):
        t = time.perf_counter()
        proc = subprocess.run([args.cuobjdump, "-lelf", "-lptx", str(p)], capture_output=True, text=True)
        return p, proc.stdout.splitlines(), proc.returncode, time.perf_counter() - t

    t0 = time.perf_counter()
    with ThreadPoolExecutor(args.jobs) as pool:
        theirs = {p: (lines, rc, dt) for p, lines, rc, dt in pool.map(run_cuobjdump, libs)}
    t_cuobjdump_wall = time.perf_counter() - t0
    t_cuobjdump_sum = sum(dt for _, _, dt in theirs.values())
    print(f"cuobjdump: {t_cuobjdump_wall:.1f} s wall with {args.jobs} jobs, {t_cuobjdump_sum:.1f} s summed", flush=True)

    from gpu_groundtruth import Driver

    driver = Driver()
    isa = ptx_isa_for_cuda(driver.cuda)
    rows = []
    for p in libs:
        fb, lines = mine[p]
        their_lines, rc, dt = theirs[p]
        ok, quirks, why = same_but_f_quirk(lines, their_lines)
        loads = []
        for c in sample([c for c in fb.containers if c.entries], args.sample):
            pred = predict_container(c.entries, driver.cc, isa, driver_cuda=driver.cuda)
            code, _ = driver.load(container_bytes(p, c), [])
            actual = driver.error_name(code)
            loads.append({"container": c.index, "entries": [entry_record(e) for e in c.entries],
                          "predicted": pred.verdict,
                          "predicted_error": pred.cuda_error or "CUDA_SUCCESS", "actual_error": actual,
                          "agrees": actual == (pred.cuda_error or "CUDA_SUCCESS")})
        rows.append({"library": str(p), "entries": len(fb.entries), "containers": len(fb.containers),
                     "size": p.stat().st_size, "listing_equal": ok, "f_quirks": quirks, "diff": why,
                     "cuobjdump_rc": rc, "cuobjdump_s": round(dt, 3),
                     "loads": loads, "loads_agree": sum(x["agrees"] for x in loads)})
        print(f"{p.name}: {len(fb.entries)} entries, listing {'==' if ok else '!='} cuobjdump ({quirks} f quirks)"
              f"; loads {rows[-1]['loads_agree']}/{len(loads)} agree", flush=True)

    args.out.mkdir(parents=True, exist_ok=True)
    summary = {"device": driver.name, "cc": f"{driver.cc[0]}.{driver.cc[1]}",
               "driver_cuda": f"{driver.cuda[0]}.{driver.cuda[1]}", "libraries": len(libs),
               "bytes": sum(r["size"] for r in rows),
               "listing_equal": sum(r["listing_equal"] for r in rows),
               "loads": sum(len(r["loads"]) for r in rows), "loads_agree": sum(r["loads_agree"] for r in rows),
               "wheeldoc_s": round(t_wheeldoc, 3), "find_s": round(t_find, 3),
               "cuobjdump_wall_s": round(t_cuobjdump_wall, 2), "cuobjdump_sum_s": round(t_cuobjdump_sum, 2)}
    (args.out / "h200_libraries.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    md = [f"# Libraries with GPU code on {driver.name} (CC {summary['cc']}, driver CUDA {summary['driver_cuda']})",
          "", "```", json.dumps(summary, indent=1), "```", "",
          "| library | entries | listing = cuobjdump | f quirks | loads agree |", "|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {Path(r['library']).name} | {r['entries']} | {'yes' if r['listing_equal'] else 'NO ' + r['diff']}"
                  f" | {r['f_quirks']} | {r['loads_agree']}/{len(r['loads'])} |")
    (args.out / "h200_libraries.md").write_text("\n".join(md) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
