"""Rebuild wheeldoc/data/base_images.json: what well-known base images bring to a Dockerfile
(the ENV they set, the torch and CUDA they ship, whether nvcc is there, a pip constraint), per
tag pattern, each row with the published source it was read from.

    uv run python scripts/make_base_images.py

The rows are written out here from those sources (Dockerfiles and release notes, read with the
public-source tools); the script validates them and writes the table. What a row leaves out is
unknown, and the rules judge nothing from it. Tag patterns are regular expressions over the
image reference; named groups fill `{name}` in the values. Rows match in order.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "wheeldoc" / "data" / "base_images.json"
BUILDS = OUT.with_name("extension_builds.json")

# How a project's source build picks GPU architectures when TORCH_CUDA_ARCH_LIST is unset (WD409).
# "own-gencode": it passes its own -gencode flags, and torch.utils.cpp_extension then adds none;
# "own-default": its setup sets TORCH_CUDA_ARCH_LIST (or its own variable) when none is set;
# "no-cuda": the source build compiles no CUDA code; "torch-default": it leaves it to
# torch.utils.cpp_extension, which compiles for the visible GPUs (none during docker build);
# "forced-cuda-only": it compiles CUDA code only when it sees a GPU or FORCE_CUDA=1 (so during
# docker build only with FORCE_CUDA=1), and then as "torch-default".
EXTENSION_BUILDS = {
    "flash-attn": ("own-gencode", "Dao-AILab/flash-attention setup.py: add_cuda_gencodes(), archs from "
                   "FLASH_ATTN_CUDA_ARCHS (default 80;90;100;110;120)"),
    "flash-attention": ("own-gencode", "same as flash-attn (repository name)"),
    "mamba-ssm": ("own-gencode", "state-spaces/mamba setup.py: cc_flag -gencode list (sm_53 … sm_90, newer with "
                  "newer nvcc)"),
    "mamba": ("own-gencode", "same as mamba-ssm (repository name)"),
    "causal-conv1d": ("own-gencode", "Dao-AILab/causal-conv1d setup.py: cc_flag -gencode list"),
    "apex": ("own-default", "NVIDIA/apex setup.py: when torch sees no GPU and TORCH_CUDA_ARCH_LIST is unset, it "
             "sets TORCH_CUDA_ARCH_LIST itself ('6.0;6.1;6.2;7.0;7.5' and more by CUDA version)"),
    "transformerengine": ("own-default", "NVIDIA/TransformerEngine build_tools/utils.py cuda_archs(): NVTE_CUDA_ARCHS "
                          "defaults to 70;80;89;90(;100;120 with CUDA >= 12.8)"),
    "transformer-engine": ("own-default", "same as TransformerEngine"),
    "deepep": ("own-default", "deepseek-ai/DeepEP setup.py: TORCH_CUDA_ARCH_LIST defaults to 9.0"),
    "vllm": ("own-default", "vllm-project/vllm CMakeLists.txt: CUDA_SUPPORTED_ARCHS, intersected with torch's "
             "list (all supported when no GPU is seen)"),
    "megatron-lm": ("no-cuda", "NVIDIA/Megatron-LM: the pip install builds no CUDA extension (C++ helpers only)"),
    "mbridge": ("no-cuda", "ISEEKYAN/mbridge: pure Python"),
    "verl": ("no-cuda", "volcengine/verl: pure Python"),
    "flashinfer-python": ("no-cuda", "flashinfer-ai/flashinfer: the PyPI sdist/wheel compiles kernels at run time "
                          "(JIT) unless FLASHINFER_ENABLE_AOT=1"),
    "xformers": ("torch-default", "facebookresearch/xformers setup.py: CUDA extensions through "
                 "torch.utils.cpp_extension, TORCH_CUDA_ARCH_LIST or the visible GPUs"),
    "detectron2": ("forced-cuda-only", "facebookresearch/detectron2 setup.py (012c8986): CUDAExtension only when "
                   "`torch.cuda.is_available() and CUDA_HOME` or FORCE_CUDA=1, else a CPU-only CppExtension; the "
                   "CUDA build goes through torch.utils.cpp_extension (TORCH_CUDA_ARCH_LIST or the visible GPUs)"),
    "torch-scatter": ("forced-cuda-only", "rusty1s/pytorch_scatter setup.py (0a9f541c): `WITH_CUDA = "
                      "torch.cuda.is_available() and …CUDA_HOME`, `suffices = ['cpu', 'cuda'] if WITH_CUDA else "
                      "['cpu']`, CUDA also with FORCE_CUDA=1 / FORCE_ONLY_CUDA=1; the CUDA build goes through "
                      "torch.utils.cpp_extension"),
    "torch-sparse": ("forced-cuda-only", "rusty1s/pytorch_sparse setup.py (8f8398e5): the same switch as "
                     "torch-scatter (a visible GPU, or FORCE_CUDA=1 / FORCE_ONLY_CUDA=1)"),
}

# pytorch/pytorch:<torch>-cuda…: the Python of the image's environment, per torch release, from public files
# and threads that state it for that exact official tag (the image's build recipe, docker.Makefile, sets it
# with a default that changed over time, and its history is not readable here). "how" says how direct each
# statement is. A release not listed takes the Python of the listed releases on both sides when they agree
# (wheeldoc/data/base_images.py _python_by); else its Python is unknown.
PYTORCH_IMAGE_PYTHONS = {
    "1.13.1": {"python": "3.10", "source": "github.com/RaoFoundation/bittensor pull 1089 (2023-02-09)",
               "quote": "'this PR changes the base docker image to pytorch 1.13.1. This image has python 3.10.8'",
               "how": "first-hand statement"},
    "2.0.1": {"python": "3.10", "source": "yosoufe/vexComptetion host.Dockerfile @153ff08be3d17c604fcaf79b4d8bfd1d35245b96",
              "quote": "`FROM pytorch/pytorch:2.0.1-cuda11.7-cudnn8-devel` … `/opt/conda/lib/python3.10/site-packages/"
                       "cortano/interface.py`", "how": "a site-packages path used by a file built FROM that tag"},
    "2.1.0": {"python": "3.10", "source": "test-dan-run/nllb-with-ctranslate2 Dockerfile "
                                          "@eacfc34159fd501e25e6692512e16c9e962060a0",
              "quote": "`FROM pytorch/pytorch:${PYTORCH_VERSION}-cuda${CUDA_VERSION}-cudnn${CUDNN_VERSION}-runtime` "
                       "(PYTORCH_VERSION=2.1.0) … `/opt/conda/lib/python3.10/site-packages/torch/lib`",
              "how": "a site-packages path used by a file built FROM that tag"},
    "2.2.2": {"python": "3.10", "source": "zhangp365/comfyUI_docker Dockerfile @54f73803d452cc08a4c5e2c14aece2e781d492b8",
              "quote": "`FROM pytorch/pytorch:2.2.2-cuda11.8-cudnn8-runtime` … `/opt/conda/lib/python3.10/"
                       "site-packages/torch/lib/libnvrtc.so`", "how": "a site-packages path used by a file built FROM that tag"},
    "2.4.0": {"python": "3.11", "source": "Junyi-99/flask-celery-template Dockerfile "
                                          "@53c78d1963c870bf546fc8f2db587491d461e97b",
              "quote": "'The pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime uses python3.11.9'",
              "how": "first-hand statement"},
    "2.4.1": {"python": "3.11", "source": "ivrit-ai/runpod-serverless Dockerfile @c32da902a9029a23d195b1ddadc7654ed9a3b0a4",
              "quote": "`FROM pytorch/pytorch:2.4.1-cuda12.1-cudnn9-runtime` … `/opt/conda/lib/python3.11/site-packages/"
                       "nvidia/cudnn/lib`", "how": "a site-packages path used by a file built FROM that tag"},
    "2.5.1": {"python": "3.11", "source": "rlan/notebooks build/Dockerfile.pytorch2.5.1-cuda12.4 "
                                          "@059759b114ca0105150bb571e228fa26e3f1acb8 (and its issue 144)",
              "quote": "'Python 3.11.10 / pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime'",
              "how": "first-hand statement (an image description written from the built image)"},
    "2.6.0": {"python": "3.11", "source": "rlan/notebooks build/Dockerfile.pytorch2.6.0-cuda12.4 "
                                          "@f86182549a8cc108b5b2b7ee82dc17dd40a56c34",
              "quote": "'PyTorch 2.6.0 / Python 3.11.11 / pytorch/pytorch:2.6.0-cuda12.4-cudnn9-runtime'",
              "how": "first-hand statement (an image description written from the built image)"},
    "2.8.0": {"python": "3.11", "source": "rlan/notebooks build/Dockerfile.pytorch2.8.0-cuda12.6 "
                                          "@a4522aebab69a9c85e5333579f17ff622ff2a00c",
              "quote": "'Python 3.11.11 / pytorch/pytorch:2.8.0-cuda12.6-cudnn9-runtime'",
              "how": "first-hand statement (an image description written from the built image)"},
    "2.9.1": {"python": "3.11", "source": "rlan/notebooks build/Dockerfile.pytorch2.9.1-cuda13.0 "
                                          "@82ed04ea58a30e8156bb9502cc7cd76cce56c984",
              "quote": "'Python 3.11.14 / pytorch/pytorch:2.9.1-cuda13.0-cudnn9-runtime'",
              "how": "first-hand statement (an image description written from the built image)"},
    "2.11.0": {"python": "3.12", "source": "CaryHe-maker/InstaTargetingSystem Dockerfile "
                                           "@449cb8d595f7140f64da3455a90cf5d641204493",
               "quote": "`FROM pytorch/pytorch:2.11.0-cuda12.8-cudnn9-devel` … `assert sys.version_info[:2] == (3, 12)`",
               "how": "an assertion run while building FROM that tag"},
}

NGC_NOTES = "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-{YY}-{MM}.html"

# NGC PyTorch, per release (nvcr.io/nvidia/pytorch:YY.MM-py3): the torch build, the Python of the default
# environment, the CUDA toolkit, each read from NVIDIA's release notes for that release (the page itself where a
# stored copy was readable, else a public file that quotes it); `source` names where and `quote` gives the words.
# A field left None is not known (not published where it could be read): the rules then fall back to the row's
# date bound. Only releases with at least one cited fact are listed.
_NOTES = "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/"
NGC_RELEASES = {
    "20.02": {
        "torch": "1.4.0a0+a5b4d78", "python": "3.6", "cuda": "10.2.89",
        "source": _NOTES + "rel_20-02.html",
        "quote": "'PyTorch container image version 20.02 is based on PyTorch 1.4.0a0+a5b4d78'; 'Release 20.02 is "
                 "based on NVIDIA CUDA 10.2.89'; 'pre-built and installed in Conda default environment "
                 "(/opt/conda/lib/python3.6/site-packages/torch/)'",
    },
    "20.06": {
        "torch": None, "python": "3.6", "cuda": "11.0.167",
        "source": _NOTES + "rel_20-06.html",
        "quote": "'Release 20.06 is based on NVIDIA CUDA 11.0.167'; 'pre-built and installed in Conda default "
                 "environment (/opt/conda/lib/python3.6/site-packages/torch/)' (the torch version was not in the "
                 "readable part of the page)",
    },
    "20.12": {
        "torch": "1.8.0a0+1606899", "python": "3.8", "cuda": "11.1.1",
        "source": _NOTES + "rel_20-12.html, as copied verbatim in github.com/taofuyu/detectron2 DOCKER_INFO.md",
        "quote": "'PyTorch container image version 20.12 is based on 1.8.0a0+1606899'; 'The container also includes "
                 "the following: Ubuntu 20.04 including Python 3.8 environment'; 'Release 20.12 is based on NVIDIA "
                 "CUDA 11.1.1' (the same page still says 'Conda default environment (/opt/conda/lib/python3.6/...)', "
                 "a sentence carried over from older releases; github.com/cainmagi/Dockerfiles README, an image built "
                 "on nvcr.io/nvidia/pytorch:20.12-py3: 'PyTorch 1.8.0a' and 'Python 3.8.5')",
    },
    "23.03": {
        "torch": "2.0.0a0+1767026", "python": None, "cuda": "12.1.0",
        "source": _NOTES + "rel-23-03.html, as quoted in github.com/MyrtleSoftware/caiman-asr training/Dockerfile "
                  "(torch) and in the MONAI Toolkit 1.1 documentation (github.com/zephyrie/test-docs-source "
                  "requirements.rst, CUDA)",
        "quote": "caiman-asr: 'ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:23.03-py3 ... # pytorch version taken from "
                 "here: # https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-23-03.html"
                 "#rel-23-03 ENV PYTORCH_VERSION=2.0.0a0+1767026'; MONAI Toolkit: 'The MONAI Toolkit 1.1 is based on "
                 "the NVIDIA PyTorch container release 23.03. Release 23.03 is based on CUDA 12.1.0'; the Python of "
                 "23.03 was not found in a readable copy: unknown",
    },
    "23.04": {
        "torch": "2.1.0a0+fe05266f", "python": "3.8", "cuda": "12.1.0",
        "source": "github.com/NVIDIA/Megatron-LM tools/retro/README.md (4549b3dd3aaa7ba62295303e67a893b38c4dd831), "
                  "which lists the contents of " + _NOTES + "rel-23-04.html",
        "quote": "'The docker image is based on `nvcr.io/nvidia/pytorch:23.04-py3`. ... If docker is not available, we "
                 "recommend start from a clean conda environment, including: - Python 3.8 - NVIDIA CUDA 12.1.0 ... "
                 "- PyTorch 2.1.0a0+fe05266f'",
    },
    "24.01": {
        "torch": None, "python": "3.10", "cuda": "12.3.2",
        "source": "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-01.html, as quoted "
                  "in a public Dockerfile (search-index file id 24567752404, CUDA) and named in a public Dockerfile"
                  " header (search-index file id 61095583162, Python); the torch build is not in these quotes",
        "quote": "'# PyTorch=2.2.0, cuda=12.3.2 # Ref: "
                 "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-01.html#rel-24-01';"
                 " '# Nocturne Simulator — PyTorch Release 24.01 (Ubuntu 22.04 / Python 3.10) FROM "
                 "nvcr.io/nvidia/pytorch:24.01-py3'",
    },
    "24.04": {
        "torch": None, "python": "3.10", "cuda": "12.4",
        "source": "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-04.html, its "
                  "'Contents of the PyTorch container' section as copied verbatim in a public README (search-index "
                  "file id 39803068600); the copy gives CUDA without a patch level and no torch build",
        "quote": "'Base Image nvcr.io/nvidia/pytorch:24.04-py3 ... It is prebuilt and installed in the default "
                 "Python environment (/usr/local/lib/python3.10/dist-packages/torch) in the container image. The "
                 "container also includes the following: ‣ Ubuntu 22.04 including Python 3.10 ‣ NVIDIA CUDA 12.4 ‣"
                 " NVIDIA cuBLAS 12.4.5.8'",
    },
    "24.05": {
        "torch": None, "python": "3.10", "cuda": "12.4.1",
        "source": "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-05.html, as copied "
                  "in a public benchmark script (search-index file id 1451921646); no torch build in the copy",
        "quote": "'# https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-05.html # Ubuntu"
                 " 22.04 including Python 3.10 # NVIDIA CUDA 12.4.1 # NVIDIA cuBLAS 12.4.5.8 # NVIDIA cuDNN "
                 "9.1.0.70'",
    },
    "24.10": {
        "torch": None, "python": "3.10", "cuda": "12.6.2",
        "source": "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-10.html, as quoted "
                  "in a public yolov9 QAT README (search-index file id 16339551928); no torch build in the quote",
        "quote": "'NVIDIA PyTorch image (nvcr.io/nvidia/pytorch:24.10-py3) Release 24.10 is based Ubuntu 22.04 "
                 "including Python 3.10 CUDA 12.6.2, which requires NVIDIA Driver release 560 or later ... "
                 "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-10.html'",
    },
    "25.12": {
        "torch": "2.10.0a0+b4e4ee81d3", "python": "3.12", "cuda": "13.1.0",
        "source": _NOTES + "rel-25-12.html",
        "quote": "'PyTorch container image version 25.12 is based on 2.10.0a0+b4e4ee81d3'; 'Release 25.12 is based on "
                 "CUDA 13.1.0'; 'prebuilt and installed in the default Python environment "
                 "(/usr/local/lib/python3.12/dist-packages/torch)'",
    },
}
ROWS = [
    {
        "name": "nvidia/cuda devel",
        "pattern": r"^(?:docker\.io/)?nvidia/cuda:(?P<cuda>\d+\.\d+(?:\.\d+)?)-(?:cudnn\d*-)?devel-",
        "env": {"CUDA_VERSION": "{cuda}", "NVIDIA_REQUIRE_CUDA": None},
        "cuda": "{cuda}", "nvcc": True, "torch": None,
        "source": "gitlab.com/nvidia/container-images/cuda dist/<ver>/<os>/base/Dockerfile (ENV CUDA_VERSION, "
                  "NVIDIA_REQUIRE_CUDA) and devel/Dockerfile (installs cuda-nvcc); the base images ship no Python "
                  "packages",
    },
    {
        "name": "nvidia/cuda runtime/base",
        "pattern": r"^(?:docker\.io/)?nvidia/cuda:(?P<cuda>\d+\.\d+(?:\.\d+)?)-(?:cudnn\d*-)?(?:runtime|base)-",
        "env": {"CUDA_VERSION": "{cuda}", "NVIDIA_REQUIRE_CUDA": None},
        "cuda": "{cuda}", "nvcc": False, "torch": None,
        "source": "gitlab.com/nvidia/container-images/cuda dist/<ver>/<os>/base/Dockerfile (ENV CUDA_VERSION); "
                  "runtime adds libraries, no nvcc",
    },
    {
        "name": "pytorch/pytorch",
        "pattern": r"^(?:docker\.io/)?pytorch/pytorch:(?P<torch>\d+\.\d+\.\d+)-cuda(?P<cuda>\d+\.\d+)-cudnn\d+-"
                   r"(?P<flavor>runtime|devel)$",
        "env": {}, "cuda": "{cuda}", "nvcc": "{flavor}==devel",
        "torch": {"version": "{torch}", "prerelease": False, "installer": "conda/pip in /opt/conda"},
        "ships": ["torchvision", "torchaudio"],
        "python_by": {"group": "torch", "values": PYTORCH_IMAGE_PYTHONS},
        "source": "pytorch/pytorch Dockerfile and .github/workflows/docker-release.yml: the image installs the "
                  "released torch {torch} built for CUDA {cuda}; the devel flavor is built on nvidia/cuda devel; "
                  "the conda-installs stage runs `pip install … torch torchvision torchaudio` (Dockerfile at "
                  "01343dcd3e6c849a177125b5f500ffd222305ec8)",
    },
    {
        # runpod/containers official-templates/pytorch/docker-bake.hcl, tags `X.Y.Z-pyA.B-cudaC.D.E-[cudnn-]devel-…`
        # (2023-07 .. 2025-04): TORCH was `torch==X.Y.Z torchvision torchaudio` from the cuCD index or PyPI in most
        # commits, but `torch torchvision torchaudio --index-url …/cuCD` (the newest of that index, nightly/cu128
        # for the 2.8.0 tag) in others; the tags were rebuilt, so the torch is of series X.Y or a later one that
        # the cuCD index carries. 1.x tags are left out (some built without a TORCH argument).
        "name": "runpod/pytorch (X.Y.Z-py…-cuda… tags)",
        "pattern": r"^(?:docker\.io/)?runpod/pytorch:(?P<torch>2\.\d+\.\d+)-py(?P<py>\d+\.\d+)-cuda:?"
                   r"(?P<cmaj>\d+)\.(?P<cmin>\d)(?:\.\d+)?-(?:cudnn-)?devel(?:-ubuntu\d+\.\d+)?$",
        "env": {}, "cuda": "{cmaj}.{cmin}", "nvcc": True,
        # highest_series: these tags were last defined at 9a7400d9 (2025-04-28) and replaced by the
        # cuNNNN-torchNNN format at 8a61ee0f (2025-06-09); the newest torch then was 2.7.0 (released
        # 2025-04-23), the newest pre-releases 2.8.0 nightlies: no build of these tags holds a later series
        "torch": {"version": "{torch}", "exact": False, "index_variant": "cu{cmaj}{cmin}", "highest_series": "2.8",
                  "prerelease": None, "installer": "pip into the system Python"},
        "ships": ["torchvision", "torchaudio"],
        "source": "runpod/containers official-templates/pytorch/docker-bake.hcl (history 16f69b49..9a7400d9, e.g. "
                  "2397908f: tag 2.4.0-py3.11-cuda12.4.1-devel-ubuntu22.04 <- TORCH `torch==2.4.0 torchvision==0.19.0 "
                  "torchaudio==2.4.0 --index-url https://download.pytorch.org/whl/cu124`; 3eefd145 and c43dc901: the "
                  "same tag <- `torch torchvision torchaudio --index-url …/cu124`; 9a7400d9: 2.8.0-py3.11-cuda12.8.1-"
                  "cudnn-devel-ubuntu22.04 <- `… --index-url …/nightly/cu128`) and its Dockerfile (`pip install "
                  "--upgrade ${TORCH}` on BASE_IMAGE nvidia/cuda:<cuda>-devel): a torch of series {torch} or later "
                  "from the cu{cmaj}{cmin} index, with torchvision and torchaudio; these tags were last defined at "
                  "9a7400d9 (2025-04-28) and replaced at 8a61ee0f (2025-06-09), when torch 2.7.0 (2025-04-23) was the "
                  "newest release and 2.8.0 nightlies the newest pre-releases: series 2.8 at most",
    },
    {
        # the 2025-06+ tags: `<release>[-dev]-cu<CUDA digits>-torch<torch digits>-ubuntu<yymm>` and the older
        # `<release>-ubuntu<yymm>-cu<…>-torch<…>` order; TORCH = torch==<torch> torchvision torchaudio==<torch>.
        "name": "runpod/pytorch (cuNNNN-torchNNN tags)",
        "pattern": r"^(?:docker\.io/)?runpod/pytorch:\d+\.\d+\.\d+(?:-[a-z]+)?-(?:ubuntu\d{4}-)?cu(?P<cmaj>1\d)"
                   r"(?P<cmin>\d)\d-torch(?P<tmaj>\d)(?P<tmin>\d)(?P<tpat>\d)(?:-ubuntu\d{4})?$",
        "env": {}, "cuda": "{cmaj}.{cmin}", "nvcc": None,
        "torch": {"version": "{tmaj}.{tmin}.{tpat}", "prerelease": False, "installer": "pip into the system Python"},
        "ships": ["torchvision", "torchaudio"],
        "source": "runpod/containers official-templates/pytorch/docker-bake.hcl (8a61ee0f..2e065112): tag "
                  "`${RELEASE_VERSION}${RELEASE_SUFFIX}-cu${cuda_code}-torch${torch_code}-${ubuntu_name}` with "
                  "torch_code = the torch version without dots and TORCH = `torch==${torch} torchvision==… "
                  "torchaudio==${torch}` from the cu${WHEEL_SRC} index; only three-digit torch codes are read "
                  "(2.10.0 would be ambiguous)",
    },
    {
        "name": "NGC PyTorch",
        "pattern": r"^nvcr\.io/nvidia/pytorch:(?P<YY>\d{2})\.(?P<MM>\d{2})-py3",
        # TORCH_CUDA_ARCH_LIST: set in the image (value not published in the release notes): SHI-Labs/NATTEN
        # issue #28 (maintainer, 2023-04-20): official PyPI/conda builds leave it unset, "in the NGC builds
        # however" the image defines it, so extension builds target that list instead of the visible GPUs.
        "env": {"TORCH_CUDA_ARCH_LIST": None}, "cuda": None, "nvcc": True,
        "ships": None,
        "torch": {"version": None, "prerelease": True, "installer": "source build into the system Python"},
        "pip_constraint": {"from": "25.03", "path": "/etc/pip/constraint.txt", "pins_torch": True},
        "releases": NGC_RELEASES,
        "source": NGC_NOTES + ": 'PyTorch container image version YY.MM is based on X.Ya0+<git>' (a pre-release "
                  "build of torch, e.g. 25.12: 2.10.0a0+b4e4ee81d3, CUDA 13.1.0); 'Starting from the 25.03 release, "
                  "the PyTorch container has implemented a pip constraints file at /etc/pip/constraint.txt. This "
                  "file specifies the versions of all python packages used during the PyTorch container creation'; "
                  "TORCH_CUDA_ARCH_LIST: set by the image, its value not published (github.com/SHI-Labs/NATTEN/"
                  "issues/28: NGC builds define it, PyPI/conda builds do not); the other packages it ships: not listed",
    },
    {
        "name": "vllm/vllm-openai",
        "pattern": r"^(?:docker\.io/)?vllm/vllm-openai:v(?P<vllm>\d+\.\d+\.\d+(?:\.post\d+)?)$",
        "env": {}, "cuda": None, "nvcc": None,
        "torch": {"version": "pin-of:vllm=={vllm}", "prerelease": False, "installer": "pip/uv into the system Python"},
        "ships": ["vllm"],
        "source": "vllm-project/vllm docker/Dockerfile: the image installs the vllm {vllm} wheel with its "
                  "requirements, so its torch is the one vllm {vllm} pins (wheeldoc/data/torch_pins.json)",
    },
    {
        "name": "lmsysorg/sglang",
        "pattern": r"^(?:docker\.io/)?lmsysorg/sglang:v(?P<sglang>\d+\.\d+\.\d+(?:\.post\d+)?)$",
        "env": {}, "cuda": None, "nvcc": True,
        "torch": {"version": "pin-of:sglang=={sglang}", "prerelease": False, "installer": "pip into the system Python"},
        "ships": ["sglang"],
        "source": "sgl-project/sglang docker/Dockerfile: installs sglang[all] {sglang} (its srt extra pins torch, "
                  "wheeldoc/data/torch_pins.json) on an nvidia/cuda devel image",
    },
    {
        "name": "python",
        "pattern": r"^(?:docker\.io/)?(?:library/)?python:(?P<py>\d+\.\d+(?:\.\d+)?)",
        "env": {"PYTHON_VERSION": None}, "cuda": None, "nvcc": False, "torch": None, "python": "{py}",
        "source": "docker-library/python <ver>/<variant>/Dockerfile: ENV PYTHON_VERSION (the full version), no "
                  "third-party packages",
    },
    {
        "name": "ubuntu / debian",
        "pattern": r"^(?:docker\.io/)?(?:library/)?(?:ubuntu|debian):",
        "env": {}, "cuda": None, "nvcc": False, "torch": None,
        "source": "docker-library official images: no Python packages",
    },
]


def check_release(tag: str, rel: dict) -> None:
    """A per-release entry: a YY.MM tag, versions that parse (torch as PEP 440, Python X.Y, CUDA X.Y[.Z]), at
    least one of them known, and where it was read with the words."""
    assert re.fullmatch(r"\d{2}\.\d{2}", tag), tag
    assert set(rel) == {"torch", "python", "cuda", "source", "quote"}, (tag, rel)
    assert rel["source"] and rel["quote"], tag
    assert any(rel[k] for k in ("torch", "python", "cuda")), tag
    if rel["torch"]:
        from packaging.version import Version

        assert Version(rel["torch"]).is_prerelease, (tag, rel["torch"])  # NGC builds are X.Ya0+<git>
        assert rel["torch"] in rel["quote"], tag
    if rel["python"]:
        assert re.fullmatch(r"3\.\d{1,2}", rel["python"]), tag
    if rel["cuda"]:
        assert re.fullmatch(r"\d{1,2}\.\d{1,2}(?:\.\d+)?", rel["cuda"]) and rel["cuda"] in rel["quote"], tag


def main() -> None:
    for row in ROWS:
        re.compile(row["pattern"])
        assert row["source"], row["name"]
        assert set(row) <= {"name", "pattern", "env", "cuda", "nvcc", "torch", "pip_constraint", "ships", "source",
                            "releases", "python", "python_by"}, row
        for tag, rel in (row.get("releases") or {}).items():
            check_release(tag, rel)
        if "python_by" in row:
            assert re.compile(row["pattern"]).groupindex.get(row["python_by"]["group"]), row["name"]
            for ver, rel in row["python_by"]["values"].items():
                assert re.fullmatch(r"\d+\.\d+\.\d+", ver) and set(rel) == {"python", "source", "quote", "how"}, ver
                assert re.fullmatch(r"3\.\d{1,2}", rel["python"]) and rel["source"] and rel["quote"], ver
        assert row["torch"] is None or set(row["torch"]) <= {"version", "prerelease", "installer", "exact",
                                                             "index_variant", "highest_series"}, row
    OUT.write_text(json.dumps({"schema": 1, "_comment": "base images: ENV, torch, CUDA, nvcc per tag pattern; "
                               "rebuilt by scripts/make_base_images.py; a field left null is unknown",
                               "rows": ROWS}, indent=1) + "\n")
    BUILDS.write_text(json.dumps({"schema": 1, "_comment": "how a project's source build picks GPU architectures "
                                  "without TORCH_CUDA_ARCH_LIST (WD409); rebuilt by scripts/make_base_images.py",
                                  "projects": {k: {"arch_source": v[0], "source": v[1]}
                                               for k, v in sorted(EXTENSION_BUILDS.items())}}, indent=1) + "\n")


if __name__ == "__main__":
    main()
