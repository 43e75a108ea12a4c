"""wheeldoc.environment.reader: installed distributions, the torch build, CUDA packages and
shared objects, read from real environments (uv-built venvs from the real wheels of this
machine, marked slow) and from small hand-made site-packages for the broken cases."""

from __future__ import annotations

import os
import re
import shutil
import stat
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests import envfactory as ef
from tests.wheelfactory import build_wheel
from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.environment.reader import (
    check_requirements,
    inspect_environment,
    locate_environment,
    location_for_directory,
    marker_environment,
    query_interpreter,
)
from wheeldoc.environment.dist import (
    parse_record,
    parse_version_py,
    read_distributions,
)
from wheeldoc.environment.fs import HOST

TV_WHEEL = ef.TORCHVISION_0_29_1


def _uv() -> str:
    uv = shutil.which("uv")
    if not uv:
        pytest.skip("uv not on PATH")
    return uv


def _real_libz() -> bytes:
    """A real small ELF shared object: torchvision's vendored zlib, read from the wheel."""
    if not TV_WHEEL.is_file():
        pytest.skip(f"{TV_WHEEL} not present")
    with zipfile.ZipFile(TV_WHEEL) as zf:
        return zf.read("torchvision.libs/libz.915b4635.so.1")


def _dist(site: Path, name: str, version: str, *, meta_extra: str = "", record: str | None = None,
          files: dict[str, bytes] | None = None) -> Path:
    di = site / f"{name.replace('-', '_')}-{version}.dist-info"
    di.mkdir(parents=True)
    (di / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{meta_extra}\n"
                                 "Long description that mentions Requires-Dist: not-a-header\n")
    for rel, data in (files or {}).items():
        p = site / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    if record is None:
        record = "".join(f"{rel},,{len(data)}\n" for rel, data in (files or {}).items())
    (di / "RECORD").write_text(record)
    return di


# -- dist-info, fast -----------------------------------------------------------------------

def test_dist_info_fields_and_broken_ones(tmp_path):
    site = tmp_path / "site-packages"
    di = _dist(site, "Foo.Bar", "1.0+local", meta_extra=(
        "Requires-Dist: numpy>=1.0\nRequires-Dist: torch==2.13.0; extra == 'gpu'\n"
        "Provides-Extra: gpu\nRequires-Python: >=3.9\nSummary: a very long\n  folded summary"),
        record='foo/__init__.py,sha256=abc,12\n"foo/we,ird.so",sha256=def,34\nfoo.dist-info/RECORD,,\n')
    (di / "INSTALLER").write_text("uv\n")
    (di / "direct_url.json").write_text('{"url": "file:///src/foo", "dir_info": {"editable": true}}')
    # no METADATA: not a distribution, reported as skipped
    (site / "ghost-1.0.dist-info").mkdir()
    # unreadable direct_url.json and no RECORD: still listed, with problems
    di2 = _dist(site, "baz", "2.0")
    (di2 / "RECORD").unlink()
    (di2 / "direct_url.json").write_text("{not json")

    dists, skipped = read_distributions(HOST, str(site))
    by = {d.name: d for d in dists}
    assert set(by) == {"foo-bar", "baz"}
    foo = by["foo-bar"]
    assert foo.display_name == "Foo.Bar" and foo.version == "1.0+local" and foo.local == "local"
    assert foo.requires == ("numpy>=1.0", "torch==2.13.0; extra == 'gpu'")  # body text is not a header
    assert foo.provides_extras == ("gpu",) and foo.requires_python == ">=3.9"
    assert foo.installer == "uv"
    assert foo.direct_url is not None and foo.direct_url.editable and foo.direct_url.url == "file:///src/foo"
    assert [(e.path, e.sha256, e.size) for e in foo.record] == [
        ("foo/__init__.py", "abc", 12), ("foo/we,ird.so", "def", 34), ("foo.dist-info/RECORD", None, None)]
    assert foo.shared_objects() == ("foo/we,ird.so",)
    assert by["baz"].problems == ("RECORD missing (files of this distribution are unknown)",
                                  "direct_url.json is not valid PEP 610 JSON")
    assert skipped == [(str(site / "ghost-1.0.dist-info"), "no METADATA file: not an installed distribution")]


