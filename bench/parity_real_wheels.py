#!/usr/bin/env python3
"""Listing parity with `cuobjdump -lelf -lptx` on real wheels, member by member.

    uv run python bench/parity_real_wheels.py WHEEL... [--out docs/groundtruth/kernels-parity.json]

For every member wheeldoc reads as GPU code (`*.so*`, `*.cubin`, `*.fatbin`; `*.ptx` text too,
which cuobjdump lists nothing for), wheeldoc's listing comes from `wheeldoc.kernels.facts`
reading the wheel in place, and the oracle's from cuobjdump (PyPI nvidia-cuda-cuobjdump) run
on that one member inflated to a temporary file under its own base name (cuobjdump names
entries after the file), one member at a time. The only accepted difference is cuobjdump's
documented `f` naming (it names an `sm_100f` cubin `sm_100`: the ELF cannot record `f`).
Every disagreement is written out with both listings.
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
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wheeldoc.kernels.facts import is_candidate_name, read_inputs  # noqa: E402
from wheeldoc.kernels.fatbin import listing  # noqa: E402

LINE = re.compile(r"^(ELF|PTX) file\s+\d+: ")


def cuobjdump() -> str:
    path = Path(sysconfig.get_paths()["purelib"]) / "nvidia" / "cu13" / "bin" / "cuobjdump"
    if not path.exists():
        sys.exit("cuobjdump not found: install the dev dependency nvidia-cuda-cuobjdump")
    return str(path)


def f_quirk(line: str) -> str:
    return re.sub(r"(\.sm_\d+)f\.cubin$", r"\1.cubin", line)


def oracle(tool: str, zf: zipfile.ZipFile, name: str, tmp: Path) -> tuple[list[str], str]:
    dest = tmp / name.rsplit("/", 1)[-1]
    with zf.open(name) as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
    try:
        proc = subprocess.run([tool, "-lelf", "-lptx", str(dest)], capture_output=True, text=True)
    finally:
        dest.unlink()
    lines = [ln for ln in proc.stdout.splitlines() if LINE.match(ln)]
    return lines, proc.stderr.strip().splitlines()[0] if proc.stderr.strip() else ""


def check_wheel(tool: str, wheel: str) -> dict:
    t0 = time.perf_counter()
    facts = read_inputs([wheel], None)
    mine = {lib.member: listing(lib.fatbin) for lib in facts.libraries}
    formats = {lib.member: lib.fatbin.format for lib in facts.libraries}
    skipped = {s.member: s.reason for s in facts.skipped}
    t_wd = time.perf_counter() - t0
    rows, agreed, disagreed = [], 0, 0
    counts = {"libraries": 0, "cubins": 0, "fatbins": 0, "ptx_text": 0, "without_gpu_code": 0}
    entries = 0
    with zipfile.ZipFile(wheel) as zf, tempfile.TemporaryDirectory(prefix="parity-") as tmp:
        for info in zf.infolist():
            name = info.filename
            if name.endswith("/") or not is_candidate_name(name):
                continue
            low = name.lower()
            if low.endswith(".ptx"):
                counts["ptx_text"] += 1  # cuobjdump lists nothing for PTX text
                continue
            kind = "cubins" if low.endswith(".cubin") else "fatbins" if low.endswith(".fatbin") \
                else "libraries"
            counts[kind] += 1
            theirs, err = oracle(tool, zf, name, Path(tmp))
            ours = mine.get(name, [])
            if name not in mine:
                counts["without_gpu_code"] += 1
            entries += len(theirs)
            same = len(ours) == len(theirs) and all(
                a == b or f_quirk(a) == b for a, b in zip(ours, theirs))
            if same:
                agreed += 1
            else:
                disagreed += 1
                rows.append({"member": name, "wheeldoc": ours[:20], "cuobjdump": theirs[:20],
                             "wheeldoc_lines": len(ours), "cuobjdump_lines": len(theirs),
                             "cuobjdump_stderr": err, "wheeldoc_skipped": skipped.get(name),
                             "format": formats.get(name)})
    return {"wheel": os.path.basename(wheel), "members_compared": agreed + disagreed,
            "agreed": agreed, "disagreed": disagreed, "entries_listed_by_cuobjdump": entries,
            **counts, "wheeldoc_seconds": round(t_wd, 2), "disagreements": rows}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheels", nargs="+")
    ap.add_argument("--out", default=str(ROOT / "docs" / "groundtruth" / "kernels-parity.json"))
    args = ap.parse_args()
    tool = cuobjdump()
    version = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout.strip()
    out = {"tool": version.splitlines()[-1] if version else tool, "wheels": []}
    for wheel in args.wheels:
        res = check_wheel(tool, wheel)
        out["wheels"].append(res)
        print(f"{res['wheel']}: {res['members_compared']} members, {res['agreed']} agree, "
              f"{res['disagreed']} disagree ({res['entries_listed_by_cuobjdump']} entries)",
              flush=True)
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return 1 if any(w["disagreed"] for w in out["wheels"]) else 0


if __name__ == "__main__":
    sys.exit(main())
