"""predict_container against the H200 measurements of the reference (§7.2) and its GB10 rules
(§7.3), on the fixtures that reproduce them. Expectations are written out by hand from the
reference, not derived from the implementation."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from wheeldoc.kernels.load_model import (INVALID_PTX, NO_BINARY_FOR_GPU, UNSUPPORTED_PTX_VERSION,
                                    predict_container, predict_image, predict_ptx_text)
from wheeldoc.kernels.fatbin import open_fatbin

KERNELS = Path(__file__).resolve().parents[2] / "fixtures" / "kernels"
N, J, X = "native", "jit", "fail"

# fixture -> (verdict, index of the chosen entry in the container or None, error)
H200 = {
    "sm80": (X, None, NO_BINARY_FOR_GPU), "sm86": (X, None, NO_BINARY_FOR_GPU),
    "sm90": (N, 0, None), "sm90a": (N, 0, None), "sm100a": (X, None, NO_BINARY_FOR_GPU),
    "sm120": (X, None, NO_BINARY_FOR_GPU), "sm121a": (X, None, NO_BINARY_FOR_GPU),
    "sm90v129": (N, 0, None), "sm90t135": (N, 0, None),
    "ptx80": (J, 0, None), "ptx90": (J, 0, None), "ptx90a": (J, 0, None),
    # PTX only for newer GPUs: 209, not 218 (H200 ground truth; 218 is for PTX text files)
    "ptx100": (X, None, NO_BINARY_FOR_GPU), "ptx100a": (X, None, NO_BINARY_FOR_GPU),
    "ptx100f": (X, None, NO_BINARY_FOR_GPU), "ptx120": (X, None, NO_BINARY_FOR_GPU),
    "ptx120v95": (X, None, NO_BINARY_FOR_GPU),
    "ptx80v88": (J, 0, None), "ptx80v91": (X, 0, UNSUPPORTED_PTX_VERSION),
    "ptx80v95": (X, 0, UNSUPPORTED_PTX_VERSION),
    "sm80-sm90": (N, 1, None), "sm80-ptx80": (J, 1, None), "sm86-sm80": (X, None, NO_BINARY_FOR_GPU),
    "sm89-sm80": (X, None, NO_BINARY_FOR_GPU),
    "sm90-sm90a": (N, 1, None), "sm90a-sm90": (N, 0, None),
    "sm90a-ptx90": (N, 0, None), "ptx90-sm90a": (N, 1, None), "sm90-ptx90": (N, 0, None),
    "sm90-ptx80": (N, 0, None), "sm90-ptx90a": (N, 0, None), "sm90-sm90": (N, 0, None),
    "ptx80-ptx90": (J, 1, None), "ptx90-ptx80": (J, 0, None), "ptx90a-ptx80": (J, 0, None),
    "ptx90-ptx90a": (J, 1, None), "ptx90a-ptx90": (J, 0, None),  # exact `a` PTX preferred
    "ptx100a-ptx80": (J, 1, None), "ptx120-ptx90": (J, 1, None),
    "sm90-ptx90v95": (N, 0, None), "sm80-ptx80v95": (X, 1, UNSUPPORTED_PTX_VERSION),
    "ptx90v95-ptx80": (X, 0, UNSUPPORTED_PTX_VERSION), "ptx80v95-ptx90": (J, 1, None),
    "ptx80v88-ptx80v95": (J, 0, None), "ptx80v95-ptx80v88": (X, 0, UNSUPPORTED_PTX_VERSION),
    "sm100-ptx100": (X, None, NO_BINARY_FOR_GPU), "sm120f-ptx100f": (X, None, NO_BINARY_FOR_GPU),
    "sm100a-sm120-ptx120": (X, None, NO_BINARY_FOR_GPU),
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


@pytest.mark.parametrize("arch", ["120a", "100a", "90a", "122"])
def test_gb10_cannot_jit_ptx_for_other_gpus(arch):
    got = predict_container([e("ptx", arch)], GB10, DRIVER_580)
    assert (got.verdict, got.entry, got.cuda_error) == ("fail", None, NO_BINARY_FOR_GPU)


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
        (11, 0): ("jit", "sm_90"), (7, 5): ("fail", None)}
    assert pick[(7, 5)].cuda_error == NO_BINARY_FOR_GPU


# -- rules learned from the H200 ground truth (docs/kernels-groundtruth.md) ---------------------


@pytest.mark.parametrize("name", ["concat-sm90-sm80.fatbin", "concat-mixed.fatbin", "libconcat.so"])
def test_concat_images_are_invisible_to_a_13_0_driver(name):
    """A 13.0 driver returned 209 for every --concat container, though an inner cubin fits."""
    (c,) = open_fatbin(KERNELS / name).containers
    assert any(x.parent is not None for x in c.entries)
    got = predict_container(c.entries, (9, 0), (9, 0))
    assert (got.verdict, got.entry, got.cuda_error) == ("fail", None, NO_BINARY_FOR_GPU)
    assert predict_container(c.entries, (9, 0), (9, 0), driver_cuda=(13, 0)).verdict == "fail"


def test_concat_images_load_on_a_driver_as_new_as_the_toolkit():
    (c,) = open_fatbin(KERNELS / "concat-sm90-sm80.fatbin").containers
    for kwargs in ({"driver_cuda": (13, 5)}, {}):
        isa = (9, 5) if not kwargs else (9, 0)
        got = predict_container(c.entries, (9, 0), isa, **kwargs)
        assert (got.verdict, got.entry.arch) == ("native", "sm_90")
    assert predict_container(c.entries, (9, 0), None).verdict == "native"  # no driver given
    (mixed,) = open_fatbin(KERNELS / "concat-mixed.fatbin").containers
    got = predict_container(mixed.entries, (9, 0), (9, 5))
    assert (got.verdict, got.entry.arch) == ("native", "sm_90a")


def test_concat_outer_entries_still_count_on_an_old_driver():
    """concat-mixed keeps its sm_120f cubin outside the concat entry: a 13.0 driver sees it."""
    (c,) = open_fatbin(KERNELS / "concat-mixed.fatbin").containers
    got = predict_container(c.entries, (12, 1), (9, 0))
    assert (got.verdict, got.entry.arch, got.entry.parent) == ("native", "sm_120f", None)


def test_ptx_text_files_give_invalid_ptx_for_other_gpus():
    """Loaded as text, PTX the device cannot take fails with 218 (H200: compute_120f)."""
    fb = open_fatbin(KERNELS / "compute_120f-isa9.0.ptx")
    assert fb.format == "ptx"
    entry = fb.entries[0]
    assert predict_ptx_text(entry, (9, 0), (9, 0)) == ("fail", entry, INVALID_PTX)
    assert predict_image("ptx", [entry], (12, 1), (9, 0)) == ("jit", entry, None)
    assert predict_image("fatbin", [entry], (9, 0), (9, 0)).cuda_error == NO_BINARY_FOR_GPU
    v95 = open_fatbin(KERNELS / "compute_90-isa9.5.ptx").entries[0]
    assert predict_ptx_text(v95, (9, 0), (9, 0)).cuda_error == UNSUPPORTED_PTX_VERSION
    assert predict_ptx_text(v95, (9, 0), None).verdict == "jit"


def test_exact_a_ptx_beats_plain_ptx_of_the_same_arch_and_decides_alone():
    entries = [e("ptx", "90"), e("ptx", "90a", isa=(9, 5))]
    got = predict_container(entries, (9, 0), (9, 0))
    assert (got.verdict, got.entry, got.cuda_error) == ("fail", entries[1], UNSUPPORTED_PTX_VERSION)
    assert predict_container(entries, (9, 0), (9, 5)) == ("jit", entries[1], None)


def test_no_driver_means_any_ptx_isa():
    entries = [e("ptx", "80", isa=(9, 9))]
    assert predict_container(entries, (12, 1), None) == ("jit", entries[0], None)
