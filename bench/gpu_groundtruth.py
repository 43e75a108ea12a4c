#!/usr/bin/env python3
"""Ground truth on a real GPU: load every fixture container with cuModuleLoadData and compare
the driver's answer with wheeldoc's prediction (wheeldoc.kernels.load_model.predict_container).

    PYTHONPATH=. python3 bench/gpu_groundtruth.py [--out DIR] [--cc 9.0] [--ptx-isa 9.0]
    PYTHONPATH=. python3 bench/gpu_groundtruth.py --dry-run     # predictions only, no GPU

Needs only Python 3, this repository and libcuda.so.1 (ctypes; no CUDA toolkit, no pip
packages). For every fixture of fixtures/kernels/manifest.json marked "gpu": each container
of a .so or .fatbin is cut out with wheeldoc's parser and loaded on its own (a multi-container
.fatbin is also loaded whole: the driver reads only the first container); a .cubin is loaded
as is; a .ptx with a terminating NUL. After a successful load the image's `__device__ int tag`
is read back, which says which entry the driver chose (fixtures/kernels/build.py: TAG = the
entry's 1-based position, or __CUDA_ARCH__*10 + 1 for `a` / + 2 for `f`).

Each fixture runs in a child process, so a driver crash costs one row, not the run. Device
CC and the driver's CUDA version come from the driver unless --cc / --ptx-isa override them.
Writes gpu_groundtruth.md (table + agreement rates) and gpu_groundtruth.json into --out
(default: $OUT if set, else the current directory) and prints progress as it goes.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wheeldoc.data.tables import ptx_isa_for_cuda  # noqa: E402
from wheeldoc.kernels.load_model import predict_image  # noqa: E402
from wheeldoc.kernels.fatbin import container_bytes, open_fatbin  # noqa: E402

KERNELS = ROOT / "fixtures" / "kernels"
KNOWN_ERRORS = {0: "CUDA_SUCCESS", 200: "CUDA_ERROR_INVALID_IMAGE", 209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
                218: "CUDA_ERROR_INVALID_PTX", 221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
                222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 223: "CUDA_ERROR_JIT_COMPILATION_DISABLED",
                300: "CUDA_ERROR_INVALID_SOURCE", 500: "CUDA_ERROR_NOT_FOUND"}


# -- the driver, through ctypes ---------------------------------------------------------------


class Driver:
    def __init__(self) -> None:
        try:
            self.cu = ctypes.CDLL("libcuda.so.1")
        except OSError as exc:
            sys.exit(f"cannot load libcuda.so.1 ({exc}): run this on a machine with an NVIDIA "
                     "driver, or pass --dry-run for predictions only")
        self.check(self.cu.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        self.check(self.cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
        self.dev = dev
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.check(self.cu.cuDeviceGetAttribute(ctypes.byref(major), 75, dev), "cc major")
        self.check(self.cu.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev), "cc minor")
        self.cc = (major.value, minor.value)
        version = ctypes.c_int()
        self.check(self.cu.cuDriverGetVersion(ctypes.byref(version)), "cuDriverGetVersion")
        self.cuda = (version.value // 1000, (version.value % 1000) // 10)
        name = ctypes.create_string_buffer(256)
        self.cu.cuDeviceGetName(name, 256, dev)
        self.name = name.value.decode()
        ctx = ctypes.c_void_p()
        self.check(self.cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        self.check(self.cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")

    def error_name(self, code: int) -> str:
        ptr = ctypes.c_char_p()
        if self.cu.cuGetErrorName(code, ctypes.byref(ptr)) == 0 and ptr.value:
            return ptr.value.decode()
        return KNOWN_ERRORS.get(code, f"CUresult {code}")

    def check(self, code: int, what: str) -> None:
        if code != 0:
            raise RuntimeError(f"{what} failed: {KNOWN_ERRORS.get(code, code)}")

    def load(self, image: bytes, tag_names: list[str]) -> tuple[int, int | None]:
        """cuModuleLoadData on `image`; returns (CUresult, tag read back or None)."""
        buf = ctypes.create_string_buffer(image, len(image))
        mod = ctypes.c_void_p()
        code = self.cu.cuModuleLoadData(ctypes.byref(mod), buf)
        if code != 0:
            return code, None
        tag = None
        for name in tag_names:
            dptr, size = ctypes.c_uint64(), ctypes.c_size_t()
            if self.cu.cuModuleGetGlobal_v2(ctypes.byref(dptr), ctypes.byref(size), mod,
                                            name.encode()) == 0 and size.value == 4:
                host = ctypes.c_int()
                if self.cu.cuMemcpyDtoH_v2(ctypes.byref(host), dptr, ctypes.c_size_t(4)) == 0:
                    tag = host.value
                break
        self.cu.cuModuleUnload(mod)
        return code, tag


# -- what to load, and what wheeldoc predicts ---------------------------------------------------


def images_of(fx: dict) -> list[dict]:
    """Rows to load for one fixture: the image bytes plus the entries the prediction sees."""
    path = KERNELS / fx["file"]
    fb = open_fatbin(path)
    rows = []
    if fb.format in ("cubin", "ptx"):
        data = path.read_bytes() + (b"\0" if fb.format == "ptx" else b"")
        rows.append({"container": "-", "entries": fb.containers[0].entries, "image": data,
                     "format": fb.format})
        return rows
    for c in fb.containers:
        rows.append({"container": str(c.index), "entries": c.entries,
                     "image": container_bytes(path, c), "format": fb.format})
    if fb.format == "fatbin" and len(fb.containers) > 1:
        rows.append({"container": "whole file", "entries": fb.containers[0].entries,
                     "image": path.read_bytes(), "format": fb.format})
    return rows


def expected_tag(fx: dict, entries, chosen) -> int | None:
    if chosen is None or fx.get("tags") is None:
        return None
    if fx["tags"] == "position":
        return list(entries).index(chosen) + 1
    return chosen.sm * 100 + {"": 0, "a": 1, "f": 2}[chosen.suffix]


def describe(entries) -> str:
    parts = []
    for e in entries:
        label = f"{e.kind} {e.arch}" if e.kind != "ptx" else f"ptx {e.virtual_arch} ({e.ptx_isa})"
        parts.append(label + (" [concat]" if getattr(e, "parent", None) is not None else ""))
    return ", ".join(parts) or "(empty)"


def work(fx: dict, cc, isa, driver: Driver | None, cuda=None) -> list[dict]:
    out = []
    tag_names = fx.get("tag_names") or ["tag"]
    for row in images_of(fx):
        entries = row["entries"]
        pred = predict_image(row["format"], entries, cc, isa, cuda)
        want = expected_tag(fx, entries, pred.entry) if pred.verdict != "fail" else None
        rec = {"fixture": fx["file"], "container": row["container"], "entries": describe(entries),
               "predicted": pred.verdict,
               "predicted_entry": None if pred.entry is None else describe([pred.entry]),
               "predicted_error": pred.cuda_error or "CUDA_SUCCESS", "expected_tag": want}
        if driver is not None:
            code, tag = driver.load(row["image"], tag_names)
            rec.update(actual_code=code, actual_error=driver.error_name(code), tag=tag)
            rec["result_agrees"] = rec["actual_error"] == rec["predicted_error"]
            rec["choice_agrees"] = None if (want is None or tag is None) else tag == want
        out.append(rec)
    return out


# -- orchestration ----------------------------------------------------------------------------


def worker(args) -> None:
    fx = json.loads(args.worker)
    driver = Driver()
    cc = tuple(args.cc) if args.cc else driver.cc
    isa = tuple(args.ptx_isa) if args.ptx_isa else ptx_isa_for_cuda(driver.cuda)
    print(json.dumps(work(fx, cc, isa, driver, None if args.ptx_isa else driver.cuda)))


def version_pair(text: str) -> tuple[int, int]:
    major, _, minor = text.partition(".")
    return int(major), int(minor or 0)


def main() -> None:
    ap = argparse.ArgumentParser(description="cuModuleLoadData ground truth vs wheeldoc's prediction")
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    ap.add_argument("--cc", type=version_pair, help="device compute capability (default: the GPU's)")
    ap.add_argument("--ptx-isa", type=version_pair,
                    help="driver's newest PTX ISA (default: from its CUDA version)")
    ap.add_argument("--dry-run", action="store_true", help="predict only; do not touch the GPU")
    ap.add_argument("--only", help="substring filter on fixture file names")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)

    fixtures = [m for m in json.loads((KERNELS / "manifest.json").read_text())["fixtures"]
                if m.get("gpu") and "broken" not in m and (not args.only or args.only in m["file"])]
    if args.dry_run:
        device = {"name": "(dry run)", "cc": args.cc or (9, 0), "cuda": "n/a"}
        isa = args.ptx_isa or (9, 0)
    else:
        d = Driver()
        device = {"name": d.name, "cc": args.cc or d.cc, "cuda": f"{d.cuda[0]}.{d.cuda[1]}"}
        isa = args.ptx_isa or ptx_isa_for_cuda(d.cuda)
        if isa is None:
            sys.exit(f"unknown CUDA version {d.cuda}: pass --ptx-isa")
        del d
    cc = tuple(device["cc"])
    print(f"device: {device['name']} cc {cc[0]}.{cc[1]}, driver CUDA {device['cuda']}, "
          f"JIT up to PTX ISA {isa[0]}.{isa[1]}; {len(fixtures)} fixtures", flush=True)

    rows: list[dict] = []
    start = time.time()
    for i, fx in enumerate(fixtures, 1):
        if args.dry_run:
            got = work(fx, cc, isa, None)
        else:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(fx)]
            if args.cc:
                cmd += ["--cc", f"{args.cc[0]}.{args.cc[1]}"]
            if args.ptx_isa:
                cmd += ["--ptx-isa", f"{args.ptx_isa[0]}.{args.ptx_isa[1]}"]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300,
                                  env={**os.environ, "PYTHONPATH": str(ROOT)})
            if proc.returncode != 0:
                got = [{"fixture": fx["file"], "container": "?", "entries": "?", "predicted": "?",
                        "predicted_entry": None, "predicted_error": "?", "expected_tag": None,
                        "actual_code": None, "actual_error": f"worker exit {proc.returncode}: "
                        f"{proc.stderr.strip().splitlines()[-1:] or ''}", "tag": None,
                        "result_agrees": False, "choice_agrees": None}]
            else:
                got = json.loads(proc.stdout.strip().splitlines()[-1])
        rows.extend(got)
        for r in got:
            mark = "" if args.dry_run else ("  OK " if r["result_agrees"] else "  DIFF")
            actual = "" if args.dry_run else f" | actual {r['actual_error']} tag={r['tag']}"
            print(f"[{i}/{len(fixtures)}]{mark} {r['fixture']} [{r['container']}]: predicted "
                  f"{r['predicted']} {r['predicted_entry'] or ''} {r['predicted_error']}{actual}",
                  flush=True)
    write_report(args.out, device, cc, isa, rows, args.dry_run, time.time() - start)


def write_report(out: Path, device, cc, isa, rows, dry: bool, seconds: float) -> None:
    out.mkdir(parents=True, exist_ok=True)
    lines = ["# cuModuleLoadData ground truth vs wheeldoc's prediction", "",
             f"Device: {device['name']}, CC {cc[0]}.{cc[1]}; driver CUDA {device['cuda']}; "
             f"driver PTX ISA {isa[0]}.{isa[1]}. {len(rows)} images from "
             f"{len({r['fixture'] for r in rows})} fixtures, {seconds:.0f} s.", ""]
    if not dry:
        judged = [r for r in rows if r["result_agrees"] is not None]
        agree = sum(bool(r["result_agrees"]) for r in judged)
        choices = [r for r in rows if r.get("choice_agrees") is not None]
        chose = sum(bool(r["choice_agrees"]) for r in choices)
        lines += [f"**Result agreement: {agree}/{len(judged)} "
                  f"({100 * agree / max(1, len(judged)):.1f}%)**; chosen-entry agreement (tag read "
                  f"back): {chose}/{len(choices)}.", ""]
    head = "| fixture | container | entries | predicted | predicted entry | predicted error |"
    sep = "|---|---|---|---|---|---|"
    if not dry:
        head += " actual | tag (expected) | agrees |"
        sep += "---|---|---|"
    lines += [head, sep]
    for r in rows:
        line = (f"| {r['fixture']} | {r['container']} | {r['entries']} | {r['predicted']} | "
                f"{r['predicted_entry'] or ''} | {r['predicted_error']} |")
        if not dry:
            tag = ("" if r["tag"] is None and r["expected_tag"] is None
                   else f"{r['tag']} ({r['expected_tag']})")
            verdict = "yes" if r["result_agrees"] and r.get("choice_agrees") is not False else "**NO**"
            line += f" {r['actual_error']} | {tag} | {verdict} |"
        lines.append(line)
    (out / "gpu_groundtruth.md").write_text("\n".join(lines) + "\n")
    (out / "gpu_groundtruth.json").write_text(json.dumps(
        {"device": device, "cc": cc, "ptx_isa": isa, "rows": rows}, indent=1) + "\n")
    print(f"wrote {out / 'gpu_groundtruth.md'} and gpu_groundtruth.json")
    if not dry:
        print("\n".join(lines[4:5]))


if __name__ == "__main__":
    main()
