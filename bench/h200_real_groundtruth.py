#!/usr/bin/env python3
"""On the GPU machine: load every container of the payload (bench/h200_real_payload.py) with
`cuModuleLoadData` and compare with wheeldoc's prediction, recomputed here from the bytes.

    python3 bench/h200_real_groundtruth.py PAYLOAD_DIR OUT_DIR [--seconds 420]

Only the standard library and libcuda.so.1 (through ctypes: cuInit, cuDeviceGet,
cuCtxCreate, cuModuleLoadData, cuModuleUnload). The device's compute capability and the
driver's CUDA version come from the driver itself; wheeldoc's prediction for each container
is made for them, from the container's own bytes, with the copy of wheeldoc in the payload.
Results are written as they come (OUT_DIR/h200_real.json), so a run cut short keeps them.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
import time
from pathlib import Path

ERRORS = {0: "CUDA_SUCCESS", 200: "CUDA_ERROR_INVALID_IMAGE", 209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
          218: "CUDA_ERROR_INVALID_PTX", 221: "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",
          222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 223: "CUDA_ERROR_JIT_COMPILATION_DISABLED",
          2: "CUDA_ERROR_OUT_OF_MEMORY", 1: "CUDA_ERROR_INVALID_VALUE"}


def main() -> int:
    payload, out = Path(sys.argv[1]), Path(sys.argv[2])
    budget = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 420
    sys.path.insert(0, str(payload))
    from wheeldoc.data.tables import ptx_isa_for_cuda
    from wheeldoc.kernels.fatbin import read_fatbin
    from wheeldoc.kernels.load_model import predict_image

    cu = ctypes.CDLL("libcuda.so.1")
    check = lambda rc, what: rc == 0 or sys.exit(f"{what} failed with {rc}")  # noqa: E731
    check(cu.cuInit(0), "cuInit")
    dev = ctypes.c_int()
    check(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    major, minor, ver = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    cu.cuDeviceGetAttribute(ctypes.byref(major), 75, dev)  # COMPUTE_CAPABILITY_MAJOR
    cu.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev)
    cu.cuDriverGetVersion(ctypes.byref(ver))
    name = ctypes.create_string_buffer(256)
    cu.cuDeviceGetName(name, 256, dev)
    ctx = ctypes.c_void_p()
    check(cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev), "cuCtxCreate")
    cc = (major.value, minor.value)
    cuda = (ver.value // 1000, ver.value % 1000 // 10)
    isa = ptx_isa_for_cuda(cuda)
    drv = Path("/proc/driver/nvidia/version").read_text().split("\n", 1)[0] \
        if Path("/proc/driver/nvidia/version").exists() else None
    doc = {"device": {"name": name.value.decode(), "cc": list(cc), "driver_cuda": list(cuda),
                      "driver_ptx_isa": list(isa) if isa else None, "nvrm": drv},
           "packages": []}
    manifest = json.loads((payload / "manifest.json").read_text())
    start = time.monotonic()
    res_path = out / "h200_real.json"
    for pkg in manifest["packages"]:
        blob = (payload / pkg["blob"]).read_bytes()
        rows = []
        rec = {k: v for k, v in pkg.items() if k != "items"}
        rec["rows"] = rows
        doc["packages"].append(rec)
        for item in pkg["items"]:
            if time.monotonic() - start > budget:
                rec["cut_short"] = True
                break
            data = blob[item["blob_offset"]:item["blob_offset"] + item["size"]]
            if item["format"] == "ptx":
                data += b"\0"
            fb = read_fatbin(data, item["member"])
            (cont,) = fb.containers[:1]
            pred = predict_image(fb.format, cont.entries, cc, isa, cuda)
            predicted = pred.verdict if pred.verdict != "fail" else pred.cuda_error
            mod = ctypes.c_void_p()
            t0 = time.monotonic()
            rc = cu.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(data))
            dt = time.monotonic() - t0
            if rc == 0:
                cu.cuModuleUnload(mod)
            actual = ERRORS.get(rc, f"CUDA_ERROR_{rc}")
            ok = (rc == 0) == (pred.verdict != "fail") and (rc == 0 or actual == pred.cuda_error)
            rows.append({"member": item["member"], "container": item["container"],
                         "entries": item["entries"], "predicted_here": predicted,
                         "predicted_locally": item["predicted"], "actual": actual,
                         "agrees": ok, "load_seconds": round(dt, 4)})
        rec["agreed"] = sum(r["agrees"] for r in rows)
        rec["disagreed"] = sum(not r["agrees"] for r in rows)
        res_path.write_text(json.dumps(doc, indent=1) + "\n")
        print(f"{pkg['package']}: {len(rows)} loaded, {rec['agreed']} agree, "
              f"{rec['disagreed']} disagree ({time.monotonic() - start:.0f} s)", flush=True)
    res_path.write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
