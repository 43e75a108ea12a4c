"""`wheeldoc doctor`: the committed fixture environments, the host machine, the cache, bad input,
and the two real environments built from the real wheels (slow)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from tests.doctor import doctor_envs as de
from tests.conftest import ROOT, run_subprocess
from tests.render.test_render import report_schema, sarif_validator

H200 = ("--gpu", "h200", "--driver", "580.95.05")


def sp(name: str) -> str:
    return f"fixtures/envs/{name}/lib/python3.12/site-packages"


def doctor(cli, name: str, *flags: str, fmt: str = "json"):
    res = cli("doctor", "--site-packages", sp(name), *flags, "--format", fmt)
    doc = json.loads(res.out) if fmt != "text" else None
    if fmt == "json":
        jsonschema.Draft202012Validator(report_schema()).validate(doc)
    return res, doc


def rules(doc) -> set[str]:
    return {f["rule"] for f in doc["findings"]}


# -- the committed fixtures ---------------------------------------------------------------------

@pytest.mark.parametrize("name,verdict,codes,exit_code", [
    ("cuda-ok", "healthy", {"WD305"}, 0),
    ("cpu-torch", "broken", {"WD501", "WD201", "WD204", "WD205"}, 1),  # the ABI model agrees
    ("cpu-only", "broken", {"WD501"}, 1),  # --gpu h200 is CUDA wanted
    ("mismatch", "broken", {"WD502", "WD503", "WD508", "WD305", "WD205"}, 1),
    ("duplicates", "degraded", {"WD506", "WD305"}, 1),
])
def test_fixture_verdicts(cli, name, verdict, codes, exit_code):
    res, doc = doctor(cli, name, *H200)
    assert doc["verdict"] == verdict and doc["doctor"]["verdict"] == verdict
    assert rules(doc) == codes, [f["message"] for f in doc["findings"]]
    assert res.code == exit_code and res.err == ""
    assert doc["machine"]["source"] == "flags" and doc["target"]["gpu"]["arch"] == "sm_90"
    if verdict == "broken":
        assert doc["doctor"]["root_cause"]["rule"] in codes


def test_cpu_torch_names_the_missing_library_and_the_pin(cli):
    _, doc = doctor(cli, "cpu-torch", *H200)
    assert doc["doctor"]["root_cause"]["rule"] == "WD501"
    (f,) = [f for f in doc["findings"] if f["rule"] == "WD501"]
    assert f["path"].endswith("torch/version.py") and "cuda = None" in f["message"]
    assert f["data"]["missing"] == {"torchvision/_C.so": ["libc10_cuda.so"]}
    assert any("requires torch==2.13.0, which 2.13.0+cpu satisfies" in e for e in f["evidence"])
    assert f["fix"]["command"].endswith("torch==2.13.0+cu130 --index-url https://download.pytorch.org/whl/cu130")
    assert doc["doctor"]["reason"].startswith("torch 2.13.0+cpu is a CPU-only build")
    # the consequence, from the ABI analyzer's loader model on the same files
    (x,) = doc["abi"]["extensions"]
    assert x["library"] == "torchvision/_C.so" and x["verdict"] == "fails" and x["detail"] == "not found: libc10_cuda.so, libcudart.so.13"
    wd201 = [f for f in doc["findings"] if f["rule"] == "WD201"]
    assert {f["path"].rsplit("site-packages/", 1)[1] for f in wd201} == {"torchvision/_C.so"}
    assert any("libc10_cuda.so" in f["message"] for f in wd201)


def test_consistent_cpu_environment_without_a_gpu_is_healthy(cli):
    res, doc = doctor(cli, "cpu-only", "--driver", "none")
    assert doc["verdict"] == "healthy" and rules(doc) == {"WD507"} and res.code == 0
    assert doc["machine"]["no_driver"] is True and doc["kernels"] == []


def test_text_report_groups_findings_by_severity(cli):
    res, _ = doctor(cli, "mismatch", *H200, fmt="text")
    out = res.out
    first = out.splitlines()[1]
    assert "torchvision/_C.so  loads    5 libraries in its closure resolve" in out
    assert first.startswith("BROKEN — torch 2.11.0+cu130 requires 1 CUDA runtime package") and "(WD502)" in first
    positions = [out.index(h) for h in ("Environment", "Machine (from the flags)", "Extensions linking torch",
                                        "GPU code on h200", "Coverage:", "Errors (3)", "Warnings (2)",
                                        "Information (2)", "Found 7 findings")]
    assert positions == sorted(positions)
    assert res.err == ""  # no progress bar off a terminal


def test_sarif(cli):
    res, doc = doctor(cli, "mismatch", *H200, fmt="sarif")
    sarif_validator().validate(doc)
    assert {r["ruleId"] for r in doc["runs"][0]["results"]} >= {"WD502", "WD503"}


def test_list_gives_entries_like_kernels(cli):
    import subprocess

    _, doc = doctor(cli, "cuda-ok", *H200, "--list")
    assert {e["library"].rsplit("/", 1)[-1] for e in doc["entries"]} == {"libtorch_cuda.so"}
    k = json.loads(subprocess.run(
        [sys.executable, "-m", "wheeldoc", "kernels", f"{sp('cuda-ok')}/torch/lib/libtorch_cuda.so", "--list",
         "--format", "json"], capture_output=True, text=True, cwd=ROOT).stdout)
    strip = lambda es: [{k: v for k, v in e.items() if k != "library"} for e in es]  # noqa: E731
    assert strip(doc["entries"]) == strip(k["entries"]) and len(doc["entries"]) == 5


def test_library_path_flag(cli):
    _, doc = doctor(cli, "cuda-ok", *H200, "--ld-library-path", "fixtures/envs/ldpath/cuda13")
    (f,) = [f for f in doc["findings"] if f["rule"] == "WD505"]
    # torchvision/_C.so has a RUNPATH (searched after LD_LIBRARY_PATH); libc10_cuda.so an RPATH (before)
    assert "shadows the environment's copy" in f["message"] and "torchvision/_C.so" in f["message"]
    assert f["evidence"] == ["torchvision/_C.so: RUNPATH $ORIGIN/../torch/lib"]
    _, doc = doctor(cli, "cuda-ok", *H200, "--ld-library-path", "fixtures/envs/ldpath/cuda12:/nonexistent")
    (f,) = [f for f in doc["findings"] if f["rule"] == "WD505"]
    assert f["severity"] == "warning" and f["data"]["environment_majors"] == [13]


def test_the_drivers_libcuda_on_the_path_is_not_reported(cli, tmp_path):
    """An H200 machine's LD_LIBRARY_PATH=/usr/local/nvidia/lib64 holds libcuda.so.580.159.04:
    the driver's library, not another CUDA build (a false WD505 found on the real machine)."""
    for name in ("libcuda.so.580.159.04", "libcuda.so.1", "libcuda.so", "libnvidia-ml.so.1"):
        shutil.copyfile(ROOT / "fixtures/envs/ldpath/unrelated/libx.so.1", tmp_path / name)
    _, doc = doctor(cli, "cuda-ok", *H200, "--ld-library-path", str(tmp_path))
    assert "WD505" not in rules(doc) and doc["verdict"] == "healthy"


