"""False positives found by the real-world precision scan (docs/real-world-precision-scan.md).

Each case is a minimal reduction (written here, not copied) of a finding on a public
Dockerfile that a reader of the file and its sources judged wrong; the docstring says why. They
were strict xfails until the rule stopped crying wolf (fixed the same day); each has a control beside
it that must keep its finding, so the fix cannot be "never say it"."""

from __future__ import annotations


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


# -- WD401: another project's arch variable asked of a vLLM build -------------------------------

OTHER_PROJECTS_VARIABLE = """
    FROM nvidia/cuda:13.0.1-devel-ubuntu24.04 AS base
    ENV TORCH_CUDA_ARCH_LIST=11.0a
    RUN pip install torch
    FROM base AS fi
    ENV FLASHINFER_CUDA_ARCH_LIST=11.0a
    RUN git clone https://github.com/flashinfer-ai/flashinfer.git && cd flashinfer && pip install --no-build-isolation .
    FROM base AS vllm
    RUN git clone https://github.com/vllm-project/vllm.git && cd vllm && pip install --no-build-isolation .
"""


def test_wd401_flashinfer_arch_variable_is_not_asked_of_a_vllm_build(check) -> None:
    """Stage 'vllm' compiles vLLM with TORCH_CUDA_ARCH_LIST=11.0a from 'base'; FlashInfer is built
    in stage 'fi'. vLLM's build does not read FLASHINFER_CUDA_ARCH_LIST."""
    assert loud(check(OTHER_PROJECTS_VARIABLE), "WD401") == []


# -- WD401: wheel files listed by a command substitution compile nothing ------------------------

WHEELS_BY_SUBSTITUTION = """
    FROM nvidia/cuda:13.0.1-devel-ubuntu24.04 AS builder
    ENV TORCH_CUDA_ARCH_LIST=11.0a
    RUN pip install torch && pip wheel --no-build-isolation --no-deps -w /wheels git+https://github.com/vllm-project/vllm.git
    FROM nvidia/cuda:13.0.1-devel-ubuntu24.04 AS runner
    RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels uv pip install --system $(ls /wheels/*.whl)
"""


def test_wd401_wheels_listed_by_command_substitution_compile_nothing(check) -> None:
    """`ls /wheels/*.whl` prints wheel files: installing them compiles nothing, whatever the stage's
    environment."""
    assert loud(check(WHEELS_BY_SUBSTITUTION), "WD401") == []


def test_wd401_control_literal_wheel_glob_and_a_real_source_build(check) -> None:
    """Controls: the literal glob is left alone today; a vLLM source build in the runner, which does
    read TORCH_CUDA_ARCH_LIST, keeps its error."""
    assert loud(check(WHEELS_BY_SUBSTITUTION.replace("$(ls /wheels/*.whl)", "/wheels/*.whl")), "WD401") == []
    source = WHEELS_BY_SUBSTITUTION.replace(
        "RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels uv pip install --system $(ls /wheels/*.whl)",
        "RUN pip install torch && pip install --no-build-isolation git+https://github.com/vllm-project/vllm.git")
    assert loud(check(source), "WD401")


# -- WD409: apex cloned by an earlier RUN is not recognised ------------------------------------

APEX_TWO_RUNS = """
    FROM nvidia/cuda:12.8.1-devel-ubuntu22.04
    RUN pip install torch==2.7.1
    RUN git clone https://github.com/NVIDIA/apex.git
    RUN cd apex && pip install -v --global-option="--cpp_ext" --global-option="--cuda_ext" ./
"""


def test_wd409_apex_cloned_in_an_earlier_run_keeps_its_own_arch_list(check) -> None:
    """NVIDIA/apex setup.py: with no GPU visible and TORCH_CUDA_ARCH_LIST unset it sets the list
    itself (7.5 ... 12.0 with CUDA 12.8); written in one RUN, wheeldoc already leaves it alone."""
    assert loud(check(APEX_TWO_RUNS), "WD409") == []


def test_wd409_control_apex_in_one_run_and_pytorch3d_in_two(check) -> None:
    """Controls: apex cloned and built in one RUN is left alone today; pytorch3d (no default list)
    cloned in one RUN and built with FORCE_CUDA=1 in the next keeps its warning."""
    one_run = APEX_TWO_RUNS.replace("    RUN git clone https://github.com/NVIDIA/apex.git\n    RUN cd apex",
                                    "    RUN git clone https://github.com/NVIDIA/apex.git && cd apex")
    assert loud(check(one_run), "WD409") == []
    p3d = """
        FROM nvidia/cuda:12.8.1-devel-ubuntu22.04
        RUN pip install torch==2.7.1
        RUN git clone https://github.com/facebookresearch/pytorch3d.git
        RUN cd pytorch3d && FORCE_CUDA=1 pip install --no-build-isolation .
    """
    assert loud(check(p3d), "WD409")


