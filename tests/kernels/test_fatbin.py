"""The fatbin source against the fixtures built by fixtures/kernels/build.py with real nvcc.

Expectations come from fixtures/kernels/manifest.json, which the build script writes from its
recipe (never from a parser), and from cuobjdump, run on the same files.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.kernels import fatbin as F
from wheeldoc.kernels.cubin import is_cubin, read_cubin

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "fixtures" / "kernels"
MANIFEST = json.loads((KERNELS / "manifest.json").read_text())["fixtures"]
GOOD = [m for m in MANIFEST if "broken" not in m]
BROKEN = [m for m in MANIFEST if "broken" in m]
CUOBJDUMP = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" \
    / "site-packages" / "nvidia" / "cu13" / "bin" / "cuobjdump"

needs_cuobjdump = pytest.mark.skipif(not CUOBJDUMP.exists(),
                                     reason="nvidia-cuda-cuobjdump (dev dependency) not installed")


def ids(ms):
    return [m["file"] for m in ms]


def spec(e: F.FatbinEntry) -> dict:
    return {"kind": e.kind, "arch": e.arch, "ptx_isa": e.ptx_isa, "compression": e.compression}


def canon(container: list[dict]) -> list[str]:
    return sorted(json.dumps(x, sort_keys=True) for x in container)


def cuobjdump_listing(path: Path) -> list[str]:
    proc = subprocess.run([str(CUOBJDUMP), "-lelf", "-lptx", str(path)], capture_output=True,
                          text=True, timeout=600)
    return proc.stdout.splitlines()


def same_but_f_quirk(mine: list[str], theirs: list[str]) -> tuple[bool, int]:
    """Equal line for line, except that cuobjdump drops the `f` of family cubins."""
    if len(mine) != len(theirs):
        return False, 0
    quirks = 0
    for a, b in zip(mine, theirs):
        if a == b:
            continue
        if re.sub(r"(\.sm_\d+)f\.cubin$", r"\1.cubin", a) == b:
            quirks += 1
            continue
        return False, quirks
    return True, quirks


# -- fixtures parse to what the build recipe says ---------------------------------------------


def test_manifest_covers_the_brief():
    files = {m["file"] for m in MANIFEST}
    assert len(GOOD) >= 80 and len(BROKEN) >= 10
    comps = {e["compression"] for m in GOOD for c in m["containers"] for e in c}
    assert comps == {None, "zstd", "lz4"}
    archs = {e["arch"] for m in GOOD for c in m["containers"] for e in c}
    assert {"sm_80", "sm_90", "sm_90a", "sm_100a", "sm_120", "sm_120f", "sm_121", "sm_121a"} <= archs
    isas = {e["ptx_isa"] for m in GOOD for c in m["containers"] for e in c}
    assert {"8.8", "9.0", "9.1", "9.5"} <= isas
    assert {"librdc.so", "liblto.so", "empty.fatbin", "libptxonly.so", "concat-mixed.fatbin",
            "libabi7-lz4.so", "sm_90-abi7.cubin"} <= files
    total = sum(p.stat().st_size for p in KERNELS.rglob("*") if p.is_file())
    assert total < 2 * 1024 * 1024


@pytest.mark.parametrize("fx", GOOD, ids=ids(GOOD))
def test_fixture_matches_manifest(fx):
    fb = F.open_fatbin(KERNELS / fx["file"])
    got = [[spec(e) for e in c.entries] for c in fb.containers]
    if fx["ordered"]:
        assert got == fx["containers"]
    else:
        assert sorted(map(canon, got)) == sorted(map(canon, fx["containers"]))
    if fx.get("section"):
        assert fb.section == fx["section"]
    if fx.get("identifier"):
        assert {e.identifier for e in fb.entries} == {fx["identifier"]}
    # indices are consistent
    assert [e.index for e in fb.entries] == list(range(len(fb.entries)))
    for c in fb.containers:
        assert all(e.container == c.index for e in c.entries)


@pytest.mark.parametrize("fx", GOOD, ids=ids(GOOD))
def test_every_image_decodes_and_agrees_with_its_header(fx):
    """Decompress each payload: PTX text repeats the header's ISA and target, a cubin's ELF
    the header's SM (and `a`, except where the ELF cannot say)."""
    path = KERNELS / fx["file"]
    fb = F.open_fatbin(path)
    for e in fb.entries:
        if e.kind == "lto-ir":
            assert e.obfuscated and e.options and "-ftz" in e.options
            with pytest.raises(InputError, match="obfuscated"):
                F.entry_image(path, e)
            continue
        image = F.entry_image(path, e)
        assert len(image) == e.size
        if e.kind == "ptx":
            text = image.rstrip(b"\0").decode()
            assert re.search(rf"^\.version {re.escape(e.ptx_isa)}$", text, re.M)
            assert re.search(rf"^\.target sm_{e.sm}{e.suffix}\b", text, re.M), text[:300]
        elif e.kind == "cubin":
            assert is_cubin(image)
            info = F.entry_cubin_info(path, e)
            assert info.sm == e.sm
            if e.suffix == "a":
                assert info.accelerator is True and info.arch == e.arch
            elif info.accelerator is not None:
                assert info.accelerator is False
            if e.compat_accelerator is not None:
                assert e.compat_accelerator == info.accelerator


