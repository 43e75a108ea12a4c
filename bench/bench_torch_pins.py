#!/usr/bin/env python3
"""What the torch-pin table (wheeldoc/data/torch_pins.json.gz) costs `wheeldoc check`: its load, and
`check` on real Dockerfiles that install packages of the table, each in a fresh process.

    python bench/bench_torch_pins.py [--runs 15] [--against DIR …] [FILE …]

`--against DIR`: a second tree holding a `wheeldoc/` package (an older commit unpacked with
`git archive <commit> wheeldoc | tar -x -C DIR`); its runs are interleaved with this tree's, run for
run, so both see the same load on the machine. Default files: the longest real Dockerfiles of
fixtures/real that install vLLM / SGLang. The table shows the median and best wall time.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FILES = (REPO / "fixtures/real/heldout3/dockerfiles/scitrera__Dockerfile.llm_inference/Dockerfile",
         REPO / "fixtures/real/heldout2/dockerfiles/ltp-sglang__Dockerfile.gb200/Dockerfile")
LOAD = ("import time; from wheeldoc.data.base_images import torch_pins; t = time.perf_counter(); p = torch_pins();"
        "p['vllm']['releases']; p.get('sglang'); 'unsloth' in p; print(time.perf_counter() - t)")


def once(tree: Path, cmd: list[str]) -> tuple[float, str]:
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}
    t = time.perf_counter()
    p = subprocess.run([sys.executable, *cmd], cwd=tree, env=env, capture_output=True, text=True)
    took = time.perf_counter() - t
    if p.returncode not in (0, 1):
        raise SystemExit(f"{cmd} in {tree}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return took, p.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*", type=Path, default=list(FILES))
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--against", type=Path, action="append", default=[],
                    help="another tree to interleave with this one (repeatable)")
    a = ap.parse_args()
    trees = {"this tree": REPO} | {str(t): t.resolve() for t in a.against}
    for tree in trees.values():  # bytecode compiled once, as an installed wheeldoc has it
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "wheeldoc")], check=True)
    jobs = {"table load + vllm, sglang (in-process, module imported)": ["-c", LOAD]}
    for f in a.files:
        lines = len(f.read_text().splitlines())
        jobs[f"check {f.parent.name}/{f.name} ({lines} lines)"] = ["-m", "wheeldoc", "check", str(f.resolve())]
    print(f"| what | tree | median s | best s |\n|---|---|---|---|")
    for label, cmd in jobs.items():
        got: dict[str, list[float]] = {t: [] for t in trees}
        for _ in range(a.runs):
            for name, tree in trees.items():
                took, out = once(tree, cmd)
                got[name].append(float(out) if label.startswith("table load") else took)
        for name, ts in got.items():
            print(f"| {label} | {name} | {statistics.median(ts):.4f} | {min(ts):.4f} |")


if __name__ == "__main__":
    main()