# -- WD409: USE_CUDA=1 does not make every source tree a CUDA build -----------------------------

TORCHSERVE = """
    FROM nvidia/cuda:12.1.0-devel-ubuntu22.04
    RUN pip install torch==2.5.1
    RUN git clone https://github.com/pytorch/serve.git && cd serve && export USE_CUDA=1 && python -m pip install .
"""


def test_wd409_use_cuda_does_not_make_torchserve_a_cuda_build(check) -> None:
    """pytorch/serve setup.py has no ext_modules and never reads USE_CUDA."""
    assert loud(check(TORCHSERVE), "WD409") == []


def test_wd409_control_force_cuda_pytorch3d_clone(check) -> None:
    """Control: pytorch3d compiles CUDA under FORCE_CUDA=1 and keeps its warning."""
    text = TORCHSERVE.replace("pytorch/serve.git && cd serve && export USE_CUDA=1",
                              "facebookresearch/pytorch3d.git && cd pytorch3d && export FORCE_CUDA=1")
    assert loud(check(text), "WD409")


# -- found when the scan ran again after the fixes ------------------------------------------------

def test_wd401_a_filtered_wheel_listing_compiles_nothing_and_flashinfer_is_asked_of_flashinfer_only(check) -> None:
    """`$(ls /wheels/*.whl | grep -v flashinfer_cubin)` lists wheels; a `uv build .` of a tree wheeldoc
    cannot name is not asked FlashInfer's own variable (pastoriomarco/NemoClaw-Thor, second run)."""
    text = """
        FROM nvidia/cuda:13.0.1-devel-ubuntu24.04 AS fi
        ARG FLASHINFER_CUDA_ARCH_LIST=11.0a
        RUN pip install torch
        FROM nvidia/cuda:13.0.1-devel-ubuntu24.04 AS build
        ENV TORCH_CUDA_ARCH_LIST=11.0a
        RUN pip install torch && uv build --no-build-isolation --wheel . --out-dir=/wheels
        FROM nvidia/cuda:13.0.1-devel-ubuntu24.04
        RUN --mount=type=bind,from=build,source=/wheels,target=/wheels uv pip install --system $(ls /wheels/*.whl | grep -v cubin)
    """
    assert loud(check(text), "WD401") == []


def test_wd405_a_pure_python_editable_install_compiles_nothing(check) -> None:
    """`pip install -e .` of a project whose setup.py and pyproject.toml name no extension: no nvcc
    runs, whatever torch is there (mwaykole/vdiff, second run); with a CUDAExtension it is judged."""
    text = """
        FROM nvidia/cuda:12.1.0-devel-ubuntu22.04
        RUN pip install torch==2.14.1
        WORKDIR /build
        COPY . .
        RUN pip install -e .
    """
    pure = {"setup.py": "from setuptools import setup, find_packages\nsetup(packages=find_packages())\n",
            "pyproject.toml": "[project]\nname = 'x'\nversion = '1'\n"}
    assert loud(check(text, files=pure), "WD405") == []
    native = {**pure, "setup.py": "from torch.utils.cpp_extension import CUDAExtension\n"}
    assert loud(check(text, files=native), "WD405")


def test_wd409_a_pure_python_local_project_needs_no_arch_list(check) -> None:
    """A CUDA switch set for a local project whose setup.py and pyproject.toml name no extension:
    nothing is compiled, no architecture list is needed; with a CUDAExtension it is judged."""
    text = """
        FROM nvidia/cuda:12.1.0-devel-ubuntu22.04
        RUN pip install torch==2.5.1
        WORKDIR /app
        COPY . .
        RUN FORCE_CUDA=1 pip install -e .
    """
    pure = {"setup.py": "from setuptools import setup\nsetup(name='x')\n", "pyproject.toml": "[project]\nname = 'x'\n"}
    assert loud(check(text, files=pure), "WD409") == []
    native = {**pure, "setup.py": "from torch.utils.cpp_extension import CUDAExtension\n"}
    assert loud(check(text, files=native), "WD409")
