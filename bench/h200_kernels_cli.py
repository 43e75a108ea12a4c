#!/usr/bin/env python3
"""`wheeldoc kernels` through its CLI on a real CUDA Python environment (the H200 machine's):
`--list` of every library with GPU code against `cuobjdump -lelf -lptx`, then the verdict and
the coverage table for the whole site-packages.

    PYTHONPATH=. python3 bench/h200_kernels_cli.py [--site-packages DIR] [--out DIR]

Needs Python 3, this repository and cuobjdump (no GPU is used). Writes h200_kernels_cli.md
(the commands, their timings, the verdict and coverage as printed) to --out (default $OUT).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from h200_libraries import gpu_libraries, same_but_f_quirk  # noqa: E402


def wheeldoc(*argv: str) -> tuple[float, subprocess.CompletedProcess]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "wheeldoc", "kernels", *argv], capture_output=True,
                          text=True, env=env, cwd="/")
    return time.perf_counter() - t, proc


def embedded_loads(doc: dict, sample: int = 48) -> list[str]:
    """Containers found outside .nv_fatbin (libraries whose verdict came from them): a sample
    loaded with cuModuleLoadData on this GPU against wheeldoc's prediction (needs libcuda)."""
    from gpu_groundtruth import Driver
    from h200_libraries import sample as pick

    from wheeldoc.kernels.embedded import scan_file
    from wheeldoc.data.tables import ptx_isa_for_cuda
    from wheeldoc.kernels.load_model import predict_container
    from wheeldoc.kernels.fatbin import container_bytes

    libs = [x for x in doc["libraries"] if (x["load"] or {}).get("source") == "embedded"]
    if not libs:
        return ["", "No library needed its containers outside .nv_fatbin."]
    driver = Driver()
    isa = ptx_isa_for_cuda(driver.cuda)
    out = ["", "## Containers outside .nv_fatbin, loaded with cuModuleLoadData", "",
           "| library | found | loaded | agree | native / jit / fail (actual) |", "|---|---|---|---|---|"]
    for x in libs:
        found = [c for _, c in scan_file(x["path"]) if any(e.kind in ("cubin", "ptx") for e in c.entries)]
        agree, tally = 0, {}
        preds = {id(c): predict_container(c.entries, driver.cc, isa, driver_cuda=driver.cuda)
                 for c in found}
        chosen = [c for v in ("native", "jit", "fail")  # a sample of each predicted verdict
                  for c in pick([c for c in found if preds[id(c)].verdict == v], sample // 3)]
        for c in chosen:
            pred = preds[id(c)]
            code, _ = driver.load(container_bytes(x["path"], c), [])
            actual = driver.error_name(code)
            agree += actual == (pred.cuda_error or "CUDA_SUCCESS")
            key = pred.verdict if actual == "CUDA_SUCCESS" else actual
            tally[key] = tally.get(key, 0) + 1
        out.append(f"| {Path(x['path']).name} | {len(found)} | {len(chosen)} | {agree}/{len(chosen)} | {tally} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--site-packages", type=Path, default=Path(sysconfig.get_paths()["purelib"]))
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump") or "/usr/local/cuda/bin/cuobjdump")
    args = ap.parse_args()
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "wheeldoc")], check=True)
    args.site_packages = args.site_packages.resolve()
    libs = gpu_libraries([args.site_packages])

    def compare(p: Path):
        t_wd, proc = wheeldoc("--list", str(p))
        t = time.perf_counter()
        theirs = subprocess.run([args.cuobjdump, "-lelf", "-lptx", str(p)], capture_output=True,
                                text=True).stdout.splitlines()
        t_cu = time.perf_counter() - t
        ok, quirks, why = same_but_f_quirk(proc.stdout.splitlines(), theirs)
        return {"library": str(p), "equal": ok and proc.returncode == 0, "f_quirks": quirks,
                "diff": why or proc.stderr[-300:], "wheeldoc_s": round(t_wd, 3),
                "cuobjdump_s": round(t_cu, 3), "lines": len(theirs)}

    with ThreadPoolExecutor(max(1, (os.cpu_count() or 2) // 2)) as pool:
        rows = list(pool.map(compare, libs))
    sp = str(args.site_packages)
    runs = {}
    for label, argv in [("verdict", (sp, "--gpu", "h200", "--driver", "580.159.04")),
                        ("coverage", (sp, "--driver", "580.159.04", "--coverage")),
                        ("gb10", (sp, "--gpu", "gb10", "--driver", "580.95.05")),
                        ("json", (sp, "--gpu", "h200", "--driver", "580.159.04", "--format", "json"))]:
        t, proc = wheeldoc(*argv)
        runs[label] = (t, proc)
    doc = json.loads(runs["json"][1].stdout)
    equal = sum(r["equal"] for r in rows)
    lines = [f"# `wheeldoc kernels` CLI on {sp}", "",
             f"{len(rows)} libraries with GPU code; `wheeldoc kernels --list LIB` equals "
             f"`cuobjdump -lelf -lptx LIB` for **{equal}/{len(rows)}** (apart from the `f` quirk). "
             f"Summed wall time: wheeldoc {sum(r['wheeldoc_s'] for r in rows):.1f} s, cuobjdump "
             f"{sum(r['cuobjdump_s'] for r in rows):.1f} s.", "",
             "| library | lines | equal | f quirks | wheeldoc s | cuobjdump s |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {Path(r['library']).name} | {r['lines']} | {'yes' if r['equal'] else 'NO ' + r['diff']} "
                     f"| {r['f_quirks']} | {r['wheeldoc_s']} | {r['cuobjdump_s']} |")
    counts = {lib["library"].rsplit("/", 1)[-1]: lib["load"]["counts"] for lib in doc["libraries"]}
    lines += ["", f"JSON verdict: {len(doc['libraries'])} libraries, findings {doc['summary']}", "",
              "```json", json.dumps(counts, indent=1), "```"]
    lines += embedded_loads(doc)
    for label in ("verdict", "gb10", "coverage"):
        t, proc = runs[label]
        lines += ["", f"## `wheeldoc kernels {sp} {' '.join(proc.args[5:])}` ({t:.2f} s, exit "
                  f"{proc.returncode})", "", "```", proc.stdout.rstrip(), "```"]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "h200_kernels_cli.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:3]))
    for label in ("verdict", "gb10", "coverage", "json"):
        print(label, f"{runs[label][0]:.2f} s", "exit", runs[label][1].returncode)


if __name__ == "__main__":
    main()