def test_oversized_record_is_a_problem_not_a_crash(tmp_path, monkeypatch):
    from wheeldoc.environment import dist as environment_dist

    site = tmp_path / "sp"
    _dist(site, "big", "1", record="x,,1\n" * 1000)
    monkeypatch.setattr(environment_dist, "MAX_RECORD_BYTES", 100)
    (d,), _ = read_distributions(HOST, str(site))
    assert d.record == () and "limit" in d.problems[0]


def test_record_parser_handles_quotes_and_blank_lines():
    rows = parse_record('a.py,sha256=x,1\n\n"b ""q"".so",,\r\n../../bin/tool,sha256=y,2\n')
    assert [(r.path, r.sha256, r.size) for r in rows] == [
        ("a.py", "x", 1), ('b "q".so', None, None), ("../../bin/tool", "y", 2)]


def test_metadata_headers_beyond_the_first_read_are_found(tmp_path):
    site = tmp_path / "sp"
    long = "".join(f"Requires-Dist: dep{i}\n" for i in range(5000))  # > 64 KiB of headers
    _dist(site, "many", "1", meta_extra=long.rstrip("\n"))
    (d,), _ = read_distributions(HOST, str(site))
    assert len(d.requires) == 5000 and d.requires[-1] == "dep4999"


# -- torch/version.py, fast ------------------------------------------------------------------

def test_version_py_is_parsed_never_executed(tmp_path):
    marker = tmp_path / "executed"
    site = tmp_path / "sp"
    code = (f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n"
            "from typing import Optional\n__version__ = '2.13.0+cpu'\ndebug = False\n"
            "cuda: Optional[str] = None\ngit_version = 'abc'\nhip: Optional[str] = None\n")
    _dist(site, "torch", "2.13.0+cpu", files={
        "torch/version.py": code.encode(),
        "torch/share/cmake/Torch/TorchConfig.cmake": b'set(TORCH_CXX_FLAGS "-D_GLIBCXX_USE_CXX11_ABI=0")\n'})
    env = inspect_environment(location_for_directory(str(site)))
    assert not marker.exists()
    t = env.torch
    assert t is not None and t.version == "2.13.0+cpu" and t.cuda is None and t.kind == "cpu"
    assert t.local == "cpu" and t.git_version == "abc" and t.debug is False
    assert t.cxx11_abi is False and t.cxx11_abi_source.endswith("TorchConfig.cmake")


def test_broken_version_py_is_read_line_by_line(tmp_path):
    """torch/version.py is read one line at a time (never compiled whole: a hostile file nested
    100,000 levels deep must cost one pass, tests/hostile/test_tracebacks.py): what a line does
    not hold as `NAME = <constant>` is not read, the rest is; only bytes that are not UTF-8 make
    the file unreadable, with its offset."""
    site = tmp_path / "sp"
    _dist(site, "torch", "2.0", files={"torch/version.py": b"__version__ = '2.0'\ncuda = (\n"})
    env = inspect_environment(location_for_directory(str(site)))
    assert env.torch is not None and env.torch.version == "2.0" and env.torch.cuda is None
    assert parse_version_py(b"x = 1\ny = (\n", "v.py") == {"x": 1}
    with pytest.raises(InputError) as e:
        parse_version_py(b"x = 1\ny = '\xff'\n", "v.py")
    assert e.value.offset == 11 and "not UTF-8" in e.value.message


# -- requirements through markers and extras, on a real uv-installed venv, fast --------------

