"""A torch requirement that comes through a dependency, and packages installed from their
repository's default branch.

pip's resolver takes the newest release of a dependency and picks torch again to fit it: an
installed torch that the package itself admits is still replaced when the dependency's newest
release asks for another. uv keeps the installed torch when it meets torch before the dependency
(Requires-Dist order), and takes an older release of the dependency: with uv a move through a
dependency is not known. Both checked here with the real pip and uv on tiny real wheels."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.wheelfactory import build_wheel, write_find_links
from wheeldoc.dockerfile.dependents import floors

UV = shutil.which("uv")

UNSLOTH_MAIN = """
    FROM {platform}pytorch/pytorch:2.6.0-cuda12.6-cudnn9-runtime
    RUN {install} "unsloth[huggingface] @ git+https://github.com/unslothai/unsloth.git"
"""


def wd403(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["rule"] == "WD403" and f["severity"] in ("warning", "error")]


def test_floors_keep_what_a_newer_source_tree_keeps() -> None:
    assert floors("<2.15.0,>=2.4.0") == ">=2.4.0"
    assert floors("==2.7.0") == ">=2.7.0" and floors("==2.7.*") == ">=2.7" and floors("~=2.5") == ">=2.5"
    assert floors(">2.1,!=2.3.0") == ">2.1" and floors("<3") == ""


def test_default_branch_moves_torch_through_an_uncapped_dependency_with_pip(check):
    # unsloth's newest asks torch>=2.4 itself (the image's 2.6.0 fits) and xformers>=0.0.27.post2 on
    # x86-64: pip takes xformers' newest (torch>=2.10) and replaces the image's torch
    [f] = wd403(check(UNSLOTH_MAIN.format(platform="--platform=linux/amd64 ", install="pip install")))
    assert f["severity"] == "error" and "at least as new as unsloth" in f["message"] and "xformers" in f["message"]


def test_without_a_platform_the_move_is_said_for_the_machine_it_happens_on(check):
    [f] = wd403(check(UNSLOTH_MAIN.format(platform="", install="pip install")))
    assert f["severity"] == "warning" and "built for linux x86_64" in f["message"]
    # on aarch64 the marker drops xformers and every requirement admits the image's torch
    assert wd403(check(UNSLOTH_MAIN.format(platform="--platform=linux/arm64 ", install="pip install"))) == []


def test_uv_may_keep_the_torch_and_take_an_older_dependency(check):
    text = UNSLOTH_MAIN.format(platform="--platform=linux/amd64 ", install="uv pip install --system")
    assert wd403(check(text)) == []


def test_a_capped_dependency_of_a_branch_is_not_judged(check):
    # the branch may have moved a dependency's cap: only uncapped dependencies are followed; a tagged
    # checkout is not judged at all
    text = """
        FROM --platform=linux/amd64 pytorch/pytorch:2.6.0-cuda12.6-cudnn9-runtime
        RUN pip install "unsloth @ git+https://github.com/unslothai/unsloth.git@v2025.1.1"
    """
    assert wd403(check(text)) == []


@pytest.mark.slow
@pytest.mark.skipif(UV is None, reason="uv not on PATH")
def test_real_pip_and_uv_on_a_move_through_a_dependency(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    wheels = [build_wheel(dist, "torch", v, files={"torch/__init__.py": f"V = '{v}'\n".encode()})
              for v in ("2.2.0", "2.14.1")]
    wheels += [build_wheel(dist, "xf", "1.0", requires=["torch==2.2.0"]),
               build_wheel(dist, "xf", "2.0", requires=["torch>=2.10"]),
               build_wheel(dist, "torch-first", "1.0", requires=["torch>=2.0", "xf"]),
               build_wheel(dist, "xf-first", "1.0", requires=["xf", "torch>=2.0"])]
    links = write_find_links(tmp_path / "links", wheels)

    def after(installer: str, package: str) -> str:
        env = tmp_path / f"{installer}-{package}"
        subprocess.run([UV, "venv", "--offline", "-q", "--seed", str(env)], check=True)
        py = str(env / "bin" / "python")
        subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", "--find-links", str(links), "torch==2.2.0"],
                       check=True)
        cmd = ([py, "-m", "pip", "install"] if installer == "pip" else
               [UV, "pip", "install", "--python", py, "--offline"])
        subprocess.run([*cmd, "-q", "--no-index", "--find-links", str(links), package], check=True)
        return subprocess.run([py, "-c", "import torch; print(torch.V)"], capture_output=True, text=True,
                              check=True).stdout.strip()

    assert after("pip", "torch-first") == "2.14.1" and after("pip", "xf-first") == "2.14.1"
    assert after("uv", "torch-first") == "2.2.0", "uv decides torch first, keeps it, takes xf 1.0"
    assert after("uv", "xf-first") == "2.14.1", "uv decides xf first, takes its newest, moves torch"


NGC_2504 = """
    FROM nvcr.io/nvidia/pytorch:25.04-py3
    RUN pip install {spec}
