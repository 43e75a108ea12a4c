"""predict_container against the H200 measurements of the reference (§7.2) and its GB10 rules
(§7.3), on the fixtures that reproduce them. Expectations are written out by hand from the
reference, not derived from the implementation."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from wheeldoc.kernels_model import (INVALID_PTX, NO_BINARY_FOR_GPU, UNSUPPORTED_PTX_VERSION,
                                    predict_container)
from wheeldoc.sources.fatbin import open_fatbin

KERNELS = Path(__file__).resolve().parents[1] / "fixtures" / "kernels"
N, J, X = "native", "jit", "fail"

# fixture -> (verdict, index of the chosen entry in the container or None, error)
H200 = {
    "sm80": (X, None, NO_BINARY_FOR_GPU), "sm86": (X, None, NO_BINARY_FOR_GPU),
    "sm90": (N, 0, None), "sm90a": (N, 0, None), "sm100a": (X, None, NO_BINARY_FOR_GPU),
    "sm120": (X, None, NO_BINARY_FOR_GPU), "sm121a": (X, None, NO_BINARY_FOR_GPU),
    "sm90v129": (N, 0, None), "sm90t135": (N, 0, None),
    "ptx80": (J, 0, None), "ptx90": (J, 0, None), "ptx90a": (J, 0, None),
    "ptx100": (X, 0, INVALID_PTX), "ptx100a": (X, 0, INVALID_PTX), "ptx100f": (X, 0, INVALID_PTX),
    "ptx120": (X, 0, INVALID_PTX),
    "ptx80v88": (J, 0, None), "ptx80v91": (X, 0, UNSUPPORTED_PTX_VERSION),
    "ptx80v95": (X, 0, UNSUPPORTED_PTX_VERSION),
    "sm80-sm90": (N, 1, None), "sm80-ptx80": (J, 1, None), "sm86-sm80": (X, None, NO_BINARY_FOR_GPU),
    "sm89-sm80": (X, None, NO_BINARY_FOR_GPU),
    "sm90-sm90a": (N, 1, None), "sm90a-sm90": (N, 0, None),
    "sm90a-ptx90": (N, 0, None), "ptx90-sm90a": (N, 1, None), "sm90-ptx90": (N, 0, None),
    "sm90-ptx80": (N, 0, None), "sm90-ptx90a": (N, 0, None), "sm90-sm90": (N, 0, None),
    "ptx80-ptx90": (J, 1, None), "ptx90-ptx80": (J, 0, None), "ptx90a-ptx80": (J, 0, None),
    "ptx100a-ptx80": (J, 1, None), "ptx120-ptx90": (J, 1, None),
    "sm90-ptx90v95": (N, 0, None), "sm80-ptx80v95": (X, 1, UNSUPPORTED_PTX_VERSION),
    "ptx90v95-ptx80": (X, 0, UNSUPPORTED_PTX_VERSION), "ptx80v95-ptx90": (J, 1, None),
    "ptx80v88-ptx80v95": (J, 0, None), "ptx80v95-ptx80v88": (X, 0, UNSUPPORTED_PTX_VERSION),
    "sm100-ptx100": (X, 1, INVALID_PTX),
}


@pytest.mark.parametrize("combo", sorted(H200))
def test_h200_matrix(combo):
    (container,) = open_fatbin(KERNELS / f"fb-{combo}.fatbin").containers
    verdict, index, error = H200[combo]
    got = predict_container(container.entries, cc=(9, 0), driver_ptx_isa=(9, 0))
    assert got.verdict == verdict and got.cuda_error == error
    chosen = None if got.entry is None else container.entries.index(got.entry)
    assert chosen == index


def e(kind: str, arch: str, isa=(9, 0)):
    sm = int(arch.rstrip("af"))
    suffix = arch[len(str(sm)):]
    return SimpleNamespace(kind=kind, sm=sm, suffix=suffix, code_version=isa if kind == "ptx" else (1, 8))


GB10, DRIVER_580 = (12, 1), (9, 0)


@pytest.mark.parametrize("arch", ["120", "120f", "121", "121a", "121f"])
def test_gb10_loads_these_cubins(arch):
    assert predict_container([e("cubin", arch)], GB10, DRIVER_580).verdict == "native"


@pytest.mark.parametrize("arch", ["120a", "100", "100a", "103", "90a", "90", "122"])
def test_gb10_cannot_load_these_cubins(arch):
    got = predict_container([e("cubin", arch)], GB10, DRIVER_580)
    assert (got.verdict, got.cuda_error) == ("fail", NO_BINARY_FOR_GPU)


@pytest.mark.parametrize("arch", ["75", "80", "90", "100", "120", "121", "120f", "121f", "121a"])
def test_gb10_jits_this_ptx(arch):
    assert predict_container([e("ptx", arch)], GB10, DRIVER_580).verdict == "jit"


@pytest.mark.parametrize("arch", ["120a", "100a", "90a"])
def test_gb10_cannot_jit_arch_specific_ptx_for_other_gpus(arch):
    got = predict_container([e("ptx", arch)], GB10, DRIVER_580)
    assert (got.verdict, got.cuda_error) == ("fail", INVALID_PTX)


def test_story_trap_3_ptx_newer_than_the_driver():
    """Only PTX from a 13.3 toolchain, no sm_121 cubin: 222 on a 13.0 driver, fine on 13.3."""
    entries = [e("cubin", "90a"), e("cubin", "100a"), e("ptx", "90", isa=(9, 3))]
    got = predict_container(entries, GB10, (9, 0))
    assert (got.verdict, got.cuda_error, got.entry) == ("fail", UNSUPPORTED_PTX_VERSION, entries[2])
    assert predict_container(entries, GB10, (9, 3)).verdict == "jit"
    assert predict_container(entries, (9, 0), (9, 0)) == ("native", entries[0], None)


def test_cubin_order_prefers_exact_a_then_highest_arch():
    entries = [e("cubin", "120"), e("cubin", "121"), e("cubin", "121a"), e("ptx", "121a")]
    assert predict_container(entries, GB10).entry is entries[2]
    assert predict_container(entries[:2], GB10).entry is entries[1]
    assert predict_container(entries[:1], GB10).entry is entries[0]


def test_ptx_ignored_when_a_cubin_fits():
    entries = [e("ptx", "90", isa=(9, 9)), e("cubin", "90")]
    assert predict_container(entries, (9, 0), (9, 0)) == ("native", entries[1], None)


def test_lto_and_empty_containers_have_no_image():
    assert predict_container([], (9, 0)) == ("fail", None, NO_BINARY_FOR_GPU)
    lto = SimpleNamespace(kind="lto-ir", sm=90, suffix="", code_version=(1, 65))
    assert predict_container([lto], (9, 0)).cuda_error == NO_BINARY_FOR_GPU


def test_real_library_fixture_on_several_gpus():
    """libmixed.so: sm_80, 90, 90a, 100a, 103, 120f, 121, 121a cubins + compute_90 PTX."""
    (c,) = open_fatbin(KERNELS / "libmixed.so").containers
    pick = {cc: predict_container(c.entries, cc, (9, 0)) for cc in
            [(12, 1), (12, 0), (10, 3), (10, 0), (9, 0), (8, 6), (11, 0), (7, 5)]}
    assert {cc: (p.verdict, p.entry and p.entry.arch) for cc, p in pick.items()} == {
        (12, 1): ("native", "sm_121a"), (12, 0): ("native", "sm_120f"),
        (10, 3): ("native", "sm_103"), (10, 0): ("native", "sm_100a"),
        (9, 0): ("native", "sm_90a"), (8, 6): ("native", "sm_80"),
        (11, 0): ("jit", "sm_90"), (7, 5): ("fail", "sm_90")}
    assert pick[(7, 5)].cuda_error == INVALID_PTX