def test_requirements_checked_with_markers_and_extras(tmp_path):
    uv = _uv()
    dist = tmp_path / "dist"
    wheels = [
        build_wheel(dist, "torch", "2.99.0", platform="manylinux_2_28_x86_64", requires=[
            "kit[a,b]==1.0; platform_system == 'Linux'", "nvidia-x==3.0", "winonly; sys_platform == 'win32'",
            "opt>=1; extra == 'o'"],
            files={"torch/version.py": b"__version__ = '2.99.0+cu130'\ncuda = '13.0'\n"}),
        build_wheel(dist, "kit", "1.0", extras=["a", "b", "all"], requires=[
            "nvidia-a==1.*; extra == 'all'", "nvidia-a==1.*; extra == 'a'", "nvidia-b>=2; extra == 'b'",
            "nvidia-a==1.*; extra == 'b'",
            "nvidia-c; extra == 'c'", "base-dep"]),
        build_wheel(dist, "nvidia-a", "1.5", files={"nvidia/cu13/lib/liba.so.1": b"not an elf"}),
        build_wheel(dist, "nvidia-b", "1.0"),
        build_wheel(dist, "nvidia-x", "3.0+local"),
    ]
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
    subprocess.run([uv, "pip", "install", "-q", "--offline", "--no-deps", "-p", str(venv / "bin/python"),
                    *map(str, wheels)], check=True)
    (meta,) = venv.glob("lib/python3*/site-packages/torch-2.99.0.dist-info/METADATA")
    text = meta.read_text()  # uv refuses to install this, so it is written in afterwards
    meta.write_text(text.replace("Requires-Dist:", "Requires-Dist: bad requirement (((\nRequires-Dist:", 1))
    env = inspect_environment(locate_environment(python=str(venv / "bin/python")))
    rows = {(c.required_by, c.name): c for c in env.requirement_checks}
    assert rows[("torch", "kit")].satisfied is True
    chain = "torch > kit[a,b]"
    assert rows[(chain, "nvidia-a")].installed == "1.5" and rows[(chain, "nvidia-a")].satisfied is True
    assert rows[(chain, "nvidia-b")].installed == "1.0" and rows[(chain, "nvidia-b")].satisfied is False
    assert (chain, "nvidia-c") not in rows and (chain, "base-dep") not in rows  # not asked for by torch
    assert sum(1 for c in env.requirement_checks if c.name == "nvidia-a") == 1  # same pin under a and b
    assert rows[("torch", "nvidia-x")].satisfied is True  # ==3.0 admits 3.0+local (PEP 440)
    assert rows[("torch", "winonly")].applies is False and rows[("torch", "winonly")].satisfied is None
    assert rows[("torch", "opt")].applies is False
    assert rows[("torch", "")].problem.startswith("unparsable requirement")
    assert {c.name for c in env.unmet_requirements} == {"nvidia-b"}
    # the same torch, judged for a Windows machine: the Linux-only pin no longer applies
    win = {**env.location.markers, "sys_platform": "win32", "platform_system": "Windows"}
    installed = {d.name: d for d in env.distributions}
    checks = {c.name: c for c in check_requirements(installed["torch"], installed, win)}
    assert checks["kit"].applies is False and checks["winonly"].applies is True
    # CUDA packages and what they ship; the not-ELF .so is skipped, not fatal
    assert [(p.name, p.cuda_major) for p in env.cuda_packages] == [
        ("nvidia-a", None), ("nvidia-b", None), ("nvidia-x", None)]
    (pa,) = [p for p in env.cuda_packages if p.name == "nvidia-a"]
    assert pa.libraries == (str(env.location.site_packages[0]) + "/nvidia/cu13/lib/liba.so.1",)
    assert [s.reason for s in env.skipped] == ["not an ELF file (bad magic)"]
    assert env.distribution("torch").installer == "uv"
    assert env.distribution("torch").direct_url.url.startswith("file://")


# -- the interpreter query ------------------------------------------------------------------------

