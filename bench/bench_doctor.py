#!/usr/bin/env python3
"""`wheeldoc doctor` end to end, cold (a fresh cache) and warm, beside cuobjdump on the same
libraries (what listing the environment's GPU code costs without wheeldoc).

    PYTHONPATH=. python3 bench/bench_doctor.py [--python PATH | --site-packages DIR] [--gpu h200 --driver 580.95.05]
                                              [--repeat 3] [--out DIR] [--cuobjdump PATH]

Each doctor run is a fresh `python -m wheeldoc doctor --format json` process: wall time and
the CPU time of the process (children included). Cold runs get an empty cache directory
(WHEELDOC_CACHE_DIR) each; warm runs share one filled by a run before them. The libraries
are those the doctor reports with GPU code; cuobjdump (`-lelf -lptx`) is timed once over all
of them one after the other (its CPU time is the sum) and once with one process per core.
Writes bench_doctor.md and bench_doctor.json to --out (default $OUT or the current folder).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def doctor(argv: list[str], cache: str) -> tuple[float, float, dict]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "WHEELDOC_CACHE_DIR": cache}
    c0, t0 = children_cpu(), time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "wheeldoc", "doctor", *argv, "--format", "json",
                           "--fail-on", "never"], capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    wall, cpu = time.perf_counter() - t0, children_cpu() - c0
    if proc.returncode != 0:
        sys.exit(f"wheeldoc doctor failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, cpu, json.loads(proc.stdout)


def cuobjdump(exe: str, paths: list[str], jobs: int) -> tuple[float, float]:
    def one(p: str) -> None:
        subprocess.run([exe, "-lelf", "-lptx", p], capture_output=True, check=False)

    c0, t0 = children_cpu(), time.perf_counter()
    if jobs == 1:
        for p in paths:
            one(p)
    else:
        with ThreadPoolExecutor(jobs) as pool:
            list(pool.map(one, paths))
    return time.perf_counter() - t0, children_cpu() - c0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=None)
    ap.add_argument("--site-packages", default=None)
    ap.add_argument("--gpu", default=None)
    ap.add_argument("--driver", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump")
    args = ap.parse_args()
    argv = ([f"--python={args.python}"] if args.python else []) + \
        ([f"--site-packages={args.site_packages}"] if args.site_packages else []) + \
        ([f"--gpu={args.gpu}"] if args.gpu else []) + ([f"--driver={args.driver}"] if args.driver else [])
    work = Path(tempfile.mkdtemp(prefix="bench-doctor-"))
    cold, warm = [], []
    doc = None
    for i in range(args.repeat):
        wall, cpu, doc = doctor(argv, str(work / f"cold{i}"))
        cold.append((wall, cpu))
        print(f"cold {i}: {wall:.2f} s wall, {cpu:.2f} s CPU, verdict {doc['verdict']}", flush=True)
    shared = str(work / "cold0")  # filled by the first cold run
    for i in range(args.repeat):
        wall, cpu, wdoc = doctor(argv, shared)
        warm.append((wall, cpu))
        assert wdoc["findings"] == doc["findings"], "a warm run reported other findings"
        print(f"warm {i}: {wall:.2f} s wall, {cpu:.2f} s CPU", flush=True)
    libs = [r["path"] for r in doc["kernels"]]
    size = sum(os.path.getsize(p) for p in libs)
    serial_wall, serial_cpu = cuobjdump(args.cuobjdump, libs, 1)
    jobs = os.cpu_count() or 1
    par_wall, par_cpu = cuobjdump(args.cuobjdump, libs, jobs)
    shutil.rmtree(work, ignore_errors=True)
    med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
    summary = {
        "libraries_with_gpu_code": len(libs), "gpu_code_bytes": size,
        "shared_objects": doc["environment"]["libraries"], "distributions": doc["environment"]["distributions"],
        "verdict": doc["verdict"], "target": doc["target"], "cpus": jobs,
        "doctor_cold_wall_s": round(med(cold, 0), 3), "doctor_cold_cpu_s": round(med(cold, 1), 3),
        "doctor_warm_wall_s": round(med(warm, 0), 3), "doctor_warm_cpu_s": round(med(warm, 1), 3),
        "cuobjdump_serial_wall_s": round(serial_wall, 2), "cuobjdump_cpu_s": round(serial_cpu, 2),
        "cuobjdump_parallel_wall_s": round(par_wall, 2), "cuobjdump_parallel_jobs": jobs,
        "ratio_cuobjdump_cpu_to_doctor_cold_wall": round(serial_cpu / med(cold, 0), 1),
        "ratio_cuobjdump_parallel_wall_to_doctor_cold_wall": round(par_wall / med(cold, 0), 1),
        "ratio_cuobjdump_cpu_to_doctor_warm_wall": round(serial_cpu / med(warm, 0), 1),
        "doctor_timings_last_cold": doc.get("timings"), "cold_runs": cold, "warm_runs": warm,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench_doctor.json").write_text(json.dumps(summary, indent=1))
    md = ["# bench_doctor", "", f"{len(libs)} libraries with GPU code ({size / 1e9:.2f} GB) among "
          f"{summary['shared_objects']} shared objects of {summary['distributions']} distributions; {jobs} CPUs.", "",
          "| what | wall s | CPU s |", "|---|---|---|",
          f"| wheeldoc doctor, cold (median of {args.repeat}) | {summary['doctor_cold_wall_s']} | {summary['doctor_cold_cpu_s']} |",
          f"| wheeldoc doctor, warm (median of {args.repeat}) | {summary['doctor_warm_wall_s']} | {summary['doctor_warm_cpu_s']} |",
          f"| cuobjdump -lelf -lptx, one library after the other | {summary['cuobjdump_serial_wall_s']} | {summary['cuobjdump_cpu_s']} |",
          f"| cuobjdump -lelf -lptx, {jobs} at a time | {summary['cuobjdump_parallel_wall_s']} | {round(par_cpu, 2)} |",
          "", f"cuobjdump CPU / doctor cold wall: **{summary['ratio_cuobjdump_cpu_to_doctor_cold_wall']}x**; "
          f"cuobjdump parallel wall / doctor cold wall: **{summary['ratio_cuobjdump_parallel_wall_to_doctor_cold_wall']}x**; "
          f"cuobjdump CPU / doctor warm wall: **{summary['ratio_cuobjdump_cpu_to_doctor_warm_wall']}x**."]
    (args.out / "bench_doctor.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
