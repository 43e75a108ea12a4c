"""What the real-world truth table taught the ABI model (docs/real-world-truth.md), each part
checked without the real wheels: abi3 tags, torch's own preloads, CUDA 12 names, objects chosen
at run time, the explicit target, and fetching without pip."""

from __future__ import annotations

import argparse
import glob
import hashlib
import sys
import threading
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from wheeldoc.abi.facts import Side, run_time_choices
from wheeldoc.abi.inputs import _tags
from wheeldoc.abi.preloads import locate, read_preloads

A = "fixtures/abi"
EXT = f"{A}/wheels/ext-1.0-cp311-cp311-linux_x86_64.whl"
T11 = f"{A}/wheels/fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"
LOCAL = ("--no-index", "--find-links", f"{A}/wheels")


# -- item 1: an abi3 tag is a floor, not the Python to resolve torch for -------------------------
def test_abi3_and_py3_tags_pin_no_python():
    assert _tags(("cp38-abi3-manylinux_2_28_x86_64",))[1] == ()
    assert _tags(("py3-none-manylinux_2_28_x86_64",))[1] == ()
    assert _tags(("cp311-cp311-manylinux_2_28_x86_64",))[1] == ("cp311",)


def _settings(**kw):
    from wheeldoc.core.settings import settings_from

    ns = argparse.Namespace(format=None, fail_on=None, select=None, ignore=None, output=None, color="auto",
                            config=None, platform=None, gpu=None, driver=None, python_version=None)
    for k, v in kw.items():
        setattr(ns, k, v)
    return settings_from(ns)


def test_python_for_torch_comes_from_the_flag_else_a_current_default():
    from wheeldoc.abi.command import uv_platform, uv_python

    abi3 = Side("vllm.whl", platform_tags=("manylinux_2_28_x86_64",), python_tags=())
    assert uv_python(abi3, _settings()) == "3.12"
    assert uv_python(abi3, _settings(python_version="3.11")) == "3.11"
    exact = Side("tv.whl", platform_tags=("manylinux_2_28_x86_64",), python_tags=("cp311",))
    assert uv_python(exact, _settings()) == "3.11"
    # the platform: the target's architecture first, the wheel's manylinux level for it
    assert uv_platform(abi3, _settings()) == "x86_64-manylinux_2_28"
    assert uv_platform(abi3, _settings(gpu="gb10")) == "aarch64-manylinux_2_28"


# -- item 2: what torch/__init__.py preloads, per release ----------------------------------------
OLD_STYLE = '''
def _preload_cuda_deps(lib_folder, lib_name, required=True):
    pass

def _load_global_deps():
    try:
        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)
        try:
            _preload_cuda_deps("cuda_nvrtc", "libnvrtc.so.*[0-9]")
            _preload_cuda_deps("nvjitlink", "libnvJitLink.so.*[0-9]")
        except Exception:
            pass
    except OSError as err:
        cuda_libs = {"cublas": "libcublas.so.*[0-9]", "cudnn": "libcudnn.so.*[0-9]"}
        for lib_folder, lib_name in cuda_libs.items():
            _preload_cuda_deps(lib_folder, lib_name)
'''
NEW_STYLE = '''
def _get_cuda_dep_paths(path, lib_folder, lib_name):
    maj_cuda_version = "13"

def _preload_cuda_deps(err=None, required=True):
    cuda_libs = [("cublas", "libcublas.so.*[0-9]"), ("cuda_nvrtc", "libnvrtc.so.*[0-9]")]

def _load_global_deps():
    try:
        ctypes.CDLL(global_deps_lib_path, mode=ctypes.RTLD_GLOBAL)
        try:
            _preload_cuda_deps(required=False)
        except Exception:
            pass
    except OSError as err:
        _preload_cuda_deps(err)
'''


