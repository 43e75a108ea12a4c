"""`wheeldoc abi` end to end on the committed fixtures (fixtures/abi/, built with g++ by build.sh):
verdicts, findings and their data, JSON against the schema, every kind of EXT and TORCH input,
ranges, target platforms, broken inputs, and the cache."""

from __future__ import annotations

import json
import shutil
import zipfile
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from tests.conftest import ROOT, run_subprocess

A = "fixtures/abi"
W = f"{A}/wheels"
EXT = f"{W}/ext-1.0-cp311-cp311-linux_x86_64.whl"
T11 = f"{W}/fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"
T12 = f"{W}/fake_torch-2.12.0+cu130-cp311-cp311-linux_x86_64.whl"
TCPU = f"{W}/fake_torch-2.11.0+cpu-cp311-cp311-linux_x86_64.whl"
CUDART = f"{W}/fake_nvidia_cuda_runtime-13.0.0-py3-none-linux_x86_64.whl"
LOCAL = ("--no-index", "--find-links", W)
VALIDATOR = jsonschema.Draft202012Validator(json.loads(
    resources.files("wheeldoc.render").joinpath("report.schema.json").read_text()))


def run_json(cli, *argv: str, code: int | None = None) -> dict:
    res = cli("abi", *argv, "--format", "json")
    doc = res.json()
    VALIDATOR.validate(doc)
    if code is not None:
        assert res.code == code, (res.code, res.err, [f["message"] for f in doc["findings"]])
    assert "Traceback" not in res.err
    return doc


def by_rule(doc: dict, rule: str) -> list[dict]:
    return [f for f in doc["findings"] if f["rule"] == rule]


# -- the three fake torch builds -----------------------------------------------------------------

def test_built_against_torch_loads(cli):
    doc = run_json(cli, EXT, T11, *LOCAL, code=0)
    assert doc["verdict"] == "compatible" and doc["findings"] == []
    (ext,) = doc["extensions"]
    assert ext["library"] == "ext/_C.so" and ext["verdict"] == "compatible"
    closure = {c["library"]: c for c in ext["closure"]}
    assert closure["torch/lib/libc10_cuda.so"]["origin"] == "torch"
    assert closure["nvidia/cu13/lib/libcudart.so.13"]["origin"] == "cuda"  # via libc10_cuda's RPATH
    assert doc["cuda_libraries"]["mode"] == "wheels"
    assert doc["torch"] == {"name": "fake-torch", "version": "2.11.0+cu130", "build": "CUDA 13.0",
                            "source": T11, "origin": "files"}


def test_missing_symbol_names_the_relative(cli):
    doc = run_json(cli, EXT, T12, *LOCAL, code=1)
    assert doc["verdict"] == "incompatible" and doc["summary"]["exit_code"] == 1
    found = {f["data"]["symbol"]: f for f in by_rule(doc, "WD202")}
    assert set(found) == {"_ZNK3c104cuda10CUDAStream5queryEv",
                          "_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib"}
    q = found["_ZNK3c104cuda10CUDAStream5queryEv"]
    assert q["data"]["library"] == "ext/_C.so" and q["member"] == "ext/_C.so"
    assert q["data"]["demangled"] == "c10::cuda::CUDAStream::query() const"
    assert q["data"]["namespace"] == "c10::cuda::CUDAStream"
    assert q["data"]["relative"] == {"symbol": "_ZNK3c104cuda10CUDAStream5queryEb",
                                     "demangled": "c10::cuda::CUDAStream::query(bool) const",
                                     "library": "torch/lib/libc10_cuda.so", "change": "added a parameter to"}
    check = found["_ZN3c104cuda29c10_cuda_check_implementationEiPKcS2_ib"]
    assert "added a parameter to c10::cuda::c10_cuda_check_implementation" in check["message"]
    assert check["data"]["relative"]["demangled"].endswith("(int, char const*, char const*, unsigned int, bool, bool)")
    assert not by_rule(doc, "WD205")  # the pin (==2.11.0) says no, and so does the binary