@needs_cuobjdump
@pytest.mark.parametrize("fx", GOOD, ids=ids(GOOD))
def test_listing_parity_with_cuobjdump(fx):
    path = KERNELS / fx["file"]
    mine = F.listing(F.open_fatbin(path))
    theirs = cuobjdump_listing(path)
    ok, _ = same_but_f_quirk(mine, theirs)
    assert ok, (mine, theirs)


@pytest.mark.parametrize("fx", BROKEN, ids=ids(BROKEN))
def test_broken_fixture_gives_input_error(fx):
    path = KERNELS / fx["file"]
    want = fx["broken"]
    with pytest.raises(InputError) as info:
        fb = F.open_fatbin(path)
        assert want["stage"] == "image", "listing should have failed"
        for e in fb.entries:
            F.entry_image(path, e)
    err = info.value
    assert want["error"] in err.message, err
    if want["offset"] is not None:
        assert err.offset == want["offset"], err
    assert err.path == str(path)
    if want["error"] == "limit":
        assert isinstance(err, LimitExceeded)


# -- details ----------------------------------------------------------------------------------


def load(name: str) -> F.Fatbin:
    return F.open_fatbin(KERNELS / name)


def test_flags_compression_and_sizes():
    fb = load("comp-size.fatbin")
    cubin, ptx = sorted(fb.entries, key=lambda e: e.kind)
    assert cubin.kind == "cubin" and cubin.compression == "zstd"
    assert cubin.compressed_size <= cubin.payload_size and cubin.decompressed_size > 0
    assert ptx.virtual_arch == "compute_90" and ptx.cc == (9, 0) and ptx.code_version == (9, 0)
    raw = load("comp-none.fatbin")
    assert all(e.compressed_size is None and e.decompressed_size is None for e in raw.entries)
    assert all(e.flags & F.FLAG_64BIT and e.flags & F.FLAG_LINUX for e in raw.entries)


def test_compressed_images_equal_the_raw_build():
    """zstd and lz4 images decompress to exactly what the uncompressed build stores."""
    def images(name):
        path = KERNELS / name
        return {e.kind: F.entry_image(path, e).rstrip(b"\0") if e.kind == "ptx"
                else F.entry_image(path, e) for e in F.open_fatbin(path).entries}

    raw = images("comp-none.fatbin")
    for name in ("comp-size.fatbin", "comp-all-speed.fatbin", "comp-speed.fatbin"):
        assert images(name) == raw, name


def test_cubin_toolkit_notes_and_abi():
    s90 = read_cubin((KERNELS / "sm_90.cubin").read_bytes())
    assert (s90.abi_version, s90.osabi, s90.elf_type) == (8, 65, "exec")
    assert s90.toolkit == "13.0" and s90.cuinfo_sm == 90 and s90.tool == "ptxas"
    assert "release 13.0, V13.0.88" in s90.tool_version and s90.tool_options.startswith("-arch sm_90")
    s90a = read_cubin((KERNELS / "sm_90a.cubin").read_bytes())
    assert s90a.accelerator is True and s90a.arch == "sm_90a" and (9, 1) in s90a.compat
    abi7 = read_cubin((KERNELS / "sm_90-abi7.cubin").read_bytes())
    assert (abi7.abi_version, abi7.osabi, abi7.sm) == (7, 51, 90)
    assert abi7.toolkit is None and abi7.tool is None and abi7.accelerator is False
    c129 = read_cubin((KERNELS / "sm_100a-cu129.cubin").read_bytes())
    assert c129.abi_version == 8 and c129.e_flags & 0xFF == 0x0A and c129.accelerator is True
    assert "release 12.9" in c129.tool_version
    f = read_cubin((KERNELS / "sm_121f.cubin").read_bytes())
    assert f.arch == "sm_121" and "-arch sm_121f" in f.tool_options  # `f` only in the options
    assert read_cubin((KERNELS / "sm_90-cu135.cubin").read_bytes()).toolkit == "13.5"


