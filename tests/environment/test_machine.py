"""wheeldoc.environment.machine: the driver from NVML or /proc, and the CUDA libraries on the
library path. Loader caches are built by the real `ldconfig` from real ELF libraries; NVML is
a fake `pynvml` module injected through monkeypatch (this machine has no GPU)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import types
import zipfile
from pathlib import Path

import pytest

from tests import envfactory as ef
from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.environment.machine import (
    CUDA_LIBRARY,
    parse_ld_so_cache,
    parse_ldconfig_p,
    parse_proc_version,
    read_driver,
    read_library_path,
)

PROPRIETARY = ("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n"
               "GCC version:  gcc version 11.4.0 (Ubuntu 11.4.0-1ubuntu1~22.04) \n")
OPEN = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
        "(dvs-builder@U22-I3-AF03-09-1)  Tue Sep 23 09:25:41 UTC 2025\n"
        "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04) \n")
OPEN_ARM = ("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build  "
            "(dvs-builder@U16-I2-C03-12-4)  Thu Sep 25 00:45:31 UTC 2025\nGCC version:  gcc version 13.3.0\n")
H200 = ("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \n"
        "GCC version:  gcc version 15.3.0 (GCC) \n")  # as read on the H200 machine, 2026-11-29
LEGACY = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  390.157  Wed Oct 12 09:19:07 UTC 2022\n"


@pytest.mark.parametrize("text,expected", [
    (PROPRIETARY, ("535.129.03", "proprietary")),
    (OPEN, ("580.95.05", "open")),
    (OPEN_ARM, ("580.95.05", "open")),
    (H200, ("580.159.04", "open")),
    (LEGACY, ("390.157", "proprietary")),
    ("NVRM version: something else entirely\n", None),
    ("", None),
])
def test_proc_version_wordings(text, expected):
    assert parse_proc_version(text) == expected


@pytest.fixture
def no_pynvml(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import raises ImportError


def test_driver_from_proc_when_nvml_is_missing(tmp_path, no_pynvml):
    proc = tmp_path / "version"
    proc.write_text(OPEN)
    d = read_driver(proc_version=str(proc))
    assert d.present and d.source == "proc" and d.version == "580.95.05" and d.kernel_module == "open"
    assert d.cuda is None and d.gpus == ()
    assert any("nvidia-ml-py is not installed" in n for n in d.notes)


def test_no_driver_is_a_fact(tmp_path, no_pynvml):
    d = read_driver(proc_version=str(tmp_path / "absent"))
    assert d.present is False and "no NVIDIA kernel module" in d.reason and d.version is None
    garbled = tmp_path / "garbled"
    garbled.write_bytes(b"\xff\xfe nonsense\n")
    d = read_driver(proc_version=str(garbled))
    assert d.present is False and any("no driver version" in n for n in d.notes)


class _NVMLError(Exception):  # what pynvml.NVMLError is: a plain Exception subclass
    pass


def _fake_pynvml(*, init_error: str | None = None, cc_error_on: int | None = None) -> types.ModuleType:
    m = types.ModuleType("pynvml")
    m.NVMLError = _NVMLError
    gpus = [("NVIDIA H200", (9, 0), 143771 << 20), (b"NVIDIA GB10", (12, 1), 128 << 30)]
    calls = []

    def init():
        calls.append("init")
        if init_error:
            raise _NVMLError(init_error)

    def cc(h):
        if h == cc_error_on:
            raise _NVMLError("Not Supported")
        return gpus[h][1]

    m.nvmlInit = init
    m.nvmlShutdown = lambda: calls.append("shutdown")
    m.nvmlSystemGetDriverVersion = lambda: "580.95.05"
    m.nvmlSystemGetCudaDriverVersion = lambda: 13000
    m.nvmlDeviceGetCount = lambda: len(gpus)
    m.nvmlDeviceGetHandleByIndex = lambda i: i
    m.nvmlDeviceGetName = lambda h: gpus[h][0]
    m.nvmlDeviceGetCudaComputeCapability = cc
    m.nvmlDeviceGetUUID = lambda h: f"GPU-{h:08x}"
    m.nvmlDeviceGetMemoryInfo = lambda h: types.SimpleNamespace(total=gpus[h][2], free=0, used=0)
    m.calls = calls
    return m


def test_driver_from_nvml(tmp_path, monkeypatch):
    fake = _fake_pynvml(cc_error_on=1)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    proc = tmp_path / "version"
    proc.write_text(OPEN)
    d = read_driver(proc_version=str(proc))
    assert d.present and d.source == "nvml" and d.version == "580.95.05" and d.cuda == (13, 0)
    assert d.cuda_str == "13.0" and d.kernel_module == "open"  # /proc agrees on the version
    h200, gb10 = d.gpus
    assert (h200.name, h200.compute_capability, h200.arch, h200.memory_total) == (
        "NVIDIA H200", (9, 0), "sm_90", 143771 << 20)
    assert gb10.name == "NVIDIA GB10" and gb10.compute_capability is None  # bytes name decoded
    assert any("compute capability of GPU 1 unknown" in n for n in d.notes)
    assert fake.calls == ["init", "shutdown"]


def test_nvml_that_cannot_start_falls_back_to_proc(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml(init_error="Driver Not Loaded"))
    proc = tmp_path / "version"
    proc.write_text(PROPRIETARY)
    d = read_driver(proc_version=str(proc))
    assert d.source == "proc" and d.version == "535.129.03" and d.kernel_module == "proprietary"
    assert d.notes == ("NVML unavailable: _NVMLError: Driver Not Loaded",)
    d = read_driver(proc_version=str(tmp_path / "absent"))
    assert not d.present and d.notes == ("NVML unavailable: _NVMLError: Driver Not Loaded",)


# -- the loader cache, built by the real ldconfig --------------------------------------------------

SONAMES = {"a": ["libcudart.so.12", "libcublas.so.12", "libcublasLt.so.12", "libcudnn.so.9",
                 "libcudnn_ops.so.9", "libnccl.so.2", "libnotcuda.so.1"]}


def _build_lib(path: Path, soname: str) -> None:
    src = path.parent / "f.c"
    src.write_text("int wheeldoc_test_symbol(void) { return 1; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(path), str(src)], check=True)


@pytest.fixture(scope="module")
def lib_tree(tmp_path_factory) -> Path:
    if not (shutil.which("gcc") and shutil.which("ldconfig")):
        pytest.skip("gcc and ldconfig are needed to build a real loader cache")
    root = tmp_path_factory.mktemp("ldcache")
    a, b = root / "a", root / "b"
    a.mkdir()
    b.mkdir()
    for soname in SONAMES["a"]:
        _build_lib(a / (soname + ".0.1"), soname)
    # the real CUDA 13 runtime vendored in torchvision (soname libcudart.so.13)
    if ef.TORCHVISION_0_29_1.is_file():
        with zipfile.ZipFile(ef.TORCHVISION_0_29_1) as zf:
            (b / "libcudart.so.13.0.96").write_bytes(zf.read("torchvision.libs/libcudart.faf08d9a.so.13"))
    else:
        _build_lib(b / "libcudart.so.13.0.96", "libcudart.so.13")
    (root / "ld.so.conf").write_text(f"{a}\n{b}\n")
    for fmt in ("new", "compat"):
        subprocess.run(["ldconfig", "-c", fmt, "-C", str(root / f"cache-{fmt}"), "-f", str(root / "ld.so.conf")],
                       check=True, capture_output=True)
    return root


@pytest.mark.parametrize("fmt", ["new", "compat"])
def test_cache_parse_matches_ldconfig_p(lib_tree, fmt):
    cache = lib_tree / f"cache-{fmt}"
    ours = [(e.name, e.flags, e.path) for e in parse_ld_so_cache(cache.read_bytes(), str(cache))]
    printed = subprocess.run(["ldconfig", "-p", "-C", str(cache)], capture_output=True, text=True, check=True)
    assert ours == [(e.name, e.flags, e.path) for e in parse_ldconfig_p(printed.stdout)]
    assert ("libcudnn_ops.so.9", "libc6,x86-64", str(lib_tree / "a" / "libcudnn_ops.so.9")) in ours


def test_library_path_from_cache_and_ld_library_path(lib_tree):
    env = {"LD_LIBRARY_PATH": f"{lib_tree / 'b'}::/nonexistent"}
    lp = read_library_path(env, cache=str(lib_tree / "cache-new"))
    assert lp.ld_library_path == (str(lib_tree / "b"), "", "/nonexistent") and lp.cache == str(lib_tree / "cache-new")
    assert lp.notes == ("LD_LIBRARY_PATH has an empty entry: the current directory is searched",)
    first = lp.libraries[0]  # LD_LIBRARY_PATH comes first, as the loader searches it first
    assert (first.source, first.family, first.major, first.name) == ("LD_LIBRARY_PATH", "cudart", 13, "libcudart.so.13")
    ours = {(x.family, x.major, x.path) for x in lp.libraries if x.source == "ld.so.cache"}
    a = lib_tree / "a"
    assert {("cudart", 12, str(a / "libcudart.so.12")), ("cublas", 12, str(a / "libcublas.so.12")),
            ("cublasLt", 12, str(a / "libcublasLt.so.12")), ("cudnn", 9, str(a / "libcudnn.so.9")),
            ("cudnn_ops", 9, str(a / "libcudnn_ops.so.9")), ("nccl", 2, str(a / "libnccl.so.2")),
            ("cudart", 13, str(lib_tree / "b" / "libcudart.so.13"))} <= ours
    assert not any("notcuda" in x.path for x in lp.libraries)
    assert {x.major for x in lp.family("cudart")} >= {12, 13}


def test_broken_caches(tmp_path, lib_tree):
    good = (lib_tree / "cache-new").read_bytes()
    with pytest.raises(InputError, match="not a glibc loader cache"):
        parse_ld_so_cache(b"garbage" * 10)
    with pytest.raises(InputError, match="entries declared but the file ends"):
        parse_ld_so_cache(good[:200])
    with pytest.raises(InputError, match="truncated loader cache header"):
        parse_ld_so_cache(good[:30])
    huge = bytearray(good)
    huge[20:24] = (0xFFFFFFFF).to_bytes(4, "little")
    with pytest.raises(LimitExceeded, match="entries declared"):
        parse_ld_so_cache(bytes(huge))
    bad_offset = bytearray(good)
    bad_offset[48 + 4: 48 + 8] = (len(good) + 10).to_bytes(4, "little")  # first key past the end
    with pytest.raises(InputError, match="past the end of the cache"):
        parse_ld_so_cache(bytes(bad_offset))
    # a broken cache on a read is a note, with no libraries from it; LD_LIBRARY_PATH still read
    (tmp_path / "cache").write_bytes(good[:200])
    lp = read_library_path({"LD_LIBRARY_PATH": str(lib_tree / "b")}, cache=str(tmp_path / "cache"), ldconfig=False)
    assert [(x.source, x.name) for x in lp.libraries] == [  # ldconfig made the soname link
        ("LD_LIBRARY_PATH", "libcudart.so.13"), ("LD_LIBRARY_PATH", "libcudart.so.13.0.96")]
    assert "entries declared but the file ends" in lp.notes[0]


def test_ldconfig_p_fallback(tmp_path, lib_tree, monkeypatch):
    from wheeldoc.environment import machine

    printed = subprocess.run(["ldconfig", "-p", "-C", str(lib_tree / "cache-new")], capture_output=True,
                             text=True, check=True).stdout
    monkeypatch.setattr(machine, "_run_ldconfig", lambda: printed)
    lp = read_library_path({}, cache=str(tmp_path / "no-cache"))
    assert lp.cache == "ldconfig -p" and lp.notes == (f"no loader cache at {tmp_path / 'no-cache'}",)
    assert {(x.family, x.major) for x in lp.libraries if x.source == "ldconfig -p"} >= {("cudnn", 9), ("nccl", 2)}


def test_library_name_pattern():
    ok = {"libcudart.so.12": ("cudart", "12"), "libcudart.so": ("cudart", None),
          "libcublasLt.so.13.1.1": ("cublasLt", "13"), "libcudnn_engines_precompiled.so.9": (
              "cudnn_engines_precompiled", "9"), "libcuda.so.1": ("cuda", "1"), "libnccl.so.2.30.7": ("nccl", "2")}
    for name, (fam, major) in ok.items():
        m = CUDA_LIBRARY.match(name)
        assert m and (m["family"], m["major"]) == (fam, major), name
    for name in ("libcudart.so.12.bak", "libcudart_static.a", "libcudnn.so.9.txt", "libcu.so.1"):
        assert not CUDA_LIBRARY.match(name), name


def test_host_machine_reads_without_error():
    """Whatever this machine has: a driver or not, a cache or not, the readers answer."""
    d = read_driver()
    assert d.present in (True, False) and d.reason
    lp = read_library_path()
    assert lp.cache is None or lp.cache in ("/etc/ld.so.cache", "ldconfig -p")


def test_mutated_caches_raise_only_input_errors(lib_tree):
    """Random byte flips of a real cache: parsed or refused cleanly, never a traceback."""
    import random

    good = (lib_tree / "cache-compat").read_bytes()
    rng = random.Random(7)
    outcomes = {"parsed": 0, "refused": 0}
    for _ in range(400):
        data = bytearray(good)
        for _ in range(rng.randint(1, 8)):
            pos = rng.randrange(0, min(len(data), 16 + 48 + 24 * 40)) if rng.random() < 0.8 else rng.randrange(len(data))
            data[pos] = rng.randrange(256)
        if rng.random() < 0.2:
            data = data[: rng.randrange(len(data))]
        try:
            parse_ld_so_cache(bytes(data))
            outcomes["parsed"] += 1
        except InputError:
            outcomes["refused"] += 1
    assert outcomes["parsed"] and outcomes["refused"]


def test_loader_cache_names_are_decoded_once_and_within_a_budget():
    from tests.hostile.bombs import loader_cache

    shared = parse_ld_so_cache(loader_cache(1 << 16))
    assert len(shared) == 1 << 16 and len({id(e.name) for e in shared}) == 1
    with pytest.raises(LimitExceeded, match=r"names read from the cache exceed 4x its [0-9,]+ bytes"):
        parse_ld_so_cache(loader_cache(1 << 16, regions=16, sliding=True))
    with pytest.raises(LimitExceeded, match="262,145 entries declared"):
        parse_ld_so_cache(loader_cache((1 << 18) + 1))