def test_python_query_never_runs_site_or_pth_files(tmp_path):
    uv = _uv()
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(venv)], check=True)
    (site,) = venv.glob("lib/python3*/site-packages")
    touched = tmp_path / "touched"
    (site / "evil.pth").write_text(f"import pathlib; pathlib.Path({str(touched)!r}).write_text('pth')\n")
    (site / "sitecustomize.py").write_text(f"import pathlib; pathlib.Path({str(touched)!r}).write_text('sc')\n")
    loc = locate_environment(python=str(venv / "bin" / "python"))
    assert not touched.exists()
    assert loc.site_packages == (str(site),) and loc.kind == "venv" and loc.prefix == str(venv)
    assert loc.markers["python_version"] == f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert loc.markers_source == "interpreter" and loc.origin == "python"
    # the control: a normal start of that interpreter does run the .pth file
    subprocess.run([str(venv / "bin" / "python"), "-c", "pass"], check=True)
    assert touched.exists()


def test_python_query_with_system_site_packages(tmp_path):
    uv = _uv()
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", "--system-site-packages", "-p", sys.executable, str(venv)], check=True)
    loc = locate_environment(python=str(venv / "bin" / "python"))
    (site,) = venv.glob("lib/python3*/site-packages")
    base = subprocess.run([sys.executable, "-I", "-c", "import sysconfig; print(sysconfig.get_paths(vars="
                           "{'base': __import__('sys').base_prefix, 'platbase': __import__('sys').base_prefix})"
                           "['purelib'])"], capture_output=True, text=True, check=True).stdout.strip()
    assert loc.site_packages[0] == str(site) and base in loc.site_packages


def _script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_python_query_failures_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such interpreter"):
        query_interpreter(str(tmp_path / "nope"))
    with pytest.raises(InputError, match="printed no JSON"):
        query_interpreter(_script(tmp_path / "a", "echo hello\n"))
    with pytest.raises(InputError, match="query failed: boom"):
        query_interpreter(_script(tmp_path / "b", "echo boom >&2; exit 3\n"))
    t0 = time.monotonic()
    with pytest.raises(InputError, match="did not answer within 1 s"):
        query_interpreter(_script(tmp_path / "c", "exec sleep 30\n"), timeout=1)
    assert time.monotonic() - t0 < 10
    with pytest.raises(LimitExceeded, match="more than"):
        query_interpreter(_script(tmp_path / "d", "head -c 200000 /dev/zero\n"))


def test_running_interpreter_and_directory_locations(tmp_path):
    loc = locate_environment()
    assert loc.origin == "running" and loc.executable == sys.executable
    import packaging

    assert any(Path(p) == Path(packaging.__file__).parents[1] for p in loc.site_packages)
    sp = tmp_path / "venv" / "lib" / "python3.12" / "site-packages"
    sp.mkdir(parents=True)
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\nversion_info = 3.12.4\n")
    d = location_for_directory(str(sp))
    assert d.kind == "venv" and d.prefix == str(tmp_path / "venv")
    assert d.markers["python_full_version"] == "3.12.4" and d.markers["python_version"] == "3.12"
    assert "pyvenv.cfg" in d.markers_source
    with pytest.raises(InputError, match="no such site-packages"):
        location_for_directory(str(tmp_path / "missing"))
    arm = marker_environment("3.10", machine="arm64")
    assert arm["platform_machine"] == "aarch64" and arm["python_full_version"] == "3.10.0"


# -- shared objects, fast, on a real ELF -------------------------------------------------------

def test_libraries_real_elf_truncated_elf_and_missing_file(tmp_path):
    libz = _real_libz()
    site = tmp_path / "sp"
    _dist(site, "pkg", "1", files={
        "pkg.libs/libz.915b4635.so.1": libz,
        "pkg/_ext.cpython-311-x86_64-linux-gnu.so": libz[:4096],  # truncated: section table gone
        "pkg/mod.pyd": b"MZ\x90\x00",
    }, record="pkg.libs/libz.915b4635.so.1,,\npkg/_ext.cpython-311-x86_64-linux-gnu.so,,\n"
              "pkg/mod.pyd,,\npkg/gone.so,,\n")
    (site / "pkg.libs" / "libextra.so.2").write_bytes(libz)  # vendored but not in RECORD
    env = inspect_environment(location_for_directory(str(site)))
    by = {lib.name: lib for lib in env.libraries}
    assert set(by) == {"libz.915b4635.so.1", "mod.pyd", "libextra.so.2"}
    z = by["libz.915b4635.so.1"]
    assert z.kind == "library" and z.vendored and z.distribution == "pkg" and z.format == "elf"
    assert z.needed == ("libc.so.6",) and z.soname == "libz.so.1"  # as readelf says and not z.links_torch
    assert by["libextra.so.2"].distribution == "pkg" and by["libextra.so.2"].vendored
    assert by["mod.pyd"].kind == "extension" and by["mod.pyd"].format == "pe"
    reasons = {Path(s.path).name: s.reason for s in env.skipped}
    assert reasons["gone.so"] == "listed in RECORD but missing"
    assert "past the end of the file" in reasons["_ext.cpython-311-x86_64-linux-gnu.so"]


