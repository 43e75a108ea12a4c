"""Which image of a fatbin container the CUDA driver loads on a device, and how it fails.

Implements shared/reference/cuda-binaries.md §7.3, which was measured with cuModuleLoadData
on an H200 (§7.2). Decisions are per container (one translation unit):

1. Cubin candidates: plain or `f` cubins of the same major with minor <= the device's, or an
   `a` cubin of exactly the device's arch. If any exists the container loads natively and PTX
   is ignored entirely. Order: `a` exact match, then the highest arch, then file order.
2. Else PTX candidates: plain PTX with arch <= the device's, `f` PTX of the same major with
   minor <= the device's, or `a` PTX of exactly the device's arch. The highest arch wins (ties:
   the first entry) and it alone decides: ISA newer than the driver's -> 222, no fallback.
3. Else the container fails. With PTX present that none of the rules admit (PTX for a newer
   GPU), the driver still tries to JIT it and returns 218 INVALID_PTX (§7.2: compute_100,
   compute_100a/f and compute_120 PTX alone on an H200 give 218); otherwise 209.

Entries of other kinds (LTO-IR, unknown) never load. The model takes any objects with the
FatbinEntry attributes `kind`, `sm`, `suffix` and `code_version`.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

NO_BINARY_FOR_GPU = "CUDA_ERROR_NO_BINARY_FOR_GPU"  # 209
INVALID_PTX = "CUDA_ERROR_INVALID_PTX"  # 218
UNSUPPORTED_PTX_VERSION = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"  # 222
CUDA_ERROR_CODES = {NO_BINARY_FOR_GPU: 209, INVALID_PTX: 218, UNSUPPORTED_PTX_VERSION: 222}


class LoadPrediction(NamedTuple):
    verdict: str  # "native" | "jit" | "fail"
    entry: object | None  # the chosen FatbinEntry (for "fail" with 222/218: the PTX tried)
    cuda_error: str | None  # CUDA_ERROR_* name when verdict == "fail"


def cubin_runs_on(sm: int, suffix: str, cc: tuple[int, int]) -> bool:
    major, minor = divmod(sm, 10)
    if suffix == "a":
        return (major, minor) == tuple(cc)
    return major == cc[0] and minor <= cc[1]


def ptx_jits_for(sm: int, suffix: str, cc: tuple[int, int]) -> bool:
    major, minor = divmod(sm, 10)
    if suffix == "a":
        return (major, minor) == tuple(cc)
    if suffix == "f":
        return major == cc[0] and minor <= cc[1]
    return (major, minor) <= tuple(cc)


def predict_container(entries: Sequence, cc: tuple[int, int] = (9, 0),
                      driver_ptx_isa: tuple[int, int] = (9, 0)) -> LoadPrediction:
    """Predict cuModuleLoadData on one container for device `cc` and a driver JITting up to
    `driver_ptx_isa`. Returns (verdict, chosen entry, CUDA error name)."""
    cc = (int(cc[0]), int(cc[1]))
    cubins = [e for e in entries if e.kind == "cubin" and cubin_runs_on(e.sm, e.suffix, cc)]
    if cubins:
        exact_a = [e for e in cubins if e.suffix == "a"]
        if exact_a:
            return LoadPrediction("native", exact_a[0], None)
        best = max(e.sm for e in cubins)
        return LoadPrediction("native", next(e for e in cubins if e.sm == best), None)
    ptx = [e for e in entries if e.kind == "ptx"]
    usable = [e for e in ptx if ptx_jits_for(e.sm, e.suffix, cc)]
    if usable:
        best = max(e.sm for e in usable)
        chosen = next(e for e in usable if e.sm == best)
        if tuple(chosen.code_version) > tuple(driver_ptx_isa):
            return LoadPrediction("fail", chosen, UNSUPPORTED_PTX_VERSION)
        return LoadPrediction("jit", chosen, None)
    if ptx:
        return LoadPrediction("fail", ptx[0], INVALID_PTX)
    return LoadPrediction("fail", None, NO_BINARY_FOR_GPU)