def test_cpu_torch_lacks_libc10_cuda_and_the_pin_is_wrong(cli):
    doc = run_json(cli, EXT, TCPU, *LOCAL, code=1)
    needed = {f["data"]["needed"]: f for f in by_rule(doc, "WD201")}
    assert "libc10_cuda.so" in needed
    assert "ships no libc10_cuda.so" in needed["libc10_cuda.so"]["message"]
    assert "CPU-only" in needed["libc10_cuda.so"]["message"]
    assert not by_rule(doc, "WD202"), "ld.so stops at the missing library; no symbol is looked at"
    (pin,) = by_rule(doc, "WD205")
    assert pin["severity"] == "info" and pin["data"]["pin"] == "fake-torch==2.11.0"
    assert pin["data"]["pin_satisfied"] is True and "the binary decides" in pin["message"]


def test_text_output_groups_symbols(cli):
    res = cli("abi", EXT, T12, *LOCAL, "--color", "never")
    assert res.code == 1
    assert "ABI verdict: incompatible" in res.out
    block = res.out.split("Undefined symbols, by library and namespace:")[1]
    assert "ext/_C.so" in block and "c10::cuda (2)" in block
    assert "-> torch has c10::cuda::CUDAStream::query(bool) const" in block


# -- EXT and TORCH in their other forms ------------------------------------------------------------

def test_torch_as_requirement_resolved_by_uv(cli):
    doc = run_json(cli, EXT, "fake-torch==2.12.0", *LOCAL, code=1)
    assert doc["torch"]["version"] == "2.12.0+cu130"
    assert doc["torch"]["source"].endswith("fake_torch-2.12.0+cu130-cp311-cp311-linux_x86_64.whl")
    assert by_rule(doc, "WD202")


def test_unresolvable_requirement_is_an_input_error(cli):
    res = cli("abi", EXT, "fake-torch==9.9.9", *LOCAL, "--format", "json")
    assert res.code == 2 and res.json()["findings"][0]["rule"] == "WD001"
    assert "uv could not resolve it" in res.json()["findings"][0]["message"]


def test_range_lists_the_releases_it_loads_on(cli):
    doc = run_json(cli, EXT, "fake-torch>=2.10,<2.13", *LOCAL, code=0)
    rows = {r["torch"]: r for r in doc["matrix"]}
    assert set(rows) == {"2.12.0+cu130", "2.11.0+cu130"}
    assert rows["2.11.0+cu130"]["verdict"] == "compatible" and rows["2.11.0+cu130"]["pin_satisfied"] is True
    assert rows["2.12.0+cu130"]["verdict"] == "incompatible"
    assert "undefined symbol" in rows["2.12.0+cu130"]["first_failure"]
    assert doc["verdict"] == "compatible"
    assert all(f["severity"] == "info" and f["data"]["torch"] == "2.12.0+cu130" for f in doc["findings"])


def test_range_where_nothing_loads_fails(cli):
    doc = run_json(cli, f"{A}/ext/ext_cudart12.so", "fake-torch>=2.10,<2.13", *LOCAL,
                   "--python-version", "3.11", code=1)  # a bare .so names no Python: 3.12 by default
    assert doc["verdict"] == "incompatible" and all(r["verdict"] == "incompatible" for r in doc["matrix"])


def _unzip(wheel: str, dest: Path) -> None:
    with zipfile.ZipFile(ROOT / wheel) as zf:
        for info in zf.infolist():
            target = dest / info.filename  # our own fixtures: names checked by the source tests
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(info))


@pytest.fixture
def site(tmp_path) -> Path:
    """A site-packages with fake torch 2.11.0+cu130, its CUDA runtime and ext 1.0 installed."""
    sp = tmp_path / "lib" / "python3.11" / "site-packages"
    for wheel in (T11, CUDART, EXT):
        _unzip(wheel, sp)
    return sp