def test_driver_minor_newer_is_information(cli):
    _, doc = doctor(cli, "cuda-ok", "--gpu", "h200", "--driver", "13.0")
    assert "WD504" not in rules(doc)
    res, doc = doctor(cli, "cuda-ok", "--gpu", "h200", "--driver", "575.57.08")
    (f,) = [f for f in doc["findings"] if f["rule"] == "WD504"]
    assert f["severity"] == "error" and f["data"]["min_driver"] == "580.65.06"
    assert "torch==2.11.0+cu128" in f["fix"]["command"] and doc["verdict"] == "broken"


def test_selection_and_severity_override(cli):
    res, doc = doctor(cli, "mismatch", *H200, "--select", "WD503")
    assert rules(doc) == {"WD503"} and doc["verdict"] == "broken"
    res, doc = doctor(cli, "duplicates", *H200, "--ignore", "WD506")
    assert doc["verdict"] == "healthy" and res.code == 0


# -- the host machine ---------------------------------------------------------------------------

def test_host_without_driver_is_a_fact(cli, monkeypatch):
    from wheeldoc.environment import machine as m

    monkeypatch.setattr(m, "read_driver", lambda **kw: m.NvidiaDriver(False, "no NVIDIA kernel module loaded"))
    monkeypatch.setenv("LD_LIBRARY_PATH", str(ROOT / "fixtures/envs/ldpath/cuda12"))
    res, doc = doctor(cli, "cuda-ok")
    assert doc["machine"]["source"] == "host" and doc["machine"]["no_driver"] is True
    assert doc["target"]["source"] == "host" and doc["target"]["gpu"] is None
    codes = rules(doc)
    assert "WD507" in codes and "WD505" in codes  # the host's LD_LIBRARY_PATH is read
    (f,) = [f for f in doc["findings"] if f["rule"] == "WD507"]
    assert f["severity"] == "info" and "no NVIDIA kernel module loaded" in f["message"]
    assert doc["kernels"][0]["load"] is None  # no GPU: coverage only


