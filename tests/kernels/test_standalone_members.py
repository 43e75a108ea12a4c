"""Standalone GPU code (`.cubin`, `.ptx`, `.fatbin`) inside wheels and directories, and the
target of a standalone cubin read with its suffix (`a` from `.nv.compat` or e_flags, `f` from
the ptxas options in `.note.nv.tkinfo`): flashinfer-cubin ships ~16,000 such cubins that
flashinfer loads itself with cuModuleLoadData."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import ROOT

K = ROOT / "fixtures" / "kernels"


def _doc(cli, *argv) -> dict:
    res = cli("kernels", *argv, "--format", "json", "--fail-on", "never")
    assert res.code == 0, res.err
    return res.json()


def _verdicts(doc) -> dict:
    return {(lib["member"] or lib["path"].rsplit("/", 1)[-1]): lib["load"]["verdict"]
            for lib in doc["libraries"]}


@pytest.mark.parametrize("name, target", [
    ("sm_100a.cubin", "sm_100a"),            # CUDA 13: `a` from .nv.compat
    ("sm_100a-cu129.cubin", "sm_100a"),      # ptxas 12.9, ABI 8: `a` in e_flags
    ("sm_121f.cubin", "sm_121f"),            # `f` only in the ptxas options
    ("sm_121.cubin", "sm_121"),
    ("sm_90a.cubin", "sm_90a"),
])
def test_standalone_cubin_keeps_its_suffix(name, target):
    from wheeldoc.kernels.fatbin import open_fatbin

    (entry,) = open_fatbin(K / name).entries
    assert entry.arch == target


@pytest.mark.parametrize("name, gpu, verdict", [
    ("sm_100a.cubin", "sm_103", "fail"),     # arch-specific: exactly sm_100 only
    ("sm_100a.cubin", "sm_100", "native"),
    ("sm_100a-cu129.cubin", "sm_103", "fail"),
    ("sm_121f.cubin", "sm_121", "native"),
    ("sm_121a.cubin", "sm_120", "fail"),
])
def test_an_arch_specific_cubin_is_not_native_on_a_sibling(cli, name, gpu, verdict):
    doc = _doc(cli, str(K / name), "--gpu", gpu, "--driver", "13.0")
    assert _verdicts(doc) == {name: verdict}


def test_options_arch():
    from wheeldoc.kernels.cubin import options_arch

    assert options_arch("-arch sm_100f -m 64 ") == (100, "f")
    assert options_arch("--gpu-name=sm_90a") == (90, "a")
    assert options_arch("-m 64") is None and options_arch(None) is None


def _wheel(tmp_path, files: dict[str, bytes]):
    from tests.wheelfactory import WheelSpec, wheel_bytes

    spec = WheelSpec("gpucode", "1.0", platform="any", python_tag="py3", abi_tag="none",
                     files=files)
    wheel = tmp_path / spec.filename
    wheel.write_bytes(wheel_bytes(spec))
    return wheel


def test_wheel_members_cubin_ptx_fatbin_are_read(cli, tmp_path):
    wheel = _wheel(tmp_path, {
        "gpucode/cubins/gemm_sm100a.cubin": (K / "sm_100a.cubin").read_bytes(),
        "gpucode/cubins/gemm_sm121f.cubin": (K / "sm_121f.cubin").read_bytes(),
        "gpucode/ptx/k.ptx": (K / "compute_90-isa9.0.ptx").read_bytes(),
        "gpucode/fb.fatbin": (K / "fb-sm90a.fatbin").read_bytes(),
        "gpucode/readme.txt": b"not code",
    })
    doc = _doc(cli, str(wheel), "--gpu", "b300", "--driver", "13.0")
    assert _verdicts(doc) == {"gpucode/cubins/gemm_sm100a.cubin": "fail",
                              "gpucode/cubins/gemm_sm121f.cubin": "fail",
                              "gpucode/fb.fatbin": "fail", "gpucode/ptx/k.ptx": "jit"}
    listing = cli("kernels", str(wheel), "--list").out
    assert "ELF file    1: gemm_sm100a.sm_100a.cubin" in listing
    assert "ELF file    1: fb.1.sm_90a.cubin" in listing
    doc = _doc(cli, str(wheel), "--gpu", "gb10", "--driver", "13.0")
    assert _verdicts(doc)["gpucode/cubins/gemm_sm121f.cubin"] == "native"


def test_directory_cubins_are_read_and_a_stray_name_is_not_an_error(cli, tmp_path):
    d = tmp_path / "cubins"
    d.mkdir()
    shutil.copy(K / "sm_100a.cubin", d / "a.cubin")
    (d / "notes.ptx").write_text("this is not PTX")  # skipped with a reason, not a crash
    doc = _doc(cli, str(d), "--gpu", "b200", "--driver", "13.0")
    assert _verdicts(doc) == {"a.cubin": "native"}
    assert [s["path"].rsplit("/", 1)[-1] for s in doc["skipped"]] == ["notes.ptx"]
    json.dumps(doc)