def test_nvlink_and_relocatable_cubins():
    path = KERNELS / "libnvlink.so"
    fb = F.open_fatbin(path)
    tools = sorted(F.entry_cubin_info(path, e).tool for e in fb.entries if e.kind == "cubin")
    assert tools == ["nvlink", "ptxas"]
    rdc = KERNELS / "librdc.so"
    (e,) = F.open_fatbin(rdc).entries
    assert F.entry_cubin_info(rdc, e).elf_type == "rel"
    linked = load("librdc-linked.so")
    assert linked.section == ".nv_fatbin" and linked.other_sections == ("__nv_relfatbin",)
    forced = F.open_fatbin(KERNELS / "librdc-linked.so", section="__nv_relfatbin")
    assert forced.section == "__nv_relfatbin" and forced.other_sections == (".nv_fatbin",)
    assert [e.arch for e in forced.entries] == ["sm_90"]


def test_empty_and_hostonly():
    assert [c.fat_size for c in load("empty.fatbin").containers] == [0]
    ptxonly = load("libptxonly.so")
    assert [len(c.entries) for c in ptxonly.containers] == [0, 1]
    host = load("libhostonly.so")
    assert host.format == "none" and host.containers == () and F.listing(host) == []


def test_concatenated_entries():
    fb = load("concat-mixed.fatbin")
    inner = [e for e in fb.entries if e.parent is not None]
    assert len(inner) == 4 and {e.parent.kind for e in inner} == {"concat"}
    assert len({e.parent.offset for e in inner}) == 2  # PTX pair and cubin pair
    alone = [e for e in fb.entries if e.parent is None]
    assert [e.arch for e in alone] == ["sm_120f"] and alone[0].compat_accelerator is False


def test_standalone_formats():
    ptx = load("compute_120f-isa9.0.ptx")
    assert ptx.format == "ptx" and ptx.entries[0].arch == "sm_120f"
    assert F.listing(ptx) == []  # cuobjdump reads no PTX text files
    cub = load("sm_121a.cubin")
    assert cub.format == "cubin" and F.listing(cub) == ["ELF file    1: sm_121a.sm_121a.cubin"]


def test_buffer_and_file_reads_agree():
    path = KERNELS / "libmulti.so"
    data = path.read_bytes()
    a, b = F.open_fatbin(path), F.read_fatbin(data, str(path))
    assert a == b
    e = b.entries[-1]
    assert F.entry_image(data, e) == F.entry_image(path, e)
    c = b.containers[1]
    assert F.container_bytes(path, c) == F.container_bytes(data, c) == data[c.offset:c.end]


def test_zip_member_errors_name_the_member(tmp_path):
    """Callers reading wheel members pass member=; errors then say which one."""
    whl = tmp_path / "x-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        z.write(KERNELS / "broken" / "truncated.fatbin", "x/lib/bad.fatbin")
    with zipfile.ZipFile(whl) as z:
        data = z.read("x/lib/bad.fatbin")
    with pytest.raises(InputError) as info:
        F.read_fatbin(data, str(whl), member="x/lib/bad.fatbin")
    assert info.value.member == "x/lib/bad.fatbin"
    assert "x/lib/bad.fatbin" in str(info.value)


def test_listing_names():
    fb = load("libident.so")
    assert F.listing(fb, name="whatever.so") == ["ELF file    1: MYIDENT.sm_90.cubin"]
    assert F.listing(load("fb-sm90-ptx90.fatbin"), name="/x/libcublasLt.so.13") == [
        "ELF file    1: libcublasLt.so.1.sm_90.cubin", "PTX file    1: libcublasLt.so.1.sm_90.ptx"]


