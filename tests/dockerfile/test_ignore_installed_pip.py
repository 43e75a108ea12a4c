"""`pip install --ignore-installed …` over an installed torch, for real: tiny real wheels
(tests/wheelfactory.py), a local find-links folder with two torch releases, a throwaway venv with
pip. Without the flag pip keeps the installed torch that the dependent admits; with it pip
installs the newest torch afresh over it, without uninstalling the old one (both dist-info folders
stay; the newer files overwrite the older). wheeldoc says so about a Dockerfile that does this."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.wheelfactory import build_wheel, write_find_links

UV = shutil.which("uv")

DOCKERFILE = """
    FROM runpod/pytorch:2.2.0-py3.10-cuda12.1.1-devel-ubuntu22.04
    RUN pip install --no-cache-dir {flag}accelerate
"""


def wd403(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["rule"] == "WD403" and f["severity"] in ("warning", "error")]


def test_ignore_installed_over_the_image_torch(check):
    [f] = wd403(check(DOCKERFILE.format(flag="--ignore-installed ")))
    assert f["data"]["requirement_from"] == "--ignore-installed" and f["data"]["package_version"].startswith("2.")
    assert "installs torch afresh" in f["message"]
    assert wd403(check(DOCKERFILE.format(flag=""))) == []  # accelerate admits the image's torch: kept


def test_ignore_installed_with_a_requirement_through_a_dependency(check):
    # unsloth's newest asks torch<2.15,>=2.4 itself and torch>=2.10 through xformers (older
    # xformers releases relax that): a fresh resolution still takes the newest of each, as an assumption
    [f] = wd403(check(DOCKERFILE.format(flag="--ignore-installed unsloth ")))
    assert f["severity"] == "warning" and f["data"]["package_version"].startswith("2.14.")


@pytest.mark.slow
@pytest.mark.skipif(UV is None, reason="uv not on PATH")
def test_real_pip_reinstalls_the_newest_torch_with_ignore_installed(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    old = build_wheel(dist, "torch", "2.2.0", platform="any", files={"torch/__init__.py": b"V = '2.2.0'\n"})
    new = build_wheel(dist, "torch", "2.14.1", platform="any", files={"torch/__init__.py": b"V = '2.14.1'\n"})
    app = build_wheel(dist, "accelerate", "1.15.0", requires=["torch>=2.0.0"], platform="any")
    links = write_find_links(tmp_path / "links", [old, new, app])

    def venv(name: str) -> Path:
        subprocess.run([UV, "venv", "--offline", "-q", "--seed", str(tmp_path / name)], check=True)
        py = tmp_path / name / "bin" / "python"
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(links),
                        "torch==2.2.0"], check=True)
        return py

    def torch_of(py: Path) -> tuple[str, list[str]]:
        imported = subprocess.run([str(py), "-c", "import torch; print(torch.V)"], capture_output=True, text=True,
                                  check=True).stdout.strip()
        site = next(py.parent.parent.glob("lib/python3*/site-packages"))
        return imported, sorted(p.name for p in site.glob("torch-*.dist-info"))

    kept = venv("kept")
    subprocess.run([str(kept), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(links), "accelerate"],
                   check=True)
    assert torch_of(kept) == ("2.2.0", ["torch-2.2.0.dist-info"]), "pip keeps an installed torch the dependent admits"

    ignored = venv("ignored")
    subprocess.run([str(ignored), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(links),
                    "--ignore-installed", "accelerate"], check=True)
    assert torch_of(ignored) == ("2.14.1", ["torch-2.14.1.dist-info", "torch-2.2.0.dist-info"]), \
        "--ignore-installed installs the newest torch over the old one, which stays half there"


def test_ignore_installed_over_a_torch_that_may_be_the_same_release(check):
    # line 2 takes PyPI's newest torch ("2.15.0 or later"); --ignore-installed then reinstalls the
    # newest admitted one, which may be that very release: nothing to say (a partial bound is unknown)
    text = """
        FROM python:3.11-slim
        RUN pip install torch
        RUN pip install --ignore-installed accelerate
    """
    assert wd403(check(text)) == []
    short = DOCKERFILE.format(flag="-I ")  # pip's short flag
    assert [f["data"]["requirement_from"] for f in wd403(check(short))] == ["--ignore-installed"]


def test_ignore_installed_of_a_package_that_needs_no_torch_brings_none(check):
    # transformers' releases require no torch (the table keeps them: [] is "none"): reinstalling it
    # and its dependencies puts no torch over the image's
    text = """
        FROM vllm/vllm-openai:v0.14.0
        RUN pip install --ignore-installed transformers
    """
    assert wd403(check(text)) == []
    [f] = wd403(check(text.replace("transformers", "sentence-transformers")))
    assert "--ignore-installed" in f["message"]
