"""Which image of a fatbin container the CUDA driver loads on a device, and how it fails.

Implements shared/reference/cuda-binaries.md §7.3 as corrected by the H200 ground truth
(docs/kernels-groundtruth.md: cuModuleLoadData on an H200, driver 580.159.04 / CUDA 13.0).
Decisions are per container (one translation unit):

1. Cubin candidates: plain or `f` cubins of the same major with minor <= the device's, or an
   `a` cubin of exactly the device's arch. If any exists the container loads natively and PTX
   is ignored entirely. Order: `a` exact match, then the highest arch, then file order.
2. Else PTX candidates: plain PTX with arch <= the device's, `f` PTX of the same major with
   minor <= the device's, or `a` PTX of exactly the device's arch. An exact `a` match wins,
   then the highest arch, then the first entry [GPU: compute_90 + compute_90a -> 90a]; that
   entry alone decides: ISA newer than the driver's -> 222, no fallback.
3. Else the container fails with 209 NO_BINARY_FOR_GPU, also when it holds PTX for a newer
   GPU (compute_100, compute_100a/f, compute_120 on an H200 give 209 [GPU]).
4. Images inside a `--concat` entry (kind 0x100, made by CUDA 13.5's fatbinary) are invisible
   to a driver older than that toolkit: a 13.0 driver returns 209 even when an inner cubin
   fits [GPU]. Newer drivers are assumed to read them [unverified].

A standalone `.ptx` file loaded as text is different: PTX for a GPU it cannot target gives
218 INVALID_PTX [GPU: compute_120f on an H200] (`predict_ptx_text`).

Entries of other kinds (LTO-IR, unknown) never load. The model takes any objects with the
FatbinEntry attributes `kind`, `sm`, `suffix`, `code_version` (and `parent` for concat).
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

NO_BINARY_FOR_GPU = "CUDA_ERROR_NO_BINARY_FOR_GPU"  # 209
INVALID_PTX = "CUDA_ERROR_INVALID_PTX"  # 218
UNSUPPORTED_PTX_VERSION = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"  # 222
CUDA_ERROR_CODES = {NO_BINARY_FOR_GPU: 209, INVALID_PTX: 218, UNSUPPORTED_PTX_VERSION: 222}
CONCAT_MIN_CUDA = (13, 5)  # the toolkit whose fatbinary writes --concat entries
ANY_ISA = (99, 9)  # "the driver JITs any PTX": used when no driver is given


class LoadPrediction(NamedTuple):
    verdict: str  # "native" | "jit" | "fail"
    entry: object | None  # the chosen entry (for "fail" with 222/218: the PTX tried)
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


def driver_reads_concat(driver_ptx_isa: tuple[int, int] | None,
                        driver_cuda: tuple[int, int] | None = None) -> bool:
    """Whether a driver sees the images of `--concat` entries (CUDA >= 13.5 assumed)."""
    if driver_cuda is None:
        if driver_ptx_isa is None or tuple(driver_ptx_isa) >= ANY_ISA:
            return True
        from wheeldoc.data.tables import min_cuda_for_ptx_isa

        driver_cuda = min_cuda_for_ptx_isa(tuple(driver_ptx_isa))
        if driver_cuda is None:  # an ISA newer than any toolkit we know
            return True
    return tuple(driver_cuda) >= CONCAT_MIN_CUDA


def visible_entries(entries: Sequence, driver_ptx_isa: tuple[int, int] | None = None,
                    driver_cuda: tuple[int, int] | None = None) -> list:
    """The entries a driver considers: all but the images of `--concat` entries on a driver
    that predates them."""
    if any(getattr(e, "parent", None) is not None for e in entries) \
            and not driver_reads_concat(driver_ptx_isa, driver_cuda):
        return [e for e in entries if getattr(e, "parent", None) is None]
    return list(entries)


def predict_container(entries: Sequence, cc: tuple[int, int] = (9, 0),
                      driver_ptx_isa: tuple[int, int] | None = (9, 0), *,
                      driver_cuda: tuple[int, int] | None = None) -> LoadPrediction:
    """Predict cuModuleLoadData on one container for device `cc` and a driver JITting up to
    `driver_ptx_isa` (None: any ISA). `driver_cuda` is the driver's CUDA version (derived
    from the ISA when omitted). Returns (verdict, chosen entry, CUDA error name)."""
    cc = (int(cc[0]), int(cc[1]))
    isa = ANY_ISA if driver_ptx_isa is None else tuple(driver_ptx_isa)
    entries = visible_entries(entries, driver_ptx_isa, driver_cuda)
    cubins = [e for e in entries if e.kind == "cubin" and cubin_runs_on(e.sm, e.suffix, cc)]
    if cubins:
        return LoadPrediction("native", _pick(cubins), None)
    usable = [e for e in entries if e.kind == "ptx" and ptx_jits_for(e.sm, e.suffix, cc)]
    if usable:
        chosen = _pick(usable)
        if tuple(chosen.code_version) > isa:
            return LoadPrediction("fail", chosen, UNSUPPORTED_PTX_VERSION)
        return LoadPrediction("jit", chosen, None)
    return LoadPrediction("fail", None, NO_BINARY_FOR_GPU)


def predict_ptx_text(entry, cc: tuple[int, int] = (9, 0),
                     driver_ptx_isa: tuple[int, int] | None = (9, 0)) -> LoadPrediction:
    """cuModuleLoadData on a standalone PTX text file (not in a fatbin): the JIT compiles it
    whatever its target, so PTX for another GPU fails with 218 [GPU]. A `.version` newer than
    the driver gives 222 [GPU], also when the target is wrong too (the version is read first
    [GPU: compute_120 ISA 9.5 text on an H200 -> 222])."""
    isa = ANY_ISA if driver_ptx_isa is None else tuple(driver_ptx_isa)
    if tuple(entry.code_version) > isa:
        return LoadPrediction("fail", entry, UNSUPPORTED_PTX_VERSION)
    if not ptx_jits_for(entry.sm, entry.suffix, (int(cc[0]), int(cc[1]))):
        return LoadPrediction("fail", entry, INVALID_PTX)
    return LoadPrediction("jit", entry, None)


def predict_image(fmt: str, entries: Sequence, cc: tuple[int, int],
                  driver_ptx_isa: tuple[int, int] | None,
                  driver_cuda: tuple[int, int] | None = None) -> LoadPrediction:
    """One loadable image: a container of a `.so`/`.fatbin`/`.cubin` (`fmt` "elf", "fatbin",
    "cubin"), or a PTX text file (`fmt` "ptx")."""
    if fmt == "ptx":
        return predict_ptx_text(entries[0], cc, driver_ptx_isa)
    return predict_container(entries, cc, driver_ptx_isa, driver_cuda=driver_cuda)


def _pick(candidates: list):
    """An exact `a` match first, then the highest arch, then file order."""
    for e in candidates:
        if e.suffix == "a":
            return e
    best = max(e.sm for e in candidates)
    return next(e for e in candidates if e.sm == best)