def test_installed_environment_and_distribution_name(cli, site):
    doc = run_json(cli, "ext", "--site-packages", str(site), code=0)
    assert doc["verdict"] == "compatible"
    assert doc["cuda_libraries"]["mode"] == "environment"
    assert doc["torch"]["version"] == "2.11.0+cu130"
    # the same folder given as TORCH, and the extension's dist-info as EXT
    doc = run_json(cli, str(site / "ext-1.0.dist-info"), str(site), code=0)
    assert doc["verdict"] == "compatible"


def test_environment_missing_cuda_runtime_means_torch_does_not_import(cli, site):
    shutil.rmtree(site / "nvidia")
    shutil.rmtree(site / "fake_nvidia_cuda_runtime-13.0.0.dist-info")
    doc = run_json(cli, "ext", "--site-packages", str(site), code=1)
    torch_fail = [f for f in by_rule(doc, "WD201") if f["data"].get("in_torch_import")]
    assert torch_fail and torch_fail[0]["data"]["needed"] == "libcudart.so.13"
    assert "`import torch` itself fails" in torch_fail[0]["message"]


def test_unknown_distribution_name(cli, site):
    res = cli("abi", "nosuchdist", "--site-packages", str(site), "--format", "json")
    assert res.code == 2 and "no distribution of that name" in res.json()["findings"][0]["message"]


def test_directory_ext_with_versioned_library(cli, tmp_path):
    for v, ok in (("v1", False), ("v2", True)):
        d = tmp_path / v
        d.mkdir()
        shutil.copy(ROOT / A / "ext" / "uses_libx.so", d / "uses_libx.so")
        shutil.copy(ROOT / A / "lib" / f"libx_{v}" / "libx.so.1", d / "libx.so.1")
        doc = run_json(cli, str(d), T11, *LOCAL, code=0 if ok else 1)
        roots = {e["library"] for e in doc["extensions"]}
        assert roots == {"uses_libx.so"}  # libx.so.1 loads as its dependency, not on its own
        if ok:
            assert doc["verdict"] == "compatible"
        else:
            msgs = [f["message"] for f in by_rule(doc, "WD202")]
            assert any("needs version LIBX_2.0 of libx.so.1" in m for m in msgs), msgs


def test_torch_directory_without_dist_info(cli, tmp_path):
    _unzip(T11, tmp_path)
    _unzip(CUDART, tmp_path)
    shutil.rmtree(tmp_path / "fake_torch-2.11.0+cu130.dist-info")
    doc = run_json(cli, EXT, str(tmp_path), code=0)
    assert doc["verdict"] == "compatible" and doc["cuda_libraries"]["mode"] == "environment"


# -- CUDA libraries from metadata, the CUDA runtime major, weak symbols ---------------------------

def test_without_index_options_unknown_cuda_packages_are_named(cli):
    doc = run_json(cli, EXT, T11, code=1)
    assert doc["cuda_libraries"] == {"mode": "metadata", "packages": [], "unknown": ["fake-nvidia-cuda-runtime==13.0.0"]}
    fails = by_rule(doc, "WD201")
    assert any("pass --find-links or --index-url" in f["message"] for f in fails)


def test_cuda_runtime_major(cli):
    doc = run_json(cli, f"{A}/ext/ext_cudart12.so", T11, *LOCAL, code=1)
    (f,) = by_rule(doc, "WD204")
    assert f["severity"] == "error" and f["data"]["needed"] == "libcudart.so.12"
    assert f["data"]["torch_cuda_majors"] == [13]
    assert run_json(cli, f"{A}/ext/ext_cudart13.so", T11, *LOCAL, code=0)["verdict"] == "compatible"


def test_weak_undefined_symbol_is_not_needed(cli):
    doc = run_json(cli, f"{A}/ext/ext_weak.so", T11, *LOCAL, code=0)
    assert doc["verdict"] == "compatible"
    assert doc["extensions"][0]["matched_by_version_name"] == []  # cudart was read, not assumed


# -- the C++ ABI flavour and the target system ---------------------------------------------------