"""


def test_under_the_image_constraint_pip_takes_an_older_release(check):
    # NGC 25.04's /etc/pip/constraint.txt pins its torch 2.7.0a0: monai's newest asks torch>=2.8, an
    # older monai admits the image's torch, so pip takes that one; a pinned monai==1.6.1 cannot resolve
    assert wd403(check(NGC_2504.format(spec="monai"))) == []
    [f] = wd403(check(NGC_2504.format(spec="monai==1.6.1")))
    assert f["severity"] == "error" and "pip refuses" in f["message"]


def test_a_pre_release_torch_is_below_the_release_floor(check):
    # NGC 24.07 (no constraint file yet) ships torch 2.4.0a0, which `>=2.4` does not admit
    # (a pre-release sorts before its release): pip replaces it for bitsandbytes' newest
    text = """
        FROM nvcr.io/nvidia/pytorch:24.07-py3
        RUN pip install bitsandbytes
    """
    [f] = wd403(check(text))
    assert f["severity"] == "error" and "2.4.0a0" in f["message"]


@pytest.mark.slow
@pytest.mark.skipif(UV is None, reason="uv not on PATH")
def test_real_pip_under_a_constraint_and_with_a_pre_release_torch(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    wheels = [build_wheel(dist, "torch", v, files={"torch/__init__.py": f"V = '{v}'\n".encode()})
              for v in ("2.7.0a0+79aa174", "2.14.1")]
    wheels += [build_wheel(dist, "pkg", "1.0", requires=["torch>=1.9"]),
               build_wheel(dist, "pkg", "2.0", requires=["torch>=2.8"]),
               build_wheel(dist, "bnb", "0.50.2", requires=["torch>=2.7,<3"])]
    links = write_find_links(tmp_path / "links", wheels)
    constraint = tmp_path / "constraint.txt"
    constraint.write_text("torch==2.7.0a0+79aa174\n")

    def run(name: str, *args: str, constrained: bool) -> tuple[int, str, str]:
        env = tmp_path / name
        subprocess.run([UV, "venv", "--offline", "-q", "--seed", str(env)], check=True)
        py = str(env / "bin" / "python")
        pip = [py, "-m", "pip", "install", "-q", "--no-index", "--find-links", str(links)]
        subprocess.run([*pip, "torch==2.7.0a0+79aa174"], check=True)
        extra = {"PIP_CONSTRAINT": str(constraint)} if constrained else {}
        done = subprocess.run([*pip, *args], capture_output=True, text=True, env={**os.environ, **extra})
        torch = subprocess.run([py, "-c", "import torch; print(torch.V)"], capture_output=True, text=True).stdout
        pkgs = subprocess.run([py, "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True).stdout
        return done.returncode, torch.strip(), pkgs

    code, torch, pkgs = run("backtracks", "pkg", constrained=True)
    assert code == 0 and torch == "2.7.0a0+79aa174" and "pkg==1.0" in pkgs, "an older pkg fits the constraint"
    code, torch, _ = run("refuses", "pkg==2.0", constrained=True)
    assert code != 0 and torch == "2.7.0a0+79aa174", "a pinned pkg cannot resolve under the constraint"
    code, torch, _ = run("pre-release", "bnb", constrained=False)
    assert code == 0 and torch == "2.14.1", "2.7.0a0 is below >=2.7: pip replaces it"
