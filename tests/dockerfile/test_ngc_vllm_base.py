"""WD403 over NGC's vLLM image (nvcr.io/nvidia/vllm:YY.MM-py3): it ships NVIDIA's vLLM on an NGC
pre-release torch build. An install of a vLLM that pins another torch replaces that torch (an
error); the image's own vLLM kept (`pip install vllm`, the same version), a held torch (`-c`,
`--no-deps`) or a package that admits the image's torch stays quiet at warning level."""

from __future__ import annotations

import pytest


def loud(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["rule"] == "WD403" and f["severity"] in ("warning", "error")]


BASE = """
    FROM nvcr.io/nvidia/vllm:{tag}-py3
    RUN {install}
"""


@pytest.mark.parametrize("tag,install", [
    ("25.09", "pip install --upgrade vllm"),  # the newest vLLM pins a final torch: not NGC's 2.x.0a0 build
    ("25.10", "pip install vllm==0.11.0"),  # torch==2.8.0 over 2.9.0a0+50eac811a6
    ("26.10", "pip install -U vllm==0.10.2"),
    ("26.05.post1", "pip install vllm==0.31.0"),  # a .postN tag keeps the date bound: a pre-release torch
    ("26.01", "uv pip install --system --upgrade vllm"),
])
def test_a_vllm_that_pins_another_torch_replaces_the_images(check, tag, install):
    [f] = loud(check(BASE.format(tag=tag, install=install)))
    assert f["severity"] == "error" and f"nvidia/vllm:{tag}-py3" in f["message"]
    assert "NGC vLLM" in f["data"]["installed_by"]


@pytest.mark.parametrize("tag,install", [
    ("25.09", "pip install vllm"),  # already there, not upgraded: pip keeps the image's vLLM
    ("25.10", "pip install vllm==0.10.2"),  # the image's own vLLM (0.10.2+…) satisfies the pin
    ("26.10", "pip install 'vllm==0.31.0'"),
    ("25.09", "pip install -c /etc/pip/constraint.txt --upgrade vllm"),  # a constraint holds torch
    ("25.09", "pip install --no-deps --upgrade vllm"),
    ("26.05", "pip install einops"),  # no torch requirement
    ("25.10", "pip install torchvision"),  # may be in the image already (its packages are not all listed)
])
def test_what_keeps_the_images_torch_stays_quiet(check, tag, install):
    assert loud(check(BASE.format(tag=tag, install=install))) == []


def test_the_upgrade_of_the_vllm_the_image_ships_is_said_with_its_release(check):
    [f] = loud(check(BASE.format(tag="26.05", install="pip install --upgrade vllm")))
    assert "2.12.0a0+5aff3928d8" in f["message"] and "its release notes" in f["message"]
    assert f["data"]["torch_installed"] == "2.12.0a0+5aff3928d8"
