"""False positives found by the real-world precision scan (docs/real-world-precision-scan.md).

Each xfail case is a minimal reduction (written here, not copied) of a finding on a public
Dockerfile that a reader of the file and its sources judged wrong; the docstring says why. They
are strict: the day the rule stops crying wolf they pass, and the marker has to go. Each has a
control beside it that must keep its finding, so the fix cannot be "never say it"."""

from __future__ import annotations

import pytest


def loud(findings: list[dict], rule: str) -> list[dict]:
    return [f for f in findings if f["rule"] == rule and f["severity"] in ("warning", "error")]


# -- WD401: an arch variable "missing" while the stage already has TORCH_CUDA_ARCH_LIST ----------

ARCH_IN_EFFECT = """
    ARG TORCH_CUDA_ARCH_LIST="12.0a"
    ARG CMAKE_CUDA_ARCHITECTURES="120a"
    FROM nvidia/cuda:13.0.1-cudnn-devel-ubuntu24.04 AS deps
    ARG TORCH_CUDA_ARCH_LIST
    ENV TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST}
    RUN pip install torch==2.11.0 --index-url https://download.pytorch.org/whl/cu130
    FROM deps AS build
    RUN git clone https://github.com/vllm-project/vllm.git && cd vllm && pip install --no-build-isolation --no-deps -e .
"""


@pytest.mark.xfail(strict=True, reason=(
    "WD401 asks every build variable of tool_env.json on its own: a global ARG "
    "CMAKE_CUDA_ARCHITECTURES not redeclared is an error although the stage has "
    "TORCH_CUDA_ARCH_LIST through FROM deps (seen on voipmonitor/blackwell-llm-docker)"))
def test_wd401_cmake_arch_variable_is_moot_when_torch_arch_list_is_in_effect(check) -> None:
    """The build stage inherits ENV TORCH_CUDA_ARCH_LIST=12.0a from 'deps'; the unused global ARG
    CMAKE_CUDA_ARCHITECTURES names the same GPU. The build has its architecture list: the
    missing second spelling changes nothing that torch's cpp_extension or vLLM's CMake reads."""
    assert loud(check(ARCH_IN_EFFECT), "WD401") == []


def test_wd401_control_no_arch_list_at_all_in_the_build_stage(check) -> None:
    """Control: with TORCH_CUDA_ARCH_LIST only a global ARG too, the build stage has no list."""
    text = ARCH_IN_EFFECT.replace("    ENV TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST}\n", "").replace(
        "    ARG TORCH_CUDA_ARCH_LIST\n", "")
    assert loud(check(text), "WD401")


# -- WD409: a base image wheeldoc does not know may set TORCH_CUDA_ARCH_LIST ---------------------

UNKNOWN_BASE = """
    FROM my-org/jetson-torch:r35.4.1
    RUN FORCE_CUDA=1 pip install "git+https://github.com/facebookresearch/pytorch3d.git@stable"
"""


@pytest.mark.xfail(strict=True, reason=(
    "WD409 treats a base image missing from the base-image table as setting no "
    "TORCH_CUDA_ARCH_LIST and says 'confidence high'; WD403 on the same line says the base "
    "is unknown (seen on OPR-Project/OpenPlaceRecognition, a jetson-containers pytorch base)"))
def test_wd409_unknown_base_image_is_not_judged_at_warning(check) -> None:
    """The real base is built by jetson-containers' pytorch package, whose Dockerfile sets
    ENV TORCH_CUDA_ARCH_LIST for the Jetson GPU. A base the table does not know may set the list;
    the finding should say the base is unknown (info), not that the list is missing."""
    assert loud(check(UNKNOWN_BASE), "WD409") == []


def test_wd409_control_known_base_without_a_list_still_warns(check) -> None:
    """Control: python:3.11 is known to set no arch list; the same build there keeps its warning."""
    text = """
        FROM python:3.11
        RUN pip install torch==2.5.1
        RUN FORCE_CUDA=1 pip install "git+https://github.com/facebookresearch/pytorch3d.git@stable"
    """
    assert loud(check(text), "WD409")