def test_preloads_of_both_shapes():
    old = read_preloads(OLD_STYLE)
    assert [(p.folder, p.required) for p in old.after_global_deps] == [("cuda_nvrtc", True), ("nvjitlink", True)]
    assert [p.folder for p in old.on_global_deps_failure] == ["cublas", "cudnn"]
    assert not old.cu_major_folder
    new = read_preloads(NEW_STYLE)
    assert [(p.folder, p.required) for p in new.after_global_deps][:2] == [("cublas", False), ("cuda_nvrtc", False)]
    assert new.cu_major_folder
    assert not read_preloads("def broken(:\n").read


def test_preloads_are_found_like_torch_globs_them():
    paths = ["nvidia/cuda_nvrtc/lib/libnvrtc.so.12", "nvidia/cu13/lib/libnvrtc.so.13", "nvidia/cu13/lib/libcublas.so.13"]
    old = read_preloads(OLD_STYLE)
    found = locate(old.after_global_deps, paths, "12", old.cu_major_folder)
    # nvJitLink is not installed: required, so the preloads stop there (torch's `try`)
    assert [(p.folder, hit) for p, hit in found] == [("cuda_nvrtc", "nvidia/cuda_nvrtc/lib/libnvrtc.so.12"),
                                                    ("nvjitlink", None)]
    new = read_preloads(NEW_STYLE)
    found = dict((p.folder, hit) for p, hit in locate(new.after_global_deps, paths[1:], "13", True))
    assert found["cublas"] == "nvidia/cu13/lib/libcublas.so.13" and found["cuda_nvrtc"] == "nvidia/cu13/lib/libnvrtc.so.13"


@pytest.mark.slow
def test_preloads_of_real_torch_wheels_where_cached():
    wheels = sorted(glob.glob("/work/wheels/torch-2.*-cp311-*x86_64.whl") + glob.glob("/opt/*/files/torch-2.*.whl"))
    if not wheels:
        pytest.skip("no torch wheel cached here")
    for whl in wheels:
        with zipfile.ZipFile(whl) as zf:
            text = zf.read("torch/__init__.py").decode()
        spec = read_preloads(text)
        assert spec.read and spec.on_global_deps_failure, whl
        assert any("nvrtc" in p.pattern for p in spec.after_global_deps) or "2.0" in whl, whl


# -- item 3: CUDA 12 packages are in the soname table --------------------------------------------
def test_cuda12_packages_are_known():
    from wheeldoc.data.abi_tables import cuda_packages

    packages, _ = cuda_packages()
    assert packages["nvidia-cublas-cu12"].libraries["libcublas.so.12"] == "nvidia/cublas/lib/libcublas.so.12"
    assert packages["nvidia-cuda-nvrtc-cu12"].libraries["libnvrtc.so.12"].startswith("nvidia/cuda_nvrtc/lib/")
    assert packages["nvidia-cublas"].libraries["libcublas.so.13"].startswith("nvidia/cu13/lib/")


# -- item 4: objects chosen at run time ------------------------------------------------------------
def test_run_time_choices():
    roots = [f"bitsandbytes/libbitsandbytes_{f}.so" for f in ("cpu", "cuda126", "cuda128", "cuda130", "rocm64")]
    roots += ["vllm/third_party/deep_gemm/_C.cpython-311-x86_64-linux-gnu.so",
              "vllm/third_party/deep_gemm/_C.cpython-312-x86_64-linux-gnu.so",
              "sgl_kernel/sm90/common_ops.abi3.so", "sgl_kernel/sm100/common_ops.abi3.so", "vllm/_C.abi3.so"]
    c = run_time_choices(roots, "3.11", "12.8", (9, 0))
    assert c["bitsandbytes/libbitsandbytes_cuda128.so"].chosen is True
    assert c["bitsandbytes/libbitsandbytes_cuda130.so"].chosen is False
    assert c["vllm/third_party/deep_gemm/_C.cpython-312-x86_64-linux-gnu.so"].chosen is False
    assert "vllm/third_party/deep_gemm/_C.cpython-311-x86_64-linux-gnu.so" not in c
    assert c["sgl_kernel/sm90/common_ops.abi3.so"].chosen is True and c["sgl_kernel/sm100/common_ops.abi3.so"].chosen is False
    assert "vllm/_C.abi3.so" not in c
    cpu = run_time_choices(roots, "3.11", None, None)
    assert cpu["bitsandbytes/libbitsandbytes_cpu.so"].chosen is True
    assert cpu["sgl_kernel/sm90/common_ops.abi3.so"].chosen is None  # no GPU target: one loading is enough


