"""wheeldoc.binary.demangle: real demanglers (cxxfilt in-process, c++filt batch)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from wheeldoc.binary import demangle as dm
from wheeldoc.binary.elf import read_elf_path

ABI = Path(__file__).resolve().parents[2] / "fixtures" / "abi"
QUERY = "_ZNK3c104cuda10CUDAStream5queryEv"
needs_cxxfilt_tool = pytest.mark.skipif(shutil.which("c++filt") is None, reason="binutils c++filt missing")


def fixture_names() -> list[str]:
    names = set()
    for p in list((ABI / "lib").rglob("*.so*")) + list((ABI / "ext").glob("*.so")):
        names.update(s.name for s in read_elf_path(p).symbols)
    return sorted(names)


def test_story_symbol() -> None:
    assert dm.demangle(QUERY) == "c10::cuda::CUDAStream::query() const"
    assert dm.backend() == "cxxfilt"


def test_plain_and_invalid_names_are_unchanged() -> None:
    assert dm.demangle_many(["dlsym", "_Zgarbage", "", "cudaGetDeviceCount"]) == {
        "dlsym": "dlsym", "_Zgarbage": "_Zgarbage", "": "", "cudaGetDeviceCount": "cudaGetDeviceCount"}


@needs_cxxfilt_tool
def test_matches_cxxfilt_on_every_fixture_symbol() -> None:
    names = fixture_names()
    out = subprocess.run(["c++filt"], input="\n".join(names) + "\n", capture_output=True, text=True,
                         check=True).stdout.splitlines()
    assert dm.demangle_many(names) == dict(zip(names, out))
    assert dm.demangle_many(names)["_ZN5torch9make_nameERKSs"] == (
        "torch::make_name(std::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)")


@needs_cxxfilt_tool
def test_fallback_to_cxxfilt_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    names = fixture_names()
    expected = dm.demangle_many(names)
    monkeypatch.setattr(dm, "_inprocess", lambda: None)
    assert dm.backend() == "c++filt"
    assert dm.demangle_many(names) == expected


def test_long_names_never_reach_the_in_process_demangler(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    monkeypatch.setattr(dm, "_inprocess", lambda: lambda name: seen.append(name) or name)
    long = "_ZN" + "3abc" * 2000 + "Ev"
    out = dm.demangle_many([QUERY, long])
    assert seen == [QUERY]
    assert out[long] == long  # c++filt refuses it too (libiberty's component limit)


def test_names_that_cannot_travel_on_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dm, "_inprocess", lambda: None)
    assert dm.demangle_many(["_Z1fv\n_Z1gv", QUERY])["_Z1fv\n_Z1gv"] == "_Z1fv\n_Z1gv"


@pytest.mark.parametrize("demangled, name", [
    ("c10::cuda::CUDAStream::query() const", "c10::cuda::CUDAStream::query"),
    ("c10::cuda::CUDAStream::query(bool) const", "c10::cuda::CUDAStream::query"),
    ("c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)",
     "c10::cuda::c10_cuda_check_implementation"),
    ("at::Tensor at::native::foo<int>(at::Tensor const&)", "at::native::foo<int>"),
    ("std::vector<int, std::allocator<int> > make<int>(void (*)(int))", "make<int>"),
    ("foo::operator()(int) const &", "foo::operator()"),
    ("(anonymous namespace)::helper(int)", "(anonymous namespace)::helper"),
    ("typeinfo for c10::Error", "typeinfo for c10::Error"),
    ("c10::Error::~Error() noexcept", "c10::Error::~Error"),
    ("cudaGetDeviceCount", "cudaGetDeviceCount"),
])
def test_function_name(demangled: str, name: str) -> None:
    assert dm.function_name(demangled) == name


def test_relatives_share_a_function_name() -> None:
    v1 = read_elf_path(ABI / "lib/v1/libc10_cuda.so").symbols.exported_names()
    v2 = read_elf_path(ABI / "lib/v2/libc10_cuda.so").symbols.exported_names()
    names = dm.demangle_many(v1 | v2)
    by_name = {}
    for mangled in sorted(v2):
        by_name[dm.function_name(names[mangled])] = names[mangled]
    assert by_name[dm.function_name(names[QUERY])] == "c10::cuda::CUDAStream::query(bool) const"


def test_libstdcxx_by_soname_equals_the_cxxfilt_package() -> None:
    """The in-process demangler loads libstdc++.so.6 itself (no `ldconfig -p`); it gives what the
    cxxfilt package gives, name by name, and both refuse the same invalid names."""
    import cxxfilt

    direct = dm._cxa_demangle()
    assert direct is not None
    for name in fixture_names() + ["_Zgarbage", "_Z", "plain"]:
        try:
            want = cxxfilt.demangleb(name.encode())
        except Exception:  # noqa: BLE001
            want = None
        try:
            got = direct(name.encode())
        except ValueError:
            got = None
        assert got == want, name
