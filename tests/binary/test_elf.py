"""wheeldoc.binary.elf on the g++-built fixtures, cross-checked against readelf and nm."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.binary import elf as elfmod
from wheeldoc.binary.elf import (
    ElfInfo,
    SymbolVersion,
    VersionDefinition,
    VersionRequirement,
    read_elf,
    read_elf_member,
    read_elf_path,
    read_elf_stream,
)

ABI = Path(__file__).resolve().parents[2] / "fixtures" / "abi"
LIBS = sorted(p for p in (ABI / "lib").rglob("*.so*")) + sorted((ABI / "ext").glob("*.so"))
QUERY = "_ZNK3c104cuda10CUDAStream5queryEv"

needs_binutils = pytest.mark.skipif(not (shutil.which("readelf") and shutil.which("nm")),
                                    reason="binutils (readelf, nm) not installed")


def rel(p: Path) -> str:
    return str(p.relative_to(ABI))


# -- what binutils says --------------------------------------------------------------
_SYM = re.compile(r"^\s*(\d+): [0-9a-f]+\s+\S+\s+(\S+)\s+(<OS specific>: \d+|\S+)\s+(\S+)\s+(\S+)\s+(.*)$")
_BIND = {"GLOBAL": "GLOBAL", "WEAK": "WEAK", "LOCAL": "LOCAL", "UNIQUE": "GNU_UNIQUE",
         "<OS specific>: 10": "GNU_UNIQUE"}


def readelf_symbols(path: Path) -> list[tuple]:
    """(index, name, binding, type, visibility, defined, version, hidden, library-less?)."""
    out = subprocess.run(["readelf", "-W", "--dyn-syms", str(path)], capture_output=True, text=True,
                         check=True).stdout
    rows = []
    for line in out.splitlines():
        m = _SYM.match(line)
        if not m or m.group(1) == "0":
            continue
        index, typ, bind, vis, ndx, name = m.groups()
        name = re.sub(r" \(\d+\)$", "", name)
        version, hidden = None, False
        if "@@" in name:
            name, version = name.split("@@", 1)
        elif "@" in name:
            name, version = name.split("@", 1)
            hidden = ndx != "UND"
        rows.append((int(index), name, _BIND[bind], typ, vis, ndx != "UND", version, hidden))
    return rows


def readelf_dynamic(path: Path) -> dict[str, list[str]]:
    out = subprocess.run(["readelf", "-W", "-d", str(path)], capture_output=True, text=True, check=True).stdout
    found: dict[str, list[str]] = {"NEEDED": [], "SONAME": [], "RPATH": [], "RUNPATH": []}
    for tag, value in re.findall(r"\((NEEDED|SONAME|RPATH|RUNPATH)\)\s+[^\[]*\[(.*)\]", out):
        found[tag].append(value)
    return found


def readelf_versions(path: Path) -> tuple[list[tuple], list[tuple]]:
    """(definitions as (index, name, flags-base?), requirements as (file, name, index, weak?))."""
    out = subprocess.run(["readelf", "-W", "-V", str(path)], capture_output=True, text=True, check=True).stdout
    defs = [(int(i), name, "BASE" in flags) for flags, i, name in
            re.findall(r"Rev: \d+\s+Flags: (\S+(?: \| \S+)*)\s+Index: (\d+)\s+Cnt: \d+\s+Name: (\S+)", out)]
    reqs, current = [], None
    for line in out.splitlines():
        m = re.search(r"File: (\S+)\s+Cnt:", line)
        if m:
            current = m.group(1)
        m = re.search(r"Name: (\S+)\s+Flags: (.*?)\s+Version: (\d+)", line)
        if m and current:
            reqs.append((current, m.group(1), int(m.group(3)), "WEAK" in m.group(2)))
    return defs, reqs


def nm_defined(path: Path) -> set[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


def ours(info: ElfInfo) -> list[tuple]:
    """Our symbols in readelf's terms. readelf prints no version on a version's own
    definition symbol (`LIBX_2.0`, ABS, versioned LIBX_2.0); we keep the version there."""
    rows = []
    for s in info.symbols:
        v = s.version if s.version and s.version.name != s.name else None
        rows.append((s.index, s.name, s.binding, s.type, s.visibility, s.defined,
                     v.name if v else None, v.hidden if v else False))
    return rows


# -- cross-checks on every fixture ---------------------------------------------------
@needs_binutils
@pytest.mark.parametrize("path", LIBS, ids=rel)
def test_symbols_match_readelf(path: Path) -> None:
    assert ours(read_elf_path(path)) == readelf_symbols(path)


@needs_binutils
@pytest.mark.parametrize("path", LIBS, ids=rel)
def test_dynamic_matches_readelf(path: Path) -> None:
    info = read_elf_path(path)
    d = readelf_dynamic(path)
    assert list(info.needed) == d["NEEDED"]
    assert ([info.soname] if info.soname else []) == d["SONAME"]
    assert list(info.rpath) == [p for v in d["RPATH"] for p in v.split(":")]
    assert list(info.runpath) == [p for v in d["RUNPATH"] for p in v.split(":")]


@needs_binutils
@pytest.mark.parametrize("path", LIBS, ids=rel)
def test_versions_match_readelf(path: Path) -> None:
    info = read_elf_path(path)
    defs, reqs = readelf_versions(path)
    assert [(v.index, v.name, v.is_base) for v in info.version_definitions] == defs
    assert [(r.library, r.name, r.index, r.weak) for r in info.version_requirements] == reqs


@needs_binutils
@pytest.mark.parametrize("path", LIBS, ids=rel)
def test_exported_names_match_nm(path: Path) -> None:
    assert read_elf_path(path).symbols.exported_names() == nm_defined(path)


@pytest.mark.parametrize("name", ["libc10_cuda.so", "libtorch.so", "libx.so.1", "be_libx.so.1"])
def test_stripped_section_headers_read_through_segments(name: str) -> None:
    original = {"libc10_cuda.so": "lib/v1/libc10_cuda.so", "libtorch.so": "lib/libtorch.so",
                "libx.so.1": "lib/libx_v2/libx.so.1", "be_libx.so.1": "lib/be/libx.so.1"}[name]
    full, stripped = read_elf_path(ABI / original), read_elf_path(ABI / "stripped" / name)
    assert full.tables_from == "sections" and stripped.tables_from == "segments"
    for field in ("soname", "needed", "rpath", "runpath", "version_definitions",
                  "version_requirements", "symbols"):
        assert getattr(stripped, field) == getattr(full, field), field


# -- exact values ----------------------------------------------------------------------
def test_c10_cuda_v1_exports_query() -> None:
    info = read_elf_path(ABI / "lib/v1/libc10_cuda.so")
    assert info.machine == "x86_64" and info.elf_class == 64 and info.file_type == "DYN"
    assert info.soname == "libc10_cuda.so"
    assert info.needed == ("libc10.so", "libcudart.so.13")
    assert info.rpath == ("$ORIGIN/../../nvidia/cu13/lib", "$ORIGIN") and info.runpath == ()
    assert info.symbols.exported_names() == {QUERY, "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib"}
    assert info.version_requirements == (VersionRequirement("libcudart.so.13", "libcudart.so.13", 2, 0),)
    assert info.version_definitions == () and info.defined_versions == ()
    refs = {s.name: s for s in info.symbols.undefined()}
    assert refs["cudaStreamQuery"].version == SymbolVersion("libcudart.so.13", False, "libcudart.so.13")
    assert refs["_ZN3c109alloc_cpuEm"].version is None and refs["__gmon_start__"].weak


def test_c10_cuda_v2_lost_query_but_has_relatives() -> None:
    exported = read_elf_path(ABI / "lib/v2/libc10_cuda.so").symbols.exported_names()
    assert QUERY not in exported
    assert exported == {"_ZNK3c104cuda10CUDAStream5queryEb",
                        "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_jbb"}


def test_extension_imports() -> None:
    info = read_elf_path(ABI / "ext/_C.so")
    assert info.soname is None
    assert info.needed == ("libc10_cuda.so", "libc10.so", "libcudart.so.13")
    assert info.runpath == ("$ORIGIN/../torch/lib",) and info.rpath == ()
    strong = {s.name for s in info.symbols.undefined() if not s.weak}
    assert strong == {QUERY, "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib",
                      "_ZN3c109alloc_cpuEm", "cudaGetDeviceCount"}
    assert info.symbols.exported_names() == {"ext_ready"}


def test_binding_type_visibility_kinds() -> None:
    c10 = {s.name: s for s in read_elf_path(ABI / "lib/libc10.so").symbols}
    assert c10["_ZN3c1014current_deviceE"].type == "TLS"
    assert c10["_ZN3c1017protected_counterE"].visibility == "PROTECTED"
    assert c10["_ZN3c1017protected_counterE"].exported
    assert c10["_ZN3c1019weak_default_deviceEv"].binding == "WEAK" and c10["_ZN3c1019weak_default_deviceEv"].defined
    assert not any("hidden_helper" in n for n in c10)
    torch = {s.name: s for s in read_elf_path(ABI / "lib/libtorch.so").symbols}
    unique = torch["_ZZN5torch8RegistryIiE5countEvE1c"]
    assert (unique.binding, unique.type, unique.exported) == ("GNU_UNIQUE", "OBJECT", True)
    assert torch["memcpy"].version == SymbolVersion("GLIBC_2.14", False, "libc.so.6")


def test_cxx11_and_old_string_abi() -> None:
    cxx11 = {s.name for s in read_elf_path(ABI / "ext/ext_cxx11.so").symbols.undefined()}
    old = {s.name for s in read_elf_path(ABI / "ext/ext_oldabi.so").symbols.undefined()}
    assert "_ZN5torch9make_nameERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE" in cxx11
    assert "_ZN5torch9make_nameERKSs" in old
    exported = read_elf_path(ABI / "lib/libtorch.so").symbols.exported_names()
    assert "_ZN5torch9make_nameERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE" in exported
    assert "_ZN5torch9make_nameERKSs" not in exported


def test_version_definitions_and_hidden_versions() -> None:
    v2 = read_elf_path(ABI / "lib/libx_v2/libx.so.1")
    assert v2.version_definitions == (VersionDefinition(1, "libx.so.1", 1), VersionDefinition(2, "LIBX_1.0", 0),
                                      VersionDefinition(3, "LIBX_2.0", 0, ("LIBX_1.0",)))
    assert v2.defined_versions == ("LIBX_1.0", "LIBX_2.0")
    exports = v2.symbols.exports()
    assert exports["libx_foo"] == (SymbolVersion("LIBX_1.0", hidden=True), SymbolVersion("LIBX_2.0"))
    assert exports["libx_bar"] == (SymbolVersion("LIBX_2.0"),)
    assert str(next(s for s in v2.symbols if s.name == "libx_foo" and s.version.hidden)) == "libx_foo@LIBX_1.0"
    v1 = read_elf_path(ABI / "lib/libx_v1/libx.so.1")
    assert v1.defined_versions == ("LIBX_1.0",)
    assert "libx_bar" not in v1.symbols.exports()


def test_32_bit_and_big_endian_flavours_read_the_same() -> None:
    le64 = read_elf_path(ABI / "lib/libx_v2/libx.so.1")
    i386 = read_elf_path(ABI / "lib/i386/libx.so.1")
    be64 = read_elf_path(ABI / "lib/be/libx.so.1")
    assert (i386.machine, i386.elf_class, i386.little_endian) == ("i386", 32, True)
    assert (be64.machine, be64.elf_class, be64.little_endian) == ("x86_64", 64, False)
    for other in (i386, be64):
        assert other.soname == "libx.so.1" and other.version_definitions == le64.version_definitions
        assert other.symbols.exports() == le64.symbols.exports()
    assert be64.symbols == le64.symbols  # columns are stored little-endian whatever the file's order
    for consumer in ("ext/i386_uses_libx.so", "ext/be_uses_libx.so"):
        refs = {s.name: s.version for s in read_elf_path(ABI / consumer).symbols.undefined() if s.version}
        assert refs["libx_foo"] == SymbolVersion("LIBX_2.0", False, "libx.so.1")


def test_versioned_references() -> None:
    info = read_elf_path(ABI / "ext/uses_libx.so")
    assert info.rpath == ("$ORIGIN",)
    refs = {s.name: s.version for s in info.symbols.undefined() if s.version}
    assert refs == {"libx_foo": SymbolVersion("LIBX_2.0", False, "libx.so.1"),
                    "libx_bar": SymbolVersion("LIBX_2.0", False, "libx.so.1"),
                    "libx_old": SymbolVersion("LIBX_1.0", False, "libx.so.1")}
    assert {(r.library, r.name) for r in info.version_requirements} == {("libx.so.1", "LIBX_1.0"),
                                                                        ("libx.so.1", "LIBX_2.0")}


def test_missing_weak_and_cuda_runtime_cases() -> None:
    assert "libmissing_dep.so" in read_elf_path(ABI / "ext/ext_missing.so").needed
    weak = {s.name: s for s in read_elf_path(ABI / "ext/ext_weak.so").symbols.undefined()}
    assert weak["optional_hook"].weak and not weak["cudaGetDeviceCount"].weak
    for major in ("12", "13"):
        info = read_elf_path(ABI / f"ext/ext_cudart{major}.so")
        assert f"libcudart.so.{major}" in info.needed
        ref = next(s for s in info.symbols.undefined() if s.name == "cudaGetDeviceCount")
        assert ref.version == SymbolVersion(f"libcudart.so.{major}", False, f"libcudart.so.{major}")
        runtime = read_elf_path(ABI / f"lib/cudart{major}/libcudart.so.{major}")
        assert runtime.soname == f"libcudart.so.{major}"
        assert runtime.defined_versions == (f"libcudart.so.{major}",)


def test_buffers_of_every_kind_and_json_round_trip() -> None:
    raw = (ABI / "lib/libx_v2/libx.so.1").read_bytes()
    a = read_elf(raw, "x.so")
    assert read_elf(memoryview(raw), "x.so") == a == read_elf(bytearray(raw), "x.so")
    back = ElfInfo.from_json(a.to_json())
    assert back == a and back.symbols.exports() == a.symbols.exports()
    with pytest.raises(ValueError):
        ElfInfo.from_json({**a.to_json(), "parser": "elf-0"})


# -- reading while inflating ------------------------------------------------------------
FACTS = ("machine", "elf_class", "little_endian", "file_type", "soname", "needed", "rpath", "runpath",
         "version_definitions", "version_requirements", "symbols")


def same_facts(a: ElfInfo, b: ElfInfo) -> bool:
    return all(getattr(a, f) == getattr(b, f) for f in FACTS)


def pieces(data: bytes, size: int):
    return ((at, data[at: at + size]) for at in range(0, len(data), size))


@pytest.mark.parametrize("piece", [pytest.param(1, marks=pytest.mark.slow), 13, 4096, 1 << 20])  # 1: slow
@pytest.mark.parametrize("path", LIBS + sorted((ABI / "stripped").iterdir()), ids=rel)
def test_stream_reads_what_the_whole_file_says(path: Path, piece: int) -> None:
    data = path.read_bytes()
    got = read_elf_stream(pieces(data, piece), len(data), str(path))
    assert got is not None and got.tables_from == "segments"
    assert same_facts(got, read_elf(data, str(path)))


def test_stream_gives_up_when_a_needed_range_went_by(monkeypatch: pytest.MonkeyPatch) -> None:
    data = (ABI / "lib/v1/libc10_cuda.so").read_bytes()
    monkeypatch.setattr(elfmod, "STREAM_HEAD", 64)
    monkeypatch.setattr(elfmod, "STREAM_CAP", 16)  # keep almost nothing: the tables go by
    assert read_elf_stream(pieces(data, 512), len(data), "x.so") is None


def test_stream_stops_early_when_the_tables_are_at_the_front() -> None:
    data = (ABI / "lib/v1/libc10_cuda.so").read_bytes() + bytes(1 << 20)  # a long tail after
    seen = []

    def feed():
        for at, piece in pieces(data, 4096):
            seen.append(at)
            yield at, piece

    got = read_elf_stream(feed(), len(data), "x.so")
    assert got is not None and got.soname == "libc10_cuda.so"
    assert max(seen) < 64 << 10  # stopped long before the end


@pytest.mark.parametrize("name", ["bad_magic.so", "truncated_header.so", "symbol_name_past_strtab.so",
                                  "stripped_huge_gnu_hash.so"])
def test_stream_rejects_broken_files(name: str) -> None:
    data = (ABI / "broken" / name).read_bytes()
    with pytest.raises(InputError):
        read_elf_stream(pieces(data, 1000), len(data), name)


def test_member_reader_streams_and_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from wheeldoc.binary.members import WheelArchive

    wheel_path = ABI / "wheels" / "fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"
    whole = read_elf_path(ABI / "lib/v1/libc10_cuda.so")
    monkeypatch.setattr(elfmod, "STREAM_MIN", 0)  # stream even these small members
    with WheelArchive(wheel_path) as wheel:
        streamed = read_elf_member(wheel, "torch/lib/libc10_cuda.so")
        assert streamed.tables_from == "segments" and same_facts(streamed, whole)
        monkeypatch.setattr(elfmod, "STREAM_HEAD", 64)
        monkeypatch.setattr(elfmod, "STREAM_CAP", 16)  # the tables go by unkept: read it whole
        fallback = read_elf_member(wheel, "torch/lib/libc10_cuda.so")
        assert fallback.tables_from == "sections" and same_facts(fallback, whole)


SEEDS_STREAM = [(ABI / p).read_bytes() for p in ("lib/libx_v2/libx.so.1", "stripped/libtorch.so")]


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(SEEDS_STREAM), piece=st.integers(1, 3000),
       flips=st.lists(st.tuples(st.integers(0, 6100), st.integers(0, 255)), min_size=1, max_size=8))
def test_mutated_stream_never_escapes_input_error(seed: bytes, piece: int, flips: list[tuple[int, int]]) -> None:
    data = bytearray(seed)
    for at, value in flips:
        if at < len(data):
            data[at] = value
    try:
        read_elf_stream(pieces(bytes(data), piece), len(data), "mutated.so")
    except InputError:
        pass


# -- broken inputs ---------------------------------------------------------------------
BROKEN = {
    "empty.so": "empty file",
    "not_elf.so": "bad magic",
    "bad_magic.so": "bad magic",
    "truncated_header.so": "past the end",
    "truncated_section_table.so": "section header table",
    "truncated_half.so": "section header table",
    "dynsym_past_end.so": "dynamic symbol table",
    "dynsym_huge_count.so": "dynamic symbols declared (limit",  # LimitExceeded
    "symbol_name_past_strtab.so": "past the dynamic string table",
    "huge_section_count.so": "section header table",
    "verneed_huge_count.so": "version needs declared",
    "stripped_huge_gnu_hash.so": "GNU hash buckets",
}


def test_every_broken_fixture_is_listed() -> None:
    assert {p.name for p in (ABI / "broken").iterdir()} == set(BROKEN)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_inputs_raise_input_error(name: str) -> None:
    with pytest.raises(InputError) as err:
        read_elf_path(ABI / "broken" / name)
    assert BROKEN[name] in err.value.message
    assert err.value.offset is not None
    assert str(ABI / "broken" / name) in str(err.value)
    assert isinstance(err.value, LimitExceeded) == ("limit" in BROKEN[name])


def test_member_named_in_errors() -> None:
    with pytest.raises(InputError) as err:
        read_elf(b"\x7fELF\x02\x01", "torch.whl", member="torch/lib/libc10.so")
    assert err.value.member == "torch/lib/libc10.so"
    assert "torch.whl!torch/lib/libc10.so" in str(err.value)


def test_missing_file() -> None:
    with pytest.raises(InputError, match="cannot read"):
        read_elf_path(ABI / "no-such.so")


SEEDS = [(ABI / p).read_bytes() for p in ("lib/v1/libc10_cuda.so", "lib/libx_v2/libx.so.1",
                                            "stripped/libtorch.so", "lib/libtorch.so")]


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(SEEDS), cut=st.integers(0, 7000),
       flips=st.lists(st.tuples(st.integers(0, 6100), st.integers(0, 255)), max_size=8))
def test_mutated_elf_never_escapes_input_error(seed: bytes, cut: int, flips: list[tuple[int, int]]) -> None:
    data = bytearray(seed[:cut] if cut < len(seed) else seed)
    for at, value in flips:
        if at < len(data):
            data[at] = value
    try:
        info = read_elf(bytes(data), "mutated.so")
    except InputError:
        return
    info.symbols.exports()
    info.symbols.undefined()
    ElfInfo.from_json(info.to_json())


# -- the real thing ----------------------------------------------------------------------
TORCH_WHEEL = Path("/opt/pypi-more/files/torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl")


@pytest.mark.slow
@needs_binutils
@pytest.mark.skipif(not TORCH_WHEEL.exists(), reason="torch 2.14.1 wheel not available")
def test_torch_libtorch_cpu_exports_match_nm(tmp_path: Path) -> None:
    from wheeldoc.binary.members import WheelArchive

    with WheelArchive(TORCH_WHEEL) as wheel, wheel.open("torch/lib/libtorch_cpu.so") as data:
        info = read_elf(data.buf, str(TORCH_WHEEL), member="torch/lib/libtorch_cpu.so")
        copy = tmp_path / "libtorch_cpu.so"
        copy.write_bytes(data.buf)  # the same bytes, for nm
    exported = info.symbols.exported_names()
    assert len(exported) == 74567
    assert exported == nm_defined(copy)
    assert info.soname == "libtorch_cpu.so" and "libc10.so" in info.needed
    assert "$ORIGIN" in info.rpath
    # The streaming reader (what read_elf_member uses for big deflated members) agrees.
    with WheelArchive(TORCH_WHEEL) as wheel:
        streamed = read_elf_member(wheel, "torch/lib/libtorch_cpu.so")
    assert streamed.tables_from == "segments" and same_facts(streamed, info)


TORCHVISION_WHEEL = Path("/opt/pypi-more/files/torchvision-0.29.1-cp311-cp311-manylinux_2_28_x86_64.whl")


def nm_undefined(path: Path) -> set[str]:
    out = subprocess.run(["nm", "-D", "--undefined-only", str(path)], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


@pytest.mark.slow
@needs_binutils
@pytest.mark.skipif(not TORCHVISION_WHEEL.exists(), reason="torchvision 0.29.1 wheel not available")
def test_torchvision_libraries_match_nm(tmp_path: Path) -> None:
    from wheeldoc.binary.members import WheelArchive

    with WheelArchive(TORCHVISION_WHEEL) as wheel:
        libs = wheel.shared_objects()
        assert len(libs) >= 5
        for member in libs:
            via_member = read_elf_member(wheel, member.name)  # streams the big ones
            with wheel.open(member.name) as data:
                whole = read_elf(data.buf, str(TORCHVISION_WHEEL), member=member.name)
                copy = tmp_path / "lib.so"
                copy.write_bytes(data.buf)
            assert same_facts(via_member, whole), member.name
            assert whole.symbols.exported_names() == nm_defined(copy), member.name
            assert {str(s) for s in whole.symbols.undefined()} == nm_undefined(copy), member.name


def test_warm_streamed_member_ends_its_inflation_on_the_cached_key(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stored bytes are hashed beside the inflation; once the key is known a cached entry ends it."""
    import time
    from contextlib import contextmanager

    from wheeldoc.binary.members import WheelArchive
    from wheeldoc.core.cache import Cache

    wheel_path = ABI / "wheels" / "fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"
    monkeypatch.setattr(elfmod, "STREAM_MIN", 0)
    cache = Cache(tmp_path)
    with WheelArchive(wheel_path) as wheel:
        cold = read_elf_member(wheel, "torch/lib/libc10_cuda.so", cache=cache)  # stored under the stored bytes' key
        for hint in (tmp_path / "elf-hint").rglob("*"):  # as if read by a version that kept no hint
            if hint.is_file():
                hint.unlink()
        plain = wheel.stream

        @contextmanager
        def slow(name, *, check=True):
            with plain(name, check=check) as pieces:
                def late():
                    time.sleep(0.3)  # the key is known before the first piece
                    yield from pieces
                yield late()

        monkeypatch.setattr(wheel, "stream", slow)
        monkeypatch.setattr(elfmod, "read_elf_stream", lambda pieces, *a, **k: [*pieces] and None)
        monkeypatch.setattr(cache, "put", lambda *a, **k: pytest.fail("a warm read stores nothing"))
        warm = read_elf_member(wheel, "torch/lib/libc10_cuda.so", cache=cache)
    assert warm == cold


def test_a_member_read_before_is_hashed_not_inflated(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wheeldoc.binary.members import WheelArchive
    from wheeldoc.core.cache import Cache

    wheel_path = ABI / "wheels" / "fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"
    monkeypatch.setattr(elfmod, "STREAM_MIN", 0)
    cache = Cache(tmp_path)
    with WheelArchive(wheel_path) as wheel:
        member = wheel.member("torch/lib/libc10_cuda.so")
        assert not elfmod.was_read(cache, member)
        cold = read_elf_member(wheel, member.name, cache=cache)
        assert elfmod.was_read(cache, member)
        monkeypatch.setattr(wheel, "stream", lambda *a, **k: pytest.fail("inflated again"))
        assert read_elf_member(wheel, member.name, cache=cache) == cold
