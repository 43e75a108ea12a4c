"""A `pip wheel -w DIR` build stage, then `pip install DIR/*`: the folder holds what `pip wheel`
resolved as if nothing were installed (the newest torch its requirements admit), and installing
every wheel in it puts that torch over the one in the image. Checked with the real pip on tiny real
wheels (tests/wheelfactory.py) and on Dockerfiles of the shapes found in public repositories."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.wheelfactory import build_wheel, write_find_links

UV = shutil.which("uv")

TWO_STAGES = """
    FROM pytorch/pytorch:2.5.1-cuda12.4-cudnn9-devel AS builder
    RUN pip wheel {flags}--wheel-dir /wheels vllm==0.9.1
    FROM pytorch/pytorch:{runtime}-cuda12.4-cudnn9-runtime
    COPY --from=builder /wheels /wheels
    RUN pip install --no-cache-dir /wheels/*.whl
"""


def wd403(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["rule"] == "WD403" and f["severity"] in ("warning", "error")]


def test_wheels_built_in_a_stage_replace_the_image_torch(check):
    [f] = wd403(check(TWO_STAGES.format(flags="", runtime="2.5.1")))
    assert f["severity"] == "error" and f["line"] == 5  # vllm 0.9.1 pins torch==2.7.0: certain
    assert f["data"]["package_version"] == "2.7.0" and f["data"]["torch_installed"] == "2.5.1"
    assert "resolves as if nothing were installed" in f["message"] and "(line 2, stage 'builder')" in f["message"]


def test_the_builder_itself_installs_nothing(check):
    # pip wheel over the image's 2.5.1 leaves it there: no finding on line 2
    assert all(f["line"] != 2 for f in check(TWO_STAGES.format(flags="", runtime="2.5.1")))


def test_wheels_that_hold_the_image_torch_are_fine(check):
    assert wd403(check(TWO_STAGES.format(flags="", runtime="2.7.0"))) == []


def test_a_wheel_folder_built_without_dependencies_is_not_read_as_holding_torch(check):
    assert wd403(check(TWO_STAGES.format(flags="--no-deps ", runtime="2.5.1"))) == []


def test_same_stage_and_the_default_folder(check):
    text = """
        FROM pytorch/pytorch:2.5.1-cuda12.4-cudnn9-devel
        WORKDIR /build
        RUN pip wheel vllm==0.9.1
        RUN pip install /build/*
    """
    [f] = wd403(check(text))
    assert f["line"] == 4 and f["data"]["package_version"] == "2.7.0"


def test_a_folder_filled_from_the_build_context_is_not_a_wheel_folder(check):
    text = """
        FROM pytorch/pytorch:2.5.1-cuda12.4-cudnn9-devel AS builder
        RUN pip wheel --wheel-dir /wheels vllm==0.9.1
        FROM pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime
        COPY --from=builder /wheels /wheels
        COPY wheels/ /wheels/
        RUN pip install /wheels/*.whl
    """
    assert [f for f in wd403(check(text)) if "pip wheel" in f["message"]] == []


@pytest.mark.slow
@pytest.mark.skipif(UV is None, reason="uv not on PATH")
def test_real_pip_wheel_resolves_as_if_nothing_were_installed(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    old = build_wheel(dist, "torch", "2.2.0", platform="any", files={"torch/__init__.py": b"V = '2.2.0'\n"})
    new = build_wheel(dist, "torch", "2.14.1", platform="any", files={"torch/__init__.py": b"V = '2.14.1'\n"})
    app = build_wheel(dist, "accelerate", "1.15.0", requires=["torch>=2.0.0"], platform="any")
    links = write_find_links(tmp_path / "links", [old, new, app])
    subprocess.run([UV, "venv", "--offline", "-q", "--seed", str(tmp_path / "env")], check=True)
    py = str(tmp_path / "env" / "bin" / "python")
    pip = [py, "-m", "pip", "-q"]
    subprocess.run([*pip, "install", "--no-index", "--find-links", str(links), "torch==2.2.0"], check=True)
    house = tmp_path / "wheels"
    subprocess.run([*pip, "wheel", "--no-index", "--find-links", str(links), "-w", str(house), "accelerate"],
                   check=True)
    held = sorted(p.name.split("-")[0] + "-" + p.name.split("-")[1] for p in house.glob("*.whl"))
    assert held == ["accelerate-1.15.0", "torch-2.14.1"], "pip wheel takes the newest torch, not the installed one"
    subprocess.run([*pip, "install", "--no-index", *map(str, sorted(house.glob("*.whl")))], check=True)
    out = subprocess.run([py, "-c", "import torch; print(torch.V)"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "2.14.1", "installing every wheel of the folder replaces the installed torch"