# -- real environments from the real wheels, slow ------------------------------------------------

CUDA_WHEELS = [ef.TORCH_CUDA, ef.TORCHVISION_0_29_1, ef.CUDA_TOOLKIT, ef.NVIDIA_NVTX, ef.NVIDIA_CUPTI]
CPU_WHEELS = [ef.TORCH_CPU, ef.TORCHVISION_0_28_0]


@pytest.fixture(scope="session")
def cuda_env(request) -> Path:
    if ef.missing(CUDA_WHEELS) or not shutil.which("uv"):
        pytest.skip(f"real wheels missing: {ef.missing(CUDA_WHEELS)}")
    return ef.real_env(Path(request.config.cache.mkdir("wheeldoc-real-envs")), "cuda", CUDA_WHEELS)


@pytest.fixture(scope="session")
def cpu_env(request) -> Path:
    if ef.missing(CPU_WHEELS) or not shutil.which("uv"):
        pytest.skip(f"real wheels missing: {ef.missing(CPU_WHEELS)}")
    return ef.real_env(Path(request.config.cache.mkdir("wheeldoc-real-envs")), "cpu", CPU_WHEELS)


def _readelf(path: str) -> tuple[list[str], set[str]]:
    """NEEDED entries and section names, as binutils' readelf prints them."""
    dyn = subprocess.run(["readelf", "-dW", path], capture_output=True, text=True, check=True).stdout
    sec = subprocess.run(["readelf", "-SW", path], capture_output=True, text=True, check=True).stdout
    return (re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dyn),
            set(re.findall(r"^\s*\[\s*\d+\]\s+(\S+)", sec, re.MULTILINE)))