def test_host_with_a_gpu_is_the_target(cli, monkeypatch):
    from wheeldoc.environment import machine as m

    drv = m.NvidiaDriver(True, "NVML", "580.159.04", (13, 0), "open", "nvml",
                         (m.GpuDevice(0, "NVIDIA H200", (9, 0)),))
    monkeypatch.setattr(m, "read_driver", lambda **kw: drv)
    monkeypatch.delenv("LD_LIBRARY_PATH", raising=False)
    _, doc = doctor(cli, "cuda-ok")
    assert doc["target"]["gpu"] == {"name": "h200", "compute_capability": "9.0", "arch": "sm_90"}
    assert doc["target"]["driver"]["version"] == "580.159.04" and doc["verdict"] == "healthy"
    assert doc["kernels"][0]["load"]["verdict"] == "native"
    # a flag overrides the host: the same command answers for another machine
    _, doc = doctor(cli, "cuda-ok", "--driver", "575.57.08", "--gpu", "gb10")
    assert doc["machine"]["source"] == "flags" and "WD504" in rules(doc)


def test_running_interpreter_and_python_flag(cli):
    res = cli("doctor", "--format", "json", "--driver", "none")
    doc = json.loads(res.out)
    assert doc["environment"]["site_packages"] and doc["environment"]["torch"] is None
    res2 = cli("doctor", "--python", sys.executable, "--format", "json", "--driver", "none")
    assert json.loads(res2.out)["environment"]["site_packages"] == doc["environment"]["site_packages"]


# -- bad input ----------------------------------------------------------------------------------

@pytest.mark.parametrize("argv,msg", [
    (("--site-packages", "fixtures/envs/nope"), "no such site-packages folder"),
    (("--python", "/nonexistent/python"), "no such interpreter"),
])
def test_bad_environment_is_an_input_error(cli, argv, msg):
    res = cli("doctor", *argv, "--driver", "none")
    assert res.code == 2 and msg in res.err and "Traceback" not in res.err


def test_both_python_and_site_packages_is_a_usage_error(cli):
    res = cli("doctor", "--python", sys.executable, "--site-packages", sp("cuda-ok"))
    assert res.code == 2 and "either --python or --site-packages" in res.err


def test_broken_library_is_skipped_not_a_crash(cli, tmp_path):
    root = tmp_path / "env"
    shutil.copytree(ROOT / "fixtures/envs/cuda-ok", root)
    lib = root / "lib/python3.12/site-packages/torchvision/_C.so"
    lib.write_bytes(lib.read_bytes()[:200])
    res = cli("doctor", "--site-packages", str(root / "lib/python3.12/site-packages"), *H200, "--format", "json")
    doc = json.loads(res.out)
    assert res.code == 1 and doc["verdict"] == "degraded"
    (s,) = doc["skipped"]
    assert s["path"].endswith("torchvision/_C.so") and "WD002" in rules(doc)


# -- the cache ----------------------------------------------------------------------------------