# -- item 5: the explicit target ------------------------------------------------------------------
def test_abi_honours_the_explicit_target(cli):
    res = cli("abi", EXT, T11, *LOCAL, "--gpu", "gb10", "--format", "json")
    doc = res.json()
    assert res.code == 1 and doc["verdict"] == "incompatible"
    wd207 = [f for f in doc["findings"] if f["rule"] == "WD207"]
    assert any(f["data"]["kind"] == "platform" for f in wd207)
    res = cli("abi", EXT, T11, *LOCAL, "--driver", "535.104.05", "--format", "json")
    assert any(f["rule"] == "WD207" and f["data"]["kind"] == "driver" for f in res.json()["findings"])
    res = cli("abi", EXT, T11, *LOCAL, "--gpu", "h200", "--driver", "580.95.05", "--format", "json")
    assert not [f for f in res.json()["findings"] if f["rule"] == "WD207"]


# -- item 7: a remote wheel is fetched without pip ----------------------------------------------------
def test_fetch_needs_no_pip(tmp_path, monkeypatch):
    from wheeldoc.abi.fetch import LockedWheel, fetch

    (tmp_path / "www").mkdir()
    payload = b"PK\x05\x06" + b"\0" * 18  # an empty zip: bytes are bytes here
    (tmp_path / "www" / "x-1.0-py3-none-any.whl").write_bytes(payload)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(SimpleHTTPRequestHandler, directory=str(tmp_path / "www")))
    server.RequestHandlerClass.log_message = lambda *a: None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setitem(sys.modules, "pip", None)  # `import pip` fails, as in `uv tool install`
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/x-1.0-py3-none-any.whl"
        good = LockedWheel("x", "1.0", url, hashlib.sha256(payload).hexdigest())
        path = fetch(good, tmp_path / "cache")
        assert path.read_bytes() == payload and path.parent.name == good.sha256
        from wheeldoc.core.errors import InputError

        with pytest.raises(InputError, match="differs"):
            fetch(LockedWheel("x", "1.0", url, "0" * 64), tmp_path / "cache2")
        assert not list((tmp_path / "cache2").rglob("*.whl")), "a bad download is not kept"
    finally:
        server.shutdown()
        server.server_close()


# -- alternatives tried in turn: one warning per group, the rest are notes -------------------------
def test_alternatives_that_all_fail_give_one_warning(cli, tmp_path):
    from tests.hostile.elfgen import shared_object

    DT_NEEDED = 1
    pkg = tmp_path / "codecpkg"
    pkg.mkdir()
    for n in (4, 5, 6, 7):  # each needs its sibling core (no RUNPATH: loaded first by Python) and FFmpeg
        core = f"libcodecpkg_core{n}.so".encode()
        names = b"\0" + core + b"\0libavcodec.so.58\0"
        lib = shared_object(names, dyn=[(DT_NEEDED, 1), (DT_NEEDED, len(core) + 2)])
        (pkg / f"libcodecpkg_custom_ops{n}.so").write_bytes(lib)
        (pkg / core.decode()).write_bytes(shared_object(b"\0"))
    doc = cli("abi", str(pkg), T11, *LOCAL, "--format", "json").json()
    wd201 = [f for f in doc["findings"] if f["rule"] == "WD201"]
    assert len(wd201) == 8  # two libraries missing from each of the four alternatives
    assert all("none of the 4 alternatives" in f["message"] for f in wd201)
    warned = [f for f in wd201 if f["severity"] == "warning"]
    assert len(warned) == 1 and [f["severity"] for f in wd201].count("info") == 7
    assert warned[0]["message"].startswith("libavcodec.so.58")  # not the package's own core
