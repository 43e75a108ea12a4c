"""The story's downgrade reproduced with the real resolver, and the printed fix applied and re-checked.

Tiny real wheels are served from local folders: a "main" index that only carries CPU torch builds
(like a CPU mirror), a separate folder with the CUDA builds, a CUDA vLLM wheel whose FlashInfer
dependency does not pin torch. `uv pip compile` really picks `torch 2.10.0+cpu`; wheeldoc flags
it; the override and command it prints are run as printed; the new lock is clean.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.wheelfactory import build_wheel, write_find_links, write_simple_index

pytestmark = pytest.mark.slow


def uv() -> str:
    from uv import find_uv_bin

    return find_uv_bin()


@pytest.fixture
def world(tmp_path: Path) -> dict[str, str]:
    dist = tmp_path / "wheels"
    cpu = [build_wheel(dist, "torch", v, requires=["filelock"]) for v in ("2.10.0+cpu",)]
    cuda_torch = [build_wheel(dist, "torch", v, requires=["filelock", "nvidia-cublas>=13"])
                  for v in ("2.10.0+cu130", "2.11.0+cu130")]
    common = [build_wheel(dist, "filelock", "3.20.0"),
              build_wheel(dist, "flashinfer-python", "0.5.0", requires=["torch", "filelock"])]
    cublas = build_wheel(dist, "nvidia-cublas", "13.1.1.3")
    main_index = write_simple_index(tmp_path / "main", [*cpu, *common])
    cu130_index = write_simple_index(tmp_path / "cu130", [*cuda_torch, cublas])
    local = tmp_path / "local"
    vllm = build_wheel(dist, "vllm", "0.20.0+cu133", requires=["flashinfer-python", "torch>=2.10"])
    write_find_links(local, [vllm])
    project = tmp_path / "project"
    project.mkdir()
    (project / "requirements.in").write_text("vllm\n")
    return {"main": main_index, "cu130": cu130_index, "local": str(local), "project": str(project)}


def compile_lock(world: dict[str, str], *extra: str) -> subprocess.CompletedProcess:
    cmd = [uv(), "pip", "compile", "requirements.in", "-o", "requirements.lock",
           "--index-url", world["main"], "--find-links", world["local"], *extra]
    return subprocess.run(cmd, cwd=world["project"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "UV_NO_CONFIG": "1"})


def check(cli, *argv: str) -> dict:
    res = cli("check", *argv, "--format", "json", "--fail-on", "never")
    assert res.code == 0, res.err
    return res.json()


def test_resolver_picks_cpu_torch_and_the_printed_fix_repairs_it(world, cli):
    proc = compile_lock(world)
    assert proc.returncode == 0, proc.stderr
    lock = Path(world["project"], "requirements.lock")
    assert "torch==2.10.0+cpu" in lock.read_text()  # the real resolver really downgraded

    # The lock header does not record index options; give wheeldoc the same ones, plus the folder
    # that holds the CUDA builds, so it can read the parents' METADATA and point the fix at it.
    doc = check(cli, str(lock), "--index-url", world["main"], "--find-links", world["local"],
                "--extra-index-url", world["cu130"])
    cpu = [f for f in doc["findings"] if f["rule"] == "WD101"]
    assert len(cpu) == 1
    finding = cpu[0]
    assert finding["data"]["package"] == "torch" and finding["data"]["version"] == "2.10.0+cpu"
    assert finding["data"]["pulled_in_by"] == ["flashinfer-python", "vllm"]
    assert finding["data"]["pins"] == {"flashinfer-python": "does not pin it", "vllm": "requires torch>=2.10"}
    fix = finding["fix"]
    assert fix["text"] == "torch==2.10.0+cu130\n"
    assert "--override overrides.txt" in fix["command"]

    # Apply the fix exactly as printed.
    Path(world["project"], "overrides.txt").write_text(fix["text"])
    argv = shlex.split(fix["command"])
    assert argv[:3] == ["uv", "pip", "compile"]
    proc = subprocess.run([uv(), *argv[1:]], cwd=world["project"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "UV_NO_CONFIG": "1"})
    assert proc.returncode == 0, proc.stderr
    text = lock.read_text()
    assert "torch==2.10.0+cu130" in text and "+cpu" not in text

    doc = check(cli, str(lock))
    assert [f for f in doc["findings"] if f["rule"].startswith("WD1")] == []


def test_resolve_flag_runs_uv_and_flags_the_result(world, cli):
    req = Path(world["project"], "requirements.in")
    doc = check(cli, str(req), "--resolve", "--index-url", world["main"], "--find-links", world["local"])
    assert [f["rule"] for f in doc["findings"]] == ["WD101"]
    assert doc["resolved"][0]["command"].startswith("uv pip compile ")
    f = doc["findings"][0]
    assert Path(f["path"]).read_text().splitlines()[f["line"] - 1].startswith("torch==2.10.0+cpu")


def test_resolve_reports_uv_failure_as_input_error(world, cli):
    Path(world["project"], "requirements.in").write_text("does-not-exist-anywhere==1.0\n")
    res = cli("check", str(Path(world["project"], "requirements.in")), "--resolve",
              "--index-url", world["main"], "--format", "json")
    assert res.code == 2
    assert "uv pip compile failed" in res.err