def test_warm_run_reads_one_cache_entry_and_notices_a_changed_file(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "env"
    shutil.copytree(ROOT / "fixtures/envs/cuda-ok", root)
    site = str(root / "lib/python3.12/site-packages")
    cold = json.loads(cli("doctor", "--site-packages", site, *H200, "--format", "json").out)
    warm = json.loads(cli("doctor", "--site-packages", site, *H200, "--format", "json").out)
    assert cold["environment"]["cache"] == {"cache_hits": 0, "cache_misses": 6, "composite_hit": False}
    assert warm["environment"]["cache"]["composite_hit"] is True
    assert warm["findings"] == cold["findings"] and warm["kernels"] == cold["kernels"]
    # a library replaced after installation (same RECORD) gets a new key: read again, the rest cached
    lib = Path(site) / "torch/lib/libtorch_cuda.so"
    shutil.copyfile(ROOT / "fixtures/kernels/libptxonly.so", lib)
    again = json.loads(cli("doctor", "--site-packages", site, *H200, "--format", "json").out)
    assert again["environment"]["cache"] == {"cache_hits": 5, "cache_misses": 1, "composite_hit": False}
    assert again["kernels"][0]["load"]["verdict"] == "jit"
    nocache = json.loads(cli("doctor", "--site-packages", site, *H200, "--format", "json", "--no-cache").out)
    assert nocache["environment"]["cache"]["cache_misses"] == 6 and nocache["kernels"] == again["kernels"]


# -- the real environments, built from the real wheels (slow) -------------------------------------

@pytest.fixture(scope="session")
def healthy_prefix(request) -> Path:
    if not shutil.which("uv"):
        pytest.skip("uv missing")
    prefix = de.healthy_env(Path(request.config.cache.mkdir("wheeldoc-real-envs")))
    if prefix is None:
        pytest.skip("real wheels missing")
    return prefix


@pytest.fixture(scope="session")
def broken_prefix(request) -> Path:
    if not shutil.which("uv"):
        pytest.skip("uv missing")
    prefix = de.broken_env(Path(request.config.cache.mkdir("wheeldoc-real-envs")))
    if prefix is None:
        pytest.skip("real wheels missing")
    return prefix


@pytest.mark.slow
def test_real_cuda_torch_with_matching_torchvision_is_healthy(healthy_prefix, tmp_path):
    env = {**os.environ, "WHEELDOC_CACHE_DIR": str(tmp_path / "cache")}
    py = str(healthy_prefix / "bin" / "python")
    argv = [sys.executable, "-m", "wheeldoc", "doctor", "--python", py, *H200, "--format", "json"]
    import subprocess

    t0 = time.perf_counter()
    cold = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    t1 = time.perf_counter()
    warm = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    t2 = time.perf_counter()
    print(f"\nhealthy env: cold {t1 - t0:.2f} s, warm {t2 - t1:.2f} s")
    doc = json.loads(cold.stdout)
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    assert doc["verdict"] == "healthy", [(f["rule"], f["message"]) for f in doc["findings"]
                                         if f["severity"] != "info"]
    assert cold.returncode == 0 and warm.returncode == 0
    e = doc["environment"]
    assert e["torch"]["version"] == "2.14.1+cu130" and e["torch"]["cuda"] == "13.0"
    assert e["libraries_with_gpu_code"] >= 20 and doc["abi"]["checked"] == 2
    assert all(x["verdict"] == "loads" for x in doc["abi"]["extensions"]), doc["abi"]
    loads = {x["library"].rsplit("/", 1)[-1]: x["load"] for x in doc["kernels"]}
    assert loads["libtorch_cuda.so"]["verdict"] == "native"
    capped = [f for f in doc["findings"] if "severity_capped_from" in f["data"]]
    assert capped and all(f["data"]["package"].startswith("nvidia-") for f in capped)
    w = json.loads(warm.stdout)
    assert w["environment"]["cache"]["composite_hit"] is True and w["findings"] == doc["findings"]
    assert t2 - t1 < 5


@pytest.mark.slow
def test_real_cpu_torch_with_cuda_torchvision_is_broken(broken_prefix):
    site = de.ef.site_packages(broken_prefix)
    res = run_subprocess("doctor", "--site-packages", str(site), *H200, "--format", "json")
    doc = json.loads(res.out)
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    assert doc["verdict"] == "broken" and res.code == 1
    root = doc["doctor"]["root_cause"]
    assert root["rule"] == "WD501" and "2.13.0+cpu is a CPU-only build" in root["message"]
    f = next(f for f in doc["findings"] if f["rule"] == "WD501")
    assert f["data"]["missing"]["torchvision/_C.so"] == ["libc10_cuda.so", "libtorch_cuda.so"] or \
        "libc10_cuda.so" in f["data"]["missing"]["torchvision/_C.so"]
    text = run_subprocess("doctor", "--site-packages", str(site), *H200).out
    assert text.splitlines()[1].startswith("BROKEN — torch 2.13.0+cpu is a CPU-only build")
    assert "libc10_cuda.so" in text
    failing = [x for x in doc["abi"]["extensions"] if x["verdict"] == "fails"]
    assert {x["library"] for x in failing} >= {"torchvision/_C.so"}
    assert all(x["detail"].startswith("not found: libc10_cuda.so") for x in failing)


# -- the process pool used on cold runs -------------------------------------------------------------

def test_parallel_reads_equal_serial_reads(monkeypatch, tmp_path):
    from wheeldoc.environment import pool as envpool
    from wheeldoc.core.cache import Cache
    from wheeldoc.environment.fs import HOST

    files = sorted(str(p) for p in (ROOT / "fixtures").rglob("*.so") if "broken" not in p.relative_to(ROOT).parts
                   and "hostile" not in p.relative_to(ROOT).parts and not p.is_symlink())[:40]
    assert len(files) >= envpool.MIN_PARALLEL
    misses = [(p, None, os.path.getsize(p)) for p in files]

    def run(workers: str) -> dict:
        monkeypatch.setenv("WHEELDOC_WORKERS", workers)
        return {p: (v, e) for p, v, e in envpool.read_libraries(HOST, misses, Cache(tmp_path / workers), None, 0, 1, 1)}

    serial, parallel = run("1"), run("2")
    assert serial == parallel and any(v and v["fatbin"] for v, _ in serial.values())
    emb = [str(ROOT / "fixtures/kernels/libembedded.so"), str(ROOT / "fixtures/kernels/libmulti.so")]
    monkeypatch.setenv("WHEELDOC_WORKERS", "1")
    one = envpool.scan_embedded(emb)
    monkeypatch.setenv("WHEELDOC_WORKERS", "2")
    assert envpool.scan_embedded(emb) == one and one[emb[0]]["sections"]