def test_image_size_limit():
    path = KERNELS / "fb-sm80-ptx80.fatbin"
    ptx = next(e for e in F.open_fatbin(path).entries if e.kind == "ptx")
    with pytest.raises(LimitExceeded):
        F.entry_image(path, ptx, max_size=16)


@pytest.mark.slow
def test_mutated_fixtures_never_escape_input_error():
    """Flip bytes in headers of several fixtures: only InputError may come out."""
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st

    seeds = [(KERNELS / n).read_bytes() for n in
             ("fb-sm80-ptx80.fatbin", "concat-mixed.fatbin", "libmulti.so", "sm_90a.cubin")]

    @hypothesis.settings(max_examples=300, deadline=None, derandomize=True)
    @hypothesis.given(st.sampled_from(range(len(seeds))), st.lists(
        st.tuples(st.integers(0, 4095), st.integers(0, 255)), min_size=1, max_size=8))
    def run(which, edits):
        data = bytearray(seeds[which])
        for at, value in edits:
            data[at % len(data)] = value
        try:
            fb = F.read_fatbin(bytes(data), "mutant")
            for e in fb.entries[:4]:
                F.entry_image(bytes(data), e, max_size=1 << 20)
        except InputError:
            pass

    run()


# -- real CUDA libraries (slow) -----------------------------------------------------------------

WHEEL_DIRS = [Path("/opt/pypi-more/files"), Path("/opt/wheels")]
REAL_LIBRARIES = [
    ("nvidia_cublas-13.1.1.3-*.whl", "nvidia/cu13/lib/libcublasLt.so.13"),
    ("nvidia_nccl_cu13-*.whl", "nvidia/nccl/lib/libnccl.so.2"),
    ("nvidia_cudnn_cu13-*.whl", "nvidia/cudnn/lib/libcudnn_engines_precompiled.so.9"),
    ("torch-2.14.1-*.whl", "torch/lib/libtorch_cuda.so"),
]
TEST_CACHE = Path.home() / ".cache" / "wheeldoc-tests"


def _wheel_sha256(wheel: Path) -> str:
    """sha256 of a wheel, memoised by (path, size, mtime) in the test cache."""
    import hashlib

    st = wheel.stat()
    key = f"{wheel}|{st.st_size}|{st.st_mtime_ns}"
    memo_file = TEST_CACHE / "sha256.json"
    memo = json.loads(memo_file.read_text()) if memo_file.exists() else {}
    if key not in memo:
        h = hashlib.sha256()
        with open(wheel, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 22), b""):
                h.update(block)
        memo[key] = h.hexdigest()
        TEST_CACHE.mkdir(parents=True, exist_ok=True)
        tmp = memo_file.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(memo))
        tmp.replace(memo_file)
    return memo[key]


def extract_member(pattern: str, member: str) -> Path:
    """One member of a local wheel, extracted (once) to a path of our choosing."""
    wheels = [w for d in WHEEL_DIRS for w in sorted(d.glob(pattern))]
    if not wheels:
        pytest.skip(f"no local wheel matching {pattern}")
    wheel = wheels[0]
    dest = TEST_CACHE / _wheel_sha256(wheel) / Path(member).name
    if not dest.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
        with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(tmp, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
        tmp.replace(dest)
    return dest


@pytest.mark.slow
@needs_cuobjdump
@pytest.mark.parametrize("pattern, member", REAL_LIBRARIES, ids=[Path(m).name for _, m in REAL_LIBRARIES])
def test_real_library_parity_with_cuobjdump(pattern, member):
    lib = extract_member(pattern, member)
    fb = F.open_fatbin(lib)
    mine = F.listing(fb)
    theirs = cuobjdump_listing(lib)
    ok, quirks = same_but_f_quirk(mine, theirs)
    assert ok, next(((a, b) for a, b in zip(mine, theirs) if a != b), (len(mine), len(theirs)))
    assert len(mine) > 100
    assert quirks == sum(e.kind == "cubin" and e.suffix == "f" for e in fb.entries)
    if lib.name == "libcublasLt.so.13":
        assert quirks > 1000 and len(fb.entries) == len(mine) > 5000