def test_old_string_abi_against_cxx11_torch(cli):
    doc = run_json(cli, f"{A}/ext/ext_oldabi.so", T11, *LOCAL, code=1)
    (f,) = by_rule(doc, "WD203")
    assert f["data"]["flavour"] == "pre-cxx11" and f["data"]["torch_flavour"] == "cxx11"
    assert "torch::make_name(std::basic_string<char" in f["evidence"][0]
    symbols = [g["data"]["symbol"] for g in by_rule(doc, "WD202")]
    assert symbols == ["_ZN5torch9make_nameERKSs"]
    assert run_json(cli, f"{A}/ext/ext_cxx11.so", T11, *LOCAL, code=0)["verdict"] == "compatible"


def test_glibc_beyond_target(cli):
    doc = run_json(cli, f"{A}/ext/ext_oldabi.so", T11, "--glibc", "2.28", *LOCAL, code=1)
    (f,) = by_rule(doc, "WD206")
    assert f["data"]["needed"] == ["GLIBC_2.32"] and f["data"]["file"] == "libc.so.6"
    assert doc["system_target"]["glibc"] == "GLIBC_2.28" and doc["system_target"]["source"] == "flags"
    assert not by_rule(run_json(cli, f"{A}/ext/ext_oldabi.so", T11, "--glibc", "2.32", *LOCAL), "WD206")


def test_libstdcxx_target_caps_cxxabi_too(cli):
    doc = run_json(cli, f"{A}/ext/ext_cxx11.so", T11, "--libstdcxx", "3.4.19", *LOCAL, code=1)
    needed = {n for f in by_rule(doc, "WD206") for n in f["data"]["needed"]}
    assert needed == {"GLIBCXX_3.4.21", "CXXABI_1.3.9"}  # GCC 4.8's libstdc++ has neither
    assert doc["system_target"]["cxxabi"] == "CXXABI_1.3.7"


def test_no_target_no_system_judgement(cli):
    doc = run_json(cli, f"{A}/ext/ext_oldabi.so", T11, *LOCAL)
    assert doc["system_target"]["label"] == "unknown" and not by_rule(doc, "WD206")


def test_bad_target_flag_is_a_usage_error(cli):
    res = cli("abi", EXT, T11, "--glibc", "two", *LOCAL)
    assert res.code == 2 and "--glibc expects a version" in res.err


# -- broken inputs -------------------------------------------------------------------------------

@pytest.mark.parametrize("ext", ["broken/truncated_header.so", "broken/not_elf.so", "broken/empty.so",
                                 "broken/dynsym_past_end.so"])
def test_broken_extension_is_an_input_error(cli, ext):
    res = cli("abi", f"{A}/{ext}", T11, *LOCAL, "--format", "json")
    doc = res.json()
    VALIDATOR.validate(doc)
    assert res.code == 2 and any(f["rule"] == "WD001" for f in doc["findings"])
    assert "Traceback" not in res.err


@pytest.mark.parametrize("torch", ["hostile/truncated.whl", "hostile/not_a_zip.whl", "no/such.whl"])
def test_broken_torch_is_an_input_error(cli, torch):
    res = cli("abi", EXT, f"{A}/{torch}", *LOCAL, "--format", "json")
    assert res.code == 2 and res.json()["findings"][0]["rule"] == "WD001"


def test_real_interpreter_no_traceback():
    res = run_subprocess("abi", f"{A}/broken/truncated_half.so", T11, *LOCAL)
    assert res.code == 2 and "Traceback" not in res.err


# -- the cache ----------------------------------------------------------------------------------

def test_second_run_reads_from_the_cache(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path / "cache"))
    first = run_json(cli, EXT, T12, *LOCAL, code=1)
    stored = list((tmp_path / "cache" / "elf").rglob("*.elf-1"))
    assert stored, "deflated members are stored by their RECORD sha256"
    second = run_json(cli, EXT, T12, *LOCAL, code=1)
    assert first["findings"] == second["findings"] and first["extensions"] == second["extensions"]
