#!/usr/bin/env python3
"""On a machine with a GPU and a real CUDA Python environment: every installed library with GPU
code, wheeldoc's entry listing against `cuobjdump -lelf -lptx`, and a sample of containers loaded
with cuModuleLoadData against wheeldoc's prediction for the device.

    PYTHONPATH=. python3 bench/h200_libraries.py [--site-packages DIR]... [--out DIR] [--sample 24]
    PYTHONPATH=. python3 bench/h200_libraries.py --doctor-json doctor.json [--out DIR]

With `--doctor-json` (the output of `wheeldoc doctor --list --format json` on that machine) it
checks the doctor instead: every library of its `kernels` listed from its JSON `entries` against
cuobjdump, its per-library counts against the model recomputed here, and its verdicts against
cuModuleLoadData on a stratified sample of the containers they rest on (every container of a
library it calls `fail`); writes h200_doctor.md and h200_doctor.json.

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
from wheeldoc.core.errors import InputError  # noqa: E402
from wheeldoc.kernels.load_model import predict_container  # noqa: E402
from wheeldoc.kernels.fatbin import container_bytes, listing, open_fatbin  # noqa: E402


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


# -- `wheeldoc doctor`'s view of the same environment (--doctor-json) -------------------------------


def listing_from_entries(library: str, entries: list[dict]) -> list[str]:
    """cuobjdump's `-lelf -lptx` lines rebuilt from the doctor's JSON `entries` (written apart
    from wheeldoc's own `listing()`, so the JSON itself is what is checked): ELF and PTX entries
    numbered separately in file order, named `<stem>.<n>.<arch>.<ext>`, or after the entry's
    identifier when it has one."""
    def stem(name: str) -> str:
        base = name.rsplit("/", 1)[-1]
        return base[:base.rfind(".")] if "." in base else base

    counts = {"cubin": 0, "ptx": 0}
    out = []
    for e in entries:
        if e["kind"] not in counts:
            continue
        counts[e["kind"]] += 1
        n = counts[e["kind"]]
        base = f"{stem(e['identifier'])}." if e.get("identifier") else f"{stem(library)}.{n}."
        label, ext = ("ELF", "cubin") if e["kind"] == "cubin" else ("PTX", "ptx")
        out.append(f"{label} file {n:4d}: {base}{e['arch']}.{ext}")
    return out


def _stratified(preds: list, per_verdict: int) -> list:
    """Up to `per_verdict` containers of each predicted outcome, spread over the library."""
    by: dict[str, list] = {}
    for c, p in preds:
        by.setdefault(p.verdict if p.verdict != "fail" else p.cuda_error, []).append((c, p))
    out = []
    for group in by.values():
        out.extend(sample(group, per_verdict))
    return sorted(out, key=lambda cp: cp[0].offset)


def doctor_check(args) -> None:
    """The doctor's per-library listing against cuobjdump, and its kernel verdicts against what
    the driver does with the containers they rest on (cuModuleLoadData)."""
    from wheeldoc.kernels.embedded import scan_file
    from wheeldoc.kernels.load_model import predict_container

    doc = json.loads(Path(args.doctor_json).read_text())
    rows = doc["kernels"]
    by_lib: dict[str, list] = {}
    for e in doc.get("entries", []):
        by_lib.setdefault(e["library"], []).append(e)
    roots = args.site_packages or [Path(p) for p in doc["environment"]["site_packages"]]
    walked = {os.path.realpath(p) for p in gpu_libraries(roots)}
    listed = {os.path.realpath(r["path"]) for r in rows}

    def run_cuobjdump(path: str):
        t = time.perf_counter()
        proc = subprocess.run([args.cuobjdump, "-lelf", "-lptx", path], capture_output=True, text=True)
        return path, proc.stdout.splitlines(), time.perf_counter() - t

    t0 = time.perf_counter()
    with ThreadPoolExecutor(args.jobs) as pool:
        theirs = {p: (lines, dt) for p, lines, dt in pool.map(run_cuobjdump, sorted(r["path"] for r in rows))}
    t_cuobjdump = time.perf_counter() - t0

    if args.dry_run:  # no GPU here: the doctor's own target, and no loads
        t = doc["target"]
        cc = tuple(int(x) for x in t["gpu"]["compute_capability"].split("."))
        cuda = tuple(int(x) for x in t["driver"]["cuda"].split("."))
        driver = type("NoDriver", (), {"cc": cc, "cuda": cuda, "name": f"{t['gpu']['name']} (dry run)",
                                       "load": None})()
    else:
        from gpu_groundtruth import Driver

        driver = Driver()
    isa = ptx_isa_for_cuda(driver.cuda)
    out_rows = []
    for r in rows:
        path = r["path"]
        mine = listing_from_entries(path, by_lib.get(path, []))
        ok, quirks, why = same_but_f_quirk(mine, theirs[path][0])
        load = r["load"]
        if r["format"] == "elf" and load and load.get("source") == "embedded":
            containers = [c for _, c in scan_file(path)]
        else:
            containers = list(open_fatbin(path).containers)
        containers = [c for c in containers if any(e.kind in ("cubin", "ptx") for e in c.entries)]
        preds = [(c, predict_container(c.entries, driver.cc, isa, driver_cuda=driver.cuda)) for c in containers]
        counts = {"containers": len(preds), "native": sum(p.verdict == "native" for _, p in preds),
                  "jit": sum(p.verdict == "jit" for _, p in preds), "fail": sum(p.verdict == "fail" for _, p in preds)}
        same_counts = load is not None and all(load["counts"][k] == v for k, v in counts.items())
        chosen = preds if load is not None and load["verdict"] == "fail" else _stratified(preds, args.sample // 3 or 1)
        loads = []
        for c, p in ([] if args.dry_run else chosen):
            code, _ = driver.load(container_bytes(path, c), [])
            actual = driver.error_name(code)
            loads.append({"container": c.index, "offset": c.offset, "predicted": p.cuda_error or "CUDA_SUCCESS",
                          "actual": actual, "agrees": actual == (p.cuda_error or "CUDA_SUCCESS")})
        any_loads = any(x["actual"] == "CUDA_SUCCESS" for x in loads)
        verdict_agrees = load is not None and ((load["verdict"] == "fail") == (not any_loads)) and not args.dry_run
        out_rows.append({"library": path, "entries": len(by_lib.get(path, [])), "listing_equal": ok,
                         "f_quirks": quirks, "diff": why, "cuobjdump_s": round(theirs[path][1], 3),
                         "doctor_verdict": load["verdict"] if load else None,
                         "doctor_source": load.get("source") if load else None,
                         "doctor_counts": load["counts"] if load else None, "recomputed_counts": counts,
                         "counts_equal": same_counts, "loaded": len(loads),
                         "loads_agree": sum(x["agrees"] for x in loads), "verdict_agrees": verdict_agrees,
                         "loads": loads})
        print(f"{Path(path).name}: listing {'==' if ok else '!='} cuobjdump; doctor {out_rows[-1]['doctor_verdict']}; "
              f"loads {out_rows[-1]['loads_agree']}/{len(loads)} agree; verdict {'agrees' if verdict_agrees else 'DISAGREES'}",
              flush=True)
    summary = {"device": driver.name, "cc": f"{driver.cc[0]}.{driver.cc[1]}",
               "driver_cuda": f"{driver.cuda[0]}.{driver.cuda[1]}", "doctor_verdict": doc["verdict"],
               "doctor_target": doc["target"], "libraries": len(rows),
               "libraries_walked": len(walked), "only_walked": sorted(walked - listed),
               "only_doctor": sorted(listed - walked),
               "listing_equal": sum(r["listing_equal"] for r in out_rows),
               "counts_equal": sum(r["counts_equal"] for r in out_rows),
               "verdicts_agree": sum(r["verdict_agrees"] for r in out_rows),
               "loads": sum(r["loaded"] for r in out_rows), "loads_agree": sum(r["loads_agree"] for r in out_rows),
               "cuobjdump_wall_s": round(t_cuobjdump, 2),
               "cuobjdump_sum_s": round(sum(dt for _, dt in theirs.values()), 2),
               "doctor_timings": doc.get("timings")}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "h200_doctor.json").write_text(json.dumps({"summary": summary, "rows": out_rows}, indent=1))
    md = [f"# `wheeldoc doctor` on {driver.name} (CC {summary['cc']}, driver CUDA {summary['driver_cuda']})", "",
          "```", json.dumps({k: v for k, v in summary.items() if k != "doctor_target"}, indent=1), "```", "",
          "| library | entries | listing = cuobjdump | doctor verdict | counts = recomputed | loads agree | verdict agrees |",
          "|---|---|---|---|---|---|---|"]
    for r in out_rows:
        md.append(f"| {Path(r['library']).name} | {r['entries']} | {'yes' if r['listing_equal'] else 'NO ' + r['diff']} | "
                  f"{r['doctor_verdict']}{' (embedded)' if r['doctor_source'] == 'embedded' else ''} | "
                  f"{'yes' if r['counts_equal'] else 'NO'} | {r['loads_agree']}/{r['loaded']} | "
                  f"{'yes' if r['verdict_agrees'] else 'NO'} |")
    (args.out / "h200_doctor.md").write_text("\n".join(md) + "\n")
    print(json.dumps(summary, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--site-packages", action="append", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    ap.add_argument("--sample", type=int, default=24, help="containers loaded per library")
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) - 2))
    ap.add_argument("--dry-run", action="store_true", help="with --doctor-json: no GPU, no loads")
    ap.add_argument("--doctor-json", default=None,
                    help="check `wheeldoc doctor --list --format json`'s output instead (listing and verdicts)")
    args = ap.parse_args()
    if args.doctor_json:
        doctor_check(args)
        return
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
