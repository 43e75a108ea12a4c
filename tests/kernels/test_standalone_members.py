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


def _patched(raw: bytes, e_flags: int, compat_type: int | None = None,
             compat_bytes: bytes | None = None) -> bytes:
    """A copy of a cubin with other e_flags and, optionally, `.nv.compat` of another section
    type and content (as nvasm 12.9 writes them in flashinfer-cubin)."""
    import struct

    b = bytearray(raw)
    struct.pack_into("<I", b, 0x30, e_flags)
    shoff, = struct.unpack_from("<Q", b, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
    stroff = struct.unpack_from("<Q", b, shoff + shstrndx * shentsize + 0x18)[0]
    for i in range(shnum):
        at = shoff + i * shentsize
        name_off, = struct.unpack_from("<I", b, at)
        name = bytes(b[stroff + name_off: b.index(0, stroff + name_off)])
        if name == b".nv.compat":
            if compat_type is not None:
                struct.pack_into("<I", b, at + 4, compat_type)
            if compat_bytes is not None:
                off, size = struct.unpack_from("<QQ", b, at + 0x18)
                b[off:off + size] = compat_bytes.ljust(size, b"\0")[:size]
    return bytes(b)


def test_nvasm_cubin_with_a_in_e_flags_and_a_progbits_compat_section(tmp_path):
    """flashinfer-cubin's fmhaSm100aKernel_*.cubin (nvasm_internal 12.9): e_flags 0x1000640c
    (`a` is bit 0x8 of the low byte), `.nv.compat` a PROGBITS section without the accelerator
    attribute, no `-arch` in the tkinfo options. cuobjdump names them sm_100a; so must we."""
    from wheeldoc.kernels.cubin import read_cubin
    from wheeldoc.kernels.fatbin import open_fatbin

    raw = _patched((K / "sm_100a-cu129.cubin").read_bytes(), 0x1000640C, compat_type=1,
                   compat_bytes=bytes.fromhex("0202030002050500"))
    info = read_cubin(raw)
    assert (info.sm, info.accelerator, info.target) == (100, True, "sm_100a")
    p = tmp_path / "fmhaSm100aKernel.cubin"
    p.write_bytes(raw)
    (entry,) = open_fatbin(p).entries
    assert entry.arch == "sm_100a"
    plain = _patched((K / "sm_100a-cu129.cubin").read_bytes(), 0x10006404, compat_type=1,
                     compat_bytes=bytes.fromhex("0202030002050500"))
    assert read_cubin(plain).accelerator is None  # no bit, no attribute: wheeldoc cannot tell