@pytest.mark.slow
def test_real_cuda_torch_environment(cuda_env):
    py = cuda_env / "bin" / "python"
    t0 = time.perf_counter()
    loc = locate_environment(python=str(py))
    t1 = time.perf_counter()
    listing = inspect_environment(loc, libraries=False)
    t2 = time.perf_counter()
    env = inspect_environment(loc)
    t3 = time.perf_counter()
    print(f"\nreal CUDA env: locate {1e3 * (t1 - t0):.0f} ms, list {len(listing.distributions)} dists "
          f"{1e3 * (t2 - t1):.1f} ms, with {len(env.libraries)} libraries {1e3 * (t3 - t2):.0f} ms")
    assert t2 - t1 < 0.5 and t3 - t2 < 5

    t = env.torch
    assert t.version == "2.14.1+cu130" and t.dist_version == "2.14.1" and t.cuda == "13.0"
    assert t.kind == "cuda" and t.cuda_tuple == (13, 0) and t.hip is None
    assert t.git_version == "5c4886908584029761b579af026dcfb627c84070"
    assert t.cxx11_abi is None  # torch 2.14 no longer writes the flag into its CMake config
    assert any(r.startswith("nvidia-cudnn-cu13==9.24.0.43") for r in t.cuda_requirements)

    pk = {p.name: p for p in env.cuda_packages}
    assert set(pk) == {"cuda-toolkit", "nvidia-nvtx", "nvidia-cuda-cupti"}
    assert pk["nvidia-cuda-cupti"].cuda_major == 13
    assert any(p.endswith("nvidia/cu13/lib/libcupti.so.13") for p in pk["nvidia-cuda-cupti"].libraries)
    checks = {(c.required_by.split(" > ")[-1], c.name): c for c in env.requirement_checks}
    assert checks[("torch", "cuda-toolkit")].satisfied is True
    kit = "cuda-toolkit[cublas,cudart,cufft,cufile,cupti,curand,cusolver,cusparse,nvjitlink,nvrtc,nvtx]"
    assert checks[(kit, "nvidia-nvtx")].installed == "13.0.85" and checks[(kit, "nvidia-nvtx")].satisfied
    assert checks[(kit, "nvidia-cublas")].installed is None and checks[(kit, "nvidia-cublas")].satisfied is False
    assert checks[("torch", "nvidia-cudnn-cu13")].satisfied is False

    libs = {os.path.relpath(lib.path, loc.site_packages[0]): lib for lib in env.libraries}
    ext = libs["torchvision/_C_stable.so"]
    assert ext.kind == "extension" and ext.distribution == "torchvision"
    assert {"libc10.so", "libtorch.so", "libc10_cuda.so", "libtorch_cuda.so"} <= set(ext.torch_needed)
    assert {lib.name for lib in env.torch_linked} == {"_C_stable.so", "image_stable.so"}
    assert ".nv_fatbin" in libs["torch/lib/libtorch_cuda.so"].gpu_sections
    assert libs["torch/lib/libtorch_cuda.so"].distribution == "torch"
    assert libs["torchvision.libs/libnvjpeg.36e11081.so.13"].vendored
    # every library, checked against binutils' readelf
    for rel, lib in libs.items():
        needed, sections = _readelf(lib.path)
        assert list(lib.needed) == needed, rel
        assert set(lib.gpu_sections) == sections & {".nv_fatbin", "__nv_relfatbin"}, rel
    assert env.skipped == ()


@pytest.mark.slow
def test_real_cpu_torch_beside_cuda_torchvision(cpu_env):
    site = ef.site_packages(cpu_env)
    env = inspect_environment(locate_environment(site_packages=str(site)))
    t = env.torch
    assert t.version == "2.13.0+cpu" and t.cuda is None and t.kind == "cpu" and t.local == "cpu"
    assert t.cuda_requirements == () and env.cuda_packages == ()
    tv = next(lib for lib in env.libraries if lib.path.endswith("torchvision/_C.so"))
    assert "libc10_cuda.so" in tv.needed and "libtorch_cuda.so" in tv.needed
    provided = {lib.name for lib in env.libraries} | {lib.soname for lib in env.libraries if lib.soname}
    assert "libc10_cuda.so" not in provided and "libc10.so" in provided
    assert not any(lib.has_gpu_code for lib in env.libraries if lib.distribution == "torch")
    # torchvision 0.28.0 pins torch==2.13.0, which the +cpu build satisfies (why resolvers allow it)
    installed = {d.name: d for d in env.distributions}
    (tc,) = [c for c in check_requirements(installed["torchvision"], installed, env.location.markers)
             if c.name == "torch"]
    assert tc.requirement == "torch (==2.13.0)" and tc.satisfied is True


def test_mutated_elf_raises_only_input_errors():
    import random

    from wheeldoc.environment.libs import read_dynamic

    libz = _real_libz()
    rng = random.Random(3)
    seen = {"read": 0, "refused": 0}
    hot = [0x18, 0x20, 0x28, 0x3A, 0x3C, 0x3E, len(libz) - 64 * 12]  # header fields, section table
    for _ in range(500):
        data = bytearray(libz)
        for _ in range(rng.randint(1, 4)):
            pos = min(len(data) - 1, rng.choice(hot) + rng.randrange(64)) if rng.random() < 0.7 \
                else rng.randrange(len(data))
            data[pos] = rng.randrange(256)
        try:
            read_dynamic(bytes(data), "libz")
            seen["read"] += 1
        except InputError:
            seen["refused"] += 1
    assert seen["read"] and seen["refused"]
