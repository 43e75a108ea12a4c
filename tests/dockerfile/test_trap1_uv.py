"""The story's trap 1, for real: uv installs a dependent whose requirement pins another torch
over an installed CUDA torch. Tiny real wheels (tests/wheelfactory.py), a local index that
serves only a CPU build of the pinned torch, a throwaway venv. Without `--override` uv replaces
the CUDA torch with the CPU build; with an overrides file holding the installed torch it keeps
it. wheeldoc says the same about the Dockerfile that does this (an error, and the fixed file is
clean)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.wheelfactory import build_wheel, write_find_links, write_simple_index

ROOT = Path(__file__).resolve().parents[2]
R = ROOT / "fixtures" / "dockerfiles" / "rules"
UV = shutil.which("uv")


def _check(path: Path) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "wheeldoc", "check", "--format", "json", "--fail-on", "never",
                          str(path)], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["findings"]


def test_trap1_dockerfile_is_an_error_with_the_override_fix() -> None:
    found = [f for f in _check(R / "wd403-trap1.Dockerfile") if f["rule"] == "WD403"]
    assert len(found) == 1 and found[0]["severity"] == "error", found
    f = found[0]
    assert f["line"] == 8
    assert f["data"]["torch_required"] == "==2.7.0" and f["data"]["torch_installed"] == "2.6.0+cu124"
    assert "--override" in f["fix"]["title"] and "--override" in f["fix"]["command"]


def test_trap1_fixed_dockerfile_is_clean() -> None:
    found = [f for f in _check(R / "wd403-trap1-fixed.Dockerfile") if f["severity"] in ("warning", "error")]
    assert found == []


def _installed(py: Path) -> dict[str, str]:
    out = subprocess.run([UV, "pip", "list", "--python", str(py), "--format", "json"], capture_output=True,
                         text=True, check=True)
    return {d["name"]: d["version"] for d in json.loads(out.stdout)}


@pytest.mark.slow
@pytest.mark.skipif(UV is None, reason="uv not on PATH")
def test_real_uv_replaces_the_cuda_torch_and_override_keeps_it(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    cuda_torch = build_wheel(dist / "cuda", "torch", "2.11.0+cu130", platform="any")
    cpu_torch = build_wheel(dist / "cpu", "torch", "2.10.0+cpu", platform="any")
    dependent = build_wheel(dist / "dep", "vllm", "0.99.0", requires=["torch==2.10.0"], platform="any")
    index = write_simple_index(tmp_path / "index", [cpu_torch])  # the index serves only a CPU torch 2.10.0
    links = write_find_links(tmp_path / "links", [cuda_torch])

    def venv(name: str) -> Path:
        subprocess.run([UV, "venv", "--offline", "-q", str(tmp_path / name)], check=True)
        py = tmp_path / name / "bin" / "python"
        subprocess.run([UV, "pip", "install", "--offline", "-q", "--python", str(py), "--no-index", "--find-links",
                        str(links), "torch==2.11.0+cu130"], check=True)
        assert _installed(py)["torch"] == "2.11.0+cu130"
        return py

    common = ["--offline", "-q", "--index-url", index, "--find-links", str(dependent.parent)]
    plain = venv("plain")
    subprocess.run([UV, "pip", "install", "--python", str(plain), *common, str(dependent)], check=True)
    assert _installed(plain)["torch"] == "2.10.0+cpu", "without --override uv replaced the CUDA torch"

    kept = venv("kept")
    overrides = tmp_path / "overrides.txt"
    overrides.write_text("torch==2.11.0+cu130\n")
    subprocess.run([UV, "pip", "install", "--python", str(kept), *common, "--find-links", str(links),
                    "--override", str(overrides), str(dependent)], check=True)
    got = _installed(kept)
    assert got["torch"] == "2.11.0+cu130" and got["vllm"] == "0.99.0", "--override kept the CUDA torch"


def test_requirement_read_from_a_wheel_in_the_build_context(tmp_path: Path) -> None:
    """The story's shape: a rolling vLLM wheel (not on PyPI) copied from the build context over a
    CUDA torch; its own METADATA says which torch it wants."""
    build_wheel(tmp_path / "wheels", "vllm", "0.16.1rc1.dev20260607+cu133", requires=["torch==2.10.0"],
                platform="manylinux_2_28_aarch64", python_tag="cp38", abi_tag="abi3")
    (tmp_path / "Dockerfile").write_text(
        "FROM nvidia/cuda:13.0.1-runtime-ubuntu24.04\n"
        "COPY --from=ghcr.io/astral-sh/uv:0.9.5 /uv /usr/local/bin/uv\n"
        "RUN uv pip install --system 'torch==2.11.0+cu130' --index-url https://download.pytorch.org/whl/cu130\n"
        "COPY wheels/ /tmp/wheels/\n"
        "RUN uv pip install --system /tmp/wheels/vllm-*.whl\n")
    found = [f for f in _check(tmp_path / "Dockerfile") if f["rule"] == "WD403"]
    assert [(f["line"], f["severity"]) for f in found] == [(5, "error")]
    assert found[0]["data"]["torch_required"] == "==2.10.0" and "METADATA of vllm-0.16.1rc1" in found[0]["message"]
