"""Rebuild wheeldoc/data/base_images.json: what well-known base images bring to a Dockerfile
(the ENV they set, the torch and CUDA they ship, whether nvcc is there, a pip constraint), per
tag pattern, each row with the published source it was read from.

    uv run python scripts/make_base_images.py

The rows are written out here from those sources (Dockerfiles and release notes, read with the
public-source tools); the script validates them and writes the table. What a row leaves out is
unknown, and the rules judge nothing from it. Tag patterns are regular expressions over the
image reference; named groups fill `{name}` in the values. Rows match in order. A row with
`"env_complete": False` lists the ENV known to be set, not all of the image's ENV: a variable it does not
name may still be set (WD409 then does not call an architecture list missing).
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
# The torch a source build of the repository's default branch asks for in its build environment
# ([build-system] requires of its pyproject.toml, read at the commit named): an isolated build
# (no --no-build-isolation) installs the newest torch that admits, whatever torch the image has; with
# `forced_by`, setup.py compiles only when that variable is TRUE (else it fetches a prebuilt wheel).
_CONV1D_BUILD = {"spec": "", "source": "Dao-AILab/causal-conv1d@0d2252d161f25f7907bbd05985c08ab98d255874 "
                 "pyproject.toml: [build-system] requires = [\"setuptools\", \"wheel\", \"torch\"]; setup.py: "
                 "downloads a prebuilt wheel from the GitHub release unless CAUSAL_CONV1D_FORCE_BUILD=TRUE",
                 "forced_by": "CAUSAL_CONV1D_FORCE_BUILD"}
_MAMBA_BUILD = {"spec": "", "source": "state-spaces/mamba@e9594ce1c732d97440f0332fdc43170a2294dbfa pyproject.toml: "
                "[build-system] requires = [\"setuptools>=61.0.0\", \"torch\", \"wheel\", \"packaging\", "
                "\"ninja\"] (for the default branch; the PyPI sdists are not read); setup.py: downloads a prebuilt "
                "wheel from the GitHub release unless MAMBA_FORCE_BUILD=TRUE", "forced_by": "MAMBA_FORCE_BUILD"}
EXTENSION_BUILDS = {
    "flash-attn": ("own-gencode", "Dao-AILab/flash-attention setup.py: add_cuda_gencodes(), archs from "
                   "FLASH_ATTN_CUDA_ARCHS (default 80;90;100;110;120)"),
    "flash-attention": ("own-gencode", "same as flash-attn (repository name)"),
    "mamba-ssm": ("own-gencode", "state-spaces/mamba setup.py: cc_flag -gencode list (sm_53 … sm_90, newer with "
                  "newer nvcc)", _MAMBA_BUILD),
    "mamba": ("own-gencode", "same as mamba-ssm (repository name)", _MAMBA_BUILD),
    "causal-conv1d": ("own-gencode", "Dao-AILab/causal-conv1d setup.py: cc_flag -gencode list", _CONV1D_BUILD),
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
    "torchserve": ("no-cuda", "pytorch/serve setup.py (06c9a9766bafddb674325d99e348aaf4beceadb0): Python packages and "
                   "a Java frontend built with gradle; no ext_modules, USE_CUDA not read"),
    "serve": ("no-cuda", "same as torchserve (repository name)"),
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
# stored copy was readable, else a public file that quotes it), from NVIDIA's Jetson compatibility table (torch), or
# from a public file that states it for that exact tag; `source` names where, `quote` gives the words and `how` says,
# per field, which of these it is (NGC_HOW below). A field left None is not known (not published where it could be
# read): the rules then fall back to the row's date bound. Only releases with at least one cited fact are listed.
_NOTES = "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/"
# How each NGC fact was read (`how`, per field): "release-notes": a stored copy of NVIDIA's release-notes page
# itself; "release-notes-copy": a public file that copies, quotes, translates or tabulates that page and names it;
# "jetson-matrix": NVIDIA's own "PyTorch for Jetson Platform" release notes, whose Table 1 lists the PyTorch build
# of each framework container release (the same containers, YY.MM; its values agree with the x86 release notes
# wherever both were readable: 24.02-24.10 and 25.12); "tag-statement": a public file that names the exact tag
# nvcr.io/nvidia/pytorch:YY.MM-py3 and states the value for it (a project's base-image notes, a run of the image, an
# image built FROM it), the counterpart of "an assertion run while building FROM that tag" above.
NGC_HOW = ("release-notes", "release-notes-copy", "jetson-matrix", "tag-statement")
JETSON_NOTES = ("https://docs.nvidia.com/deeplearning/frameworks/install-pytorch-jetson-platform-release-notes/"
                "pytorch-jetson-rel.html")
_JETSON = (JETSON_NOTES + " (NVIDIA, PyTorch for Jetson Platform Release Notes, SWE-SWDOCTFX-001-RELN_v001, April "
           "2026), Table 1 'PyTorch compatibility with NVIDIA containers and JetPack', column 'NVIDIA Framework "
           "Container', as transcribed in a public file (search-index file id 52208439512)")
def check_release(tag: str, rel: dict) -> None:
    """A per-release entry: a YY.MM tag, versions that parse (torch as PEP 440, Python X.Y, CUDA X.Y[.Z[.B]]), at
    least one of them known, where it was read with the words, and how each known field was read: from the release
    notes (the source names a release-notes page), from NVIDIA's Jetson table (the source names that page, the quote
    holds the table row with this release and this torch), or from a file about this exact tag (the quote names
    nvcr.io/nvidia/pytorch:<tag>-py3)."""
    assert re.fullmatch(r"\d{2}\.\d{2}", tag), tag
    assert set(rel) == {"torch", "python", "cuda", "source", "quote", "how"}, (tag, rel)
    assert rel["source"] and rel["quote"], tag
    assert any(rel[k] for k in ("torch", "python", "cuda")), tag
    assert set(rel["how"]) == {k for k in ("torch", "python", "cuda") if rel[k]}, (tag, rel["how"])
    for field, how in rel["how"].items():
        assert how in NGC_HOW, (tag, field, how)
        if how in ("release-notes", "release-notes-copy"):
            assert _NOTES in rel["source"], (tag, field)
        elif how == "jetson-matrix":
            assert field == "torch" and JETSON_NOTES in rel["source"], (tag, field)
            assert re.search(r"\| " + re.escape(rel["torch"]) + r" \| [^|]*\b" + re.escape(tag) + r"\b", rel["quote"]), tag
        else:  # the quote names this exact tag (not its -igpu variant) or this release's notes page
            yy, mm = tag.split(".")
            assert (re.search(r"nvcr\.io/nvidia/pytorch:" + re.escape(tag) + r"-py3(?!-igpu)", rel["quote"])
                    or f"pytorch-release-notes/rel-{yy}-{mm}.html" in rel["quote"]), (tag, field)
    if rel["torch"]:
        from packaging.version import Version

        assert Version(rel["torch"]).is_prerelease, (tag, rel["torch"])  # NGC builds are X.Ya0+<git>
        assert rel["torch"] in rel["quote"], tag
    if rel["python"]:
        assert re.fullmatch(r"3\.\d{1,2}", rel["python"]), tag
    if rel["cuda"]:
        assert re.fullmatch(r"\d{1,2}\.\d{1,2}(?:\.\d+){0,2}", rel["cuda"]) and rel["cuda"] in rel["quote"], tag


# Table 1 rows (PyTorch Version | NVIDIA Framework Container | NVIDIA Framework Wheel | JetPack Version), as written
_JETSON_ROWS = {
    # 26.03's row reads '2.11.0a0+a6c236b9fd1' in the transcription: one hex digit more than every other build
    # and than the torch that runs in NVIDIA's 26.03 images ('2.11.0a0+a6c236b9fd.nv26.03.46836102', search-index
    # file ids 69841502341, 56778581553); likely a footnote mark read into the cell, so it is not used.
    "26.02": "| 2.11.0a0+eb65b36914 | 26.02 | - | 7.1 |",
    "26.01": "| 2.10.0a0+a36e1d39eb | 26.01 | - | 7.1 |", "25.11": "| 2.10.0a0+b558c986e8 | 25.11 | - | 7.0 |",
    "25.10": "| 2.9.0a0+145a3a7bda | 25.10 | - | 7.0 |", "25.09": "| 2.9.0a0+50eac811a6 | 25.09 | - | 7.0 |",
    "25.08": "| 2.8.0a0+34c6371d24 | 25.08 | - | 7.0 |", "25.06": "| 2.8.0a0+5228986c39 | 25.06 | - | **6.2** |",
    "25.05": "| 2.8.0a0+5228986c39 | 25.05 | - | **6.2** |", "25.04": "| 2.7.0a0+79aa17489c | 25.04 | - | **6.2** |",
    "25.03": "| 2.7.0a0+7c8ec84dab | 25.03 | - | **6.2** |", "25.02": "| 2.7.0a0+6c54963f75 | 25.02 | - | **6.2** |",
    "25.01": "| 2.6.0a0+ecf3bae40a | 25.01 | - | 6.1 |", "24.12": "| 2.6.0a0+df5bbc09d1 | 24.12 | - | 6.1 |",
    "24.11": "| 2.6.0a0+df5bbc0 | 24.11 | - | 6.1 |", "24.10": "| 2.5.0a0+e000cf0ad9 | 24.10 | - | 6.1 |",
    "24.09": "| 2.5.0a0+b465a5843b | 24.09 | **24.09** | 6.1 |",
    "24.08": "| 2.5.0a0+872d972e41 | 24.08 | - | 6.0 |",
    "24.07": "| 2.4.0a0+3bcc3cddb5 | 24.07 | **24.07** | 6.0 |",
    "24.06": "| 2.4.0a0+f70bd71a48 | 24.06 | **24.06** | 6.0 |",
    "24.05": "| 2.4.0a0+07cecf4168 | 24.05 | **24.05** | 6.0 |",
    "24.04": "| 2.3.0a0+6ddf5cf85e | 24.04 | **24.04** | 6.0 Developer Preview |",
    "24.03": "| 2.3.0a0+40ec155e58 | 24.03 | **24.03** | - |", "24.02": "| 2.3.0a0+ebedce2 | 24.02 | **24.02** | - |",
    "24.01": "| 2.2.0a0+81ea7a4 | 23.12, 24.01 | **23.12, 24.01** | - |",
    "23.12": "| 2.2.0a0+81ea7a4 | 23.12, 24.01 | **23.12, 24.01** | - |",
    "23.11": "| 2.2.0a0+6a974bec | 23.11 | - | - |", "22.07": "| 1.13.0a0+08820cb | 22.07 | **22.07** | - |",
    "22.06": "| 1.13.0a0+340c412 | 22.06 | **22.06** | 5.0.1 |", "22.05": "| 1.12.0a0+8a1a93a9 | 22.05 | **22.05** | 5.0 |",
}


def _jetson(tag: str) -> dict:
    """The torch build Table 1 gives for container release `tag`."""
    row = _JETSON_ROWS[tag]
    return {"torch": row.split("|")[1].strip(), "source": _JETSON, "quote": f"Table 1: '{row}'", "how": "jetson-matrix"}


def _release(tag: str, *parts: dict) -> dict:
    """One release's entry from its sources: each part gives some of torch / python / cuda, where it was read
    (source), the words (quote) and how (one of NGC_HOW); a field no part gives stays None (unknown). Each part
    passes check_release on its own, so a part's kind of source is checked against that part's own words."""
    rel = {"torch": None, "python": None, "cuda": None, "source": "", "quote": "", "how": {}}
    for p in parts:
        check_release(tag, {"torch": None, "python": None, "cuda": None, **{k: v for k, v in p.items() if k != "how"},
                            "how": {k: p["how"] for k in ("torch", "python", "cuda") if p.get(k)}})
        for k in ("torch", "python", "cuda"):
            if p.get(k):
                assert rel[k] is None, k  # one source per fact
                rel[k] = p[k]
                rel["how"][k] = p["how"]
        rel["source"] = f"{rel['source']}; {p['source']}" if rel["source"] else p["source"]
        rel["quote"] = f"{rel['quote']} / {p['quote']}" if rel["quote"] else p["quote"]
    return rel


# A public table of NGC releases 24.02-24.10 whose author states 'all the image software versions above were taken
# from NVIDIA's official site' (the release notes), search-index file id 13148618456
_TABLE_24 = (_NOTES + "rel-24-10.html and the earlier release notes, as tabulated in a public Megatron-Core guide "
             "(search-index file id 13148618456: '如上镜像软件版本信息全部从NVIDIA官网获取' - all of the image "
             "software versions above were taken from NVIDIA's official site)")


def _table24(tag: str, row: str, **facts) -> dict:
    return {**facts, "source": _TABLE_24, "quote": f"'|nvcr.io/nvidia/pytorch:{tag}-py3{row}'",
            "how": "release-notes-copy"}


def _aligned(tag: str, file_id: str, cuda: str, line: str) -> dict:
    """The CUDA toolkit of release `tag` as pinned by a public install script that aligns itself with that
    release's notes and checks the image's nvcc against it (search-index file id `file_id`)."""
    yy, mm = tag.split(".")
    return {"cuda": cuda, "how": "release-notes-copy",
            "source": f"{_NOTES}rel-{yy}-{mm}.html, as pinned in a public install script for an image built on "
                      f"that release (search-index file id {file_id}), which then checks the pre-installed nvcc against "
                      "CUDA_VER",
            "quote": f"'# Align with the pre-installed cuDNN / cuBLAS / NCCL versions from # https://docs.nvidia.com/"
                     f"deeplearning/frameworks/pytorch-release-notes/rel-{yy}-{mm}.html#rel-{yy}-{mm} {line}'"}


NGC_RELEASES = {
    "20.02": _release("20.02", {
        "torch": "1.4.0a0+a5b4d78", "python": "3.6", "cuda": "10.2.89", "how": "release-notes",
        "source": _NOTES + "rel_20-02.html",
        "quote": "'PyTorch container image version 20.02 is based on PyTorch 1.4.0a0+a5b4d78'; 'Release 20.02 is "
                 "based on NVIDIA CUDA 10.2.89'; 'pre-built and installed in Conda default environment "
                 "(/opt/conda/lib/python3.6/site-packages/torch/)'",
    }),
    "20.03": _release("20.03", {
        "torch": "1.5.0a0+8f84ded", "python": "3.6", "cuda": "10.2.89", "how": "release-notes-copy",
        "source": _NOTES + "rel_20-03.html, as copied in a public README (search-index file id 44350932792)",
        "quote": "'from [PyTorch Release 20.3](https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/"
                 "rel_20-03.html#rel_20-03) ... pre-built and installed in Conda default environment "
                 "(/opt/conda/lib/python3.6/site-packages/torch/) ... Ubuntu 18.04 including Python 3.6 environment - "
                 "NVIDIA CUDA 10.2.89 including cuBLAS 10.2.2.89 ... PyTorch container image version 20.03 is based on "
                 "1.5.0a0+8f84ded'",
    }),
    "20.06": _release("20.06", {
        "python": "3.6", "cuda": "11.0.167", "how": "release-notes",
        "source": _NOTES + "rel_20-06.html",
        "quote": "'Release 20.06 is based on NVIDIA CUDA 11.0.167'; 'pre-built and installed in Conda default "
                 "environment (/opt/conda/lib/python3.6/site-packages/torch/)' (the torch version was not in the "
                 "readable part of the page)",
    }),
    "20.10": _release("20.10", {
        "torch": "1.7.0a0+7036e91", "python": "3.6", "cuda": "11.1.0", "how": "release-notes-copy",
        "source": _NOTES + "rel_20-10.html, as summarised in the header of a public Dockerfile built on that release "
                  "(search-index file id 43886729903)",
        "quote": "'# The NVIDIA container image for PyTorch, release 20.10, is available on NGC. # This container is built "
                 "on Ubuntu 18.04 and includes Python 3.6. ... # 1. NVIDIA CUDA 11.1.0 including cuBLAS 11.2.1 ... # - "
                 "PyTorch container image version 20.10 is based on PyTorch 1.7.0a0+7036e91 ... # Framework support "
                 "matrix: https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel_20-10.html'",
    }),
    "20.12": _release("20.12", {
        "torch": "1.8.0a0+1606899", "python": "3.8", "cuda": "11.1.1", "how": "release-notes-copy",
        "source": _NOTES + "rel_20-12.html, as copied verbatim in github.com/taofuyu/detectron2 DOCKER_INFO.md",
        "quote": "'PyTorch container image version 20.12 is based on 1.8.0a0+1606899'; 'The container also includes "
                 "the following: Ubuntu 20.04 including Python 3.8 environment'; 'Release 20.12 is based on NVIDIA "
                 "CUDA 11.1.1' (the same page still says 'Conda default environment (/opt/conda/lib/python3.6/...)', "
                 "a sentence carried over from older releases; github.com/cainmagi/Dockerfiles README, an image built "
                 "on nvcr.io/nvidia/pytorch:20.12-py3: 'PyTorch 1.8.0a' and 'Python 3.8.5')",
    }),
    "21.09": _release("21.09", {
        "torch": "1.10.0a0+3fd9dcf", "python": "3.8", "cuda": "11.4.2", "how": "release-notes-copy",
        "source": _NOTES + "rel_21-09.html, as copied in a public README (search-index file id 42134666446)",
        "quote": "'[PyTorch NVIDIA Release 21.09](https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/"
                 "rel_21-09.html#rel_21-09) ... pre-built and installed in Conda default environment "
                 "(/opt/conda/lib/python3.8/site-packages/torch/) ... Ubuntu 20.04 including Python 3.8 environment "
                 "NVIDIA CUDA 11.4.2 ... PyTorch container image version 21.09 is based on 1.10.0a0+3fd9dcf'",
    }),
    "21.10": _release("21.10", {
        "python": "3.8", "cuda": "11.4.2", "how": "tag-statement",
        "source": "a public build note listing the contents of the image it pulls (search-index file id 1711487745)",
        "quote": "'base docker images `nvcr.io/nvidia/pytorch:21.10-py3` ... Ubuntu 20.04 including Python 3.8 "
                 "environment NVIDIA CUDA 11.4.2 with cuBLAS 11.6.5.2'",
    }),
    "22.01": _release("22.01", {
        "python": "3.8", "cuda": "11.6.0", "how": "release-notes-copy",
        "source": _NOTES + "rel_22-01.html, its contents section as copied in a public README (search-index file id "
                  "41600968516); the torch build is not in the copy",
        "quote": "'[PyTorch NVIDIA Release 22.01](https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/"
                 "rel_22-01.html#rel_21-01) ... PyTorch Release 22.01 ... pre-built and installed in Conda default "
                 "environment (/opt/conda/lib/python3.8/site-packages/torch/) ... Ubuntu 20.04 including Python 3.8 "
                 "environment NVIDIA CUDA 11.6.0'",
    }),
    "22.03": _release("22.03", {
        "torch": "1.12.0a0+2c916ef", "how": "tag-statement",
        "source": "a public cluster guide that runs the image under Singularity, with the image's start banner (search-index file id 17075234544)",
        "quote": "'$ singularity pull docker://nvcr.io/nvidia/pytorch:22.03-py3 $ gpu -n 2 run singularity run --nv pytorch_22.03-py3.sif python ... NVIDIA Release 22.03 (build 33569136) PyTorch Version 1.12.0a0+2c916ef'",
    }),
    "22.05": _release("22.05", _jetson("22.05")),
    "22.06": _release("22.06", _jetson("22.06")),
    "22.07": _release("22.07", _jetson("22.07")),
    "22.11": _release("22.11", {
        "torch": "1.13.0a0+936e930", "cuda": "11.8.0", "how": "release-notes-copy",
        "source": _NOTES + "rel-22-11.html, as quoted in the header of a public Dockerfile built FROM that tag "
                  "(search-index file id 46236285452); the Python of 22.11 is not in the quote: unknown",
        "quote": "'# https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-22-11.html#rel-22-11 # "
                 "NVIDIA CUDA 11.8.0 ... # PyTorch container image version 22.11 is based on 1.13.0a0+936e930. ... FROM "
                 "nvcr.io/nvidia/pytorch:22.11-py3'",
    }),
    "22.12": _release("22.12", {
        "torch": "1.14.0a0+410ce96", "python": "3.8", "cuda": "11.8.0", "how": "release-notes-copy",
        "source": _NOTES + "rel-22-12.html, as translated into Chinese in a public file titled 'PyTorch Release "
                  "22.12' (search-index file id 31798954267)",
        "quote": "'PyTorch 容器映像版本基於 `1.14.0a0+410ce96`' (the container image version is based on "
                 "1.14.0a0+410ce96); 'PyTorch: 在預設的 Python 環境中預先構建和安裝的版本 "
                 "(`/usr/local/lib/python3.8/dist-packages/torch`)'; 'Python 版本: Python 3.8'; 'NVIDIA CUDA 11.8.0'",
    }),
    "23.01": _release("23.01", {
        "torch": "1.14.0a0+44dac51", "how": "tag-statement",
        "source": "a public setup guide that runs the image, with its start banner (search-index file id 5109719197)",
        "quote": "'docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 -it --rm nvcr.io/nvidia/pytorch:23.01-py3 ... NVIDIA Release 23.01 (build 52269074) PyTorch Version 1.14.0a0+44dac51'",
    }),
    "23.03": _release("23.03", {
        "torch": "2.0.0a0+1767026", "how": "release-notes-copy",
        "source": _NOTES + "rel-23-03.html, as quoted in github.com/MyrtleSoftware/caiman-asr training/Dockerfile",
        "quote": "'ARG FROM_IMAGE_NAME=nvcr.io/nvidia/pytorch:23.03-py3 ... # pytorch version taken from here: # "
                 "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-23-03.html#rel-23-03 "
                 "ENV PYTORCH_VERSION=2.0.0a0+1767026'",
    }, {
        "cuda": "12.1.0", "how": "release-notes-copy",
        "source": _NOTES + "rel-23-03.html, as quoted in the MONAI Toolkit 1.1 documentation "
                  "(github.com/zephyrie/test-docs-source requirements.rst); the Python of 23.03 was not found in a "
                  "readable copy: unknown",
        "quote": "'The MONAI Toolkit 1.1 is based on the NVIDIA PyTorch container release 23.03. Release 23.03 is "
                 "based on CUDA 12.1.0'",
    }),
    "23.04": _release("23.04", {
        "torch": "2.1.0a0+fe05266f", "python": "3.8", "cuda": "12.1.0", "how": "tag-statement",
        "source": "github.com/NVIDIA/Megatron-LM tools/retro/README.md (4549b3dd3aaa7ba62295303e67a893b38c4dd831), "
                  "which lists the contents of " + _NOTES + "rel-23-04.html",
        "quote": "'The docker image is based on `nvcr.io/nvidia/pytorch:23.04-py3`. ... If docker is not available, we "
                 "recommend start from a clean conda environment, including: - Python 3.8 - NVIDIA CUDA 12.1.0 ... "
                 "- PyTorch 2.1.0a0+fe05266f'",
    }),
    "23.05": _release("23.05", {
        "python": "3.10", "cuda": "12.1", "how": "tag-statement",
        "source": "a public devcontainer Dockerfile (search-index file id 6084104142) citing " + _NOTES
                  + "rel-23-05.html; it gives the torch as 'PyTorch 2.0.0' without the build, so the torch is left "
                  "unknown here",
        "quote": "'# nvcr.io/nvidia/pytorch:23.05-py3 - CUDA 12.1 / Python 3.10 / PyTorch 2.0.0 #  - "
                 "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-23-05.html'",
    }),
    "23.07": _release("23.07", {
        "torch": "2.1.0a0+b5021ba", "how": "tag-statement",
        "source": "a public setup guide that runs the image, with its start banner (search-index file id 1977443566)",
        "quote": "'docker run -it --gpus=all --rm nvcr.io/nvidia/pytorch:23.07-py3 nvidia-smi ... NVIDIA Release 23.07 (build 63867923) PyTorch Version 2.1.0a0+b5021ba'",
    }),
    "23.08": _release("23.08", {
        "torch": "2.1.0a0+29c30b1", "python": "3.10", "cuda": "12.2.1", "how": "release-notes-copy",
        "source": _NOTES + "rel-23-08.html, as translated into Chinese in a public file titled 'PyTorch Release "
                  "23.08' (search-index file id 32148297268; the same translation series as 22.12's)",
        "quote": "'PyTorch 容器映像版本基於 `2.1.0a0+29c30b1`' (the container image version is based on "
                 "2.1.0a0+29c30b1); '(`/usr/local/lib/python3.10/dist-packages/torch`)'; 'Python 版本: Python 3.10'; "
                 "'NVIDIA CUDA 12.2.1'",
    }),
    "23.09": _release("23.09", {
        "python": "3.10", "cuda": "12.2.1", "how": "tag-statement",
        "source": "a public Dockerfile that lists, under its (commented-out) FROM line for that tag, the contents NVIDIA "
                  "publishes for it (search-index file id 11042559694)",
        "quote": "'# FROM --platform=amd64 nvcr.io/nvidia/pytorch:23.09-py3 as base ... # Ubuntu 22.04 including "
                 "Python 3.10 #NVIDIA CUDA® 12.2.1 #NVIDIA cuBLAS 12.2.5.6 #NVIDIA cuDNN 8.9.5'",
    }),
    "23.10": _release("23.10", {
        "torch": "2.1.0a0+32f93b1", "how": "tag-statement",
        "source": "a public setup guide that runs the image under podman, with its start banner (search-index file id 43514839489)",
        "quote": "'podman run --rm --gpus all nvcr.io/nvidia/pytorch:23.10-py3 nvidia-smi ... NVIDIA Release 23.10 (build 71422337) PyTorch Version 2.1.0a0+32f93b1'",
    }),
    "23.11": _release("23.11", _jetson("23.11"), {
        "python": "3.10", "cuda": "12.3", "how": "tag-statement",
        "source": "a public devcontainer Dockerfile (search-index file id 6084104142) citing " + _NOTES
                  + "rel-23-11.html",
        "quote": "'# nvcr.io/nvidia/pytorch:23.11-py3 - CUDA 12.3 / Python 3.10 / PyTorch 2.2.0 #  - "
                 "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-23-11.html'",
    }),
    "23.12": _release("23.12", _jetson("23.12"), {
        "python": "3.10", "cuda": "12.3.2", "how": "tag-statement",
        "source": "the description of a public image built on that tag (search-index file id 12370285431), citing "
                  + _NOTES + "rel-23-12.html",
        "quote": "'Image based on official nvidia image nvcr.io/nvidia/pytorch:23.12-py3. - For release notes see "
                 "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-23-12.html Contains: - "
                 "Ubuntu 22.04 - CUDA 12.3.2 - Pytorch 2.2 - ONNX 1.16.3 - Python 3.10'",
    }),
    "24.01": _release("24.01", _jetson("24.01"), {
        "cuda": "12.3.2", "how": "release-notes-copy",
        "source": _NOTES + "rel-24-01.html, as quoted in a public Dockerfile (search-index file id 24567752404)",
        "quote": "'# PyTorch=2.2.0, cuda=12.3.2 # Ref: "
                 "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-01.html#rel-24-01'",
    }, {
        "python": "3.10", "how": "tag-statement",
        "source": "a public Dockerfile header naming " + _NOTES + "rel-24-01.html's release (search-index file id "
                  "61095583162)",
        "quote": "'# Nocturne Simulator — PyTorch Release 24.01 (Ubuntu 22.04 / Python 3.10) FROM "
                 "nvcr.io/nvidia/pytorch:24.01-py3'",
    }),
    "24.02": _release("24.02", _table24("24.02", "| 22.04 | NVIDIA CUDA 12.3.2 | 2.3.0a0+ebedce2 | Python 3.10.12| 无|",
                               torch="2.3.0a0+ebedce2", python="3.10", cuda="12.3.2")),
    "24.03": _release("24.03", _table24("24.03", "| 22.04 | NVIDIA CUDA 12.4.0.41 | 2.3.0a0+40ec155e58 | Python 3.10.12 | 无|",
                               torch="2.3.0a0+40ec155e58", python="3.10", cuda="12.4.0.41")),
    "24.04": _release("24.04", _table24("24.04", "| 22.04 | NVIDIA CUDA 12.4.1 | 2.3.0a0+6ddf5cf85e | Python 3.10.12 | 无|",
                               torch="2.3.0a0+6ddf5cf85e"), {
        "python": "3.10", "cuda": "12.4", "how": "release-notes-copy",
        "source": _NOTES + "rel-24-04.html, its 'Contents of the PyTorch container' section as copied verbatim in a "
                  "public README (search-index file id 39803068600); the copy gives CUDA without a patch level",
        "quote": "'Base Image nvcr.io/nvidia/pytorch:24.04-py3 ... It is prebuilt and installed in the default "
                 "Python environment (/usr/local/lib/python3.10/dist-packages/torch) in the container image. The "
                 "container also includes the following: ‣ Ubuntu 22.04 including Python 3.10 ‣ NVIDIA CUDA 12.4 ‣"
                 " NVIDIA cuBLAS 12.4.5.8'",
    }),
    "24.05": _release("24.05", _table24("24.05", "| 22.04 | NVIDIA CUDA 12.4.1 | 2.4.0a0+07cecf4168 | Python 3.10.12 | 无|",
                               torch="2.4.0a0+07cecf4168"), {
        "python": "3.10", "cuda": "12.4.1", "how": "release-notes-copy",
        "source": _NOTES + "rel-24-05.html, as copied in a public benchmark script (search-index file id 1451921646)",
        "quote": "'# https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-05.html # Ubuntu"
                 " 22.04 including Python 3.10 # NVIDIA CUDA 12.4.1 # NVIDIA cuBLAS 12.4.5.8 # NVIDIA cuDNN "
                 "9.1.0.70'",
    }),
    "24.06": _release("24.06", _table24("24.06", "| 22.04 | NVIDIA CUDA 12.5.0.23 | 2.4.0a0+f70bd71a48 | Python 3.10.12 | 无|",
                               torch="2.4.0a0+f70bd71a48", python="3.10", cuda="12.5.0.23")),
    "24.07": _release("24.07", _table24("24.07", "| 22.04 | NVIDIA CUDA 12.5.1 | 2.4.0a0+3bcc3cddb5 | Python 3.10.12 | 无|",
                               torch="2.4.0a0+3bcc3cddb5", python="3.10", cuda="12.5.1")),
    "24.08": _release("24.08", _table24("24.08", "| 22.04 | NVIDIA CUDA 12.6 | 2.5.0a0+872d972e41 | Python 3.10.12 | "
                                        "可运行，但有警告|", torch="2.5.0a0+872d972e41", python="3.10", cuda="12.6")),
    "24.09": _release("24.09", _table24("24.09", "| 22.04 | NVIDIA CUDA 12.6.1 | 2.5.0a0+b465a5843b | Python 3.10.12 | "
                                        "可运行，但有警告|", torch="2.5.0a0+b465a5843b", python="3.10", cuda="12.6.1")),
    "24.10": _release("24.10", _table24("24.10", "| 22.04 | NVIDIA CUDA 12.6.2 | 2.5.0a0+e000cf0ad9 | Python 3.10.12 | "
                                        "可运行，但有警告|", torch="2.5.0a0+e000cf0ad9"), {
        "python": "3.10", "cuda": "12.6.2", "how": "release-notes-copy",
        "source": _NOTES + "rel-24-10.html, as quoted in a public yolov9 QAT README (search-index file id 16339551928)",
        "quote": "'NVIDIA PyTorch image (nvcr.io/nvidia/pytorch:24.10-py3) Release 24.10 is based Ubuntu 22.04 "
                 "including Python 3.10 CUDA 12.6.2, which requires NVIDIA Driver release 560 or later ... "
                 "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-10.html'",
    }),
    "24.11": _release("24.11", _jetson("24.11"), {
        "python": "3.12", "how": "tag-statement",
        "source": "a public setup note (search-index file id 15369863340) that runs `python -V` in the image and "
                  "links " + _NOTES + "rel-24-11.html; the CUDA of 24.11 was not found in a readable copy: unknown",
        "quote": "'https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-11.html # python 3.12 "
                 "docker run --rm -it --gpus all nvcr.io/nvidia/pytorch:24.11-py3 python -V'",
    }),
    "24.12": _release("24.12", _jetson("24.12"), {
        "python": "3.12", "how": "tag-statement",
        "source": "github.com/NVIDIA/bionemo-framework docs/docs/main/about/releasenotes-fw.md "
                  "(0f8f1f2ba3583b3541c08db74ac86a1ec6e930dc), BioNeMo Framework v2.3",
        "quote": "'Base image updated to `nvcr.io/nvidia/pytorch:24.12-py3`; python updated to 3.12 among other core "
                 "dependency upgrades ([base container release notes here](https://docs.nvidia.com/deeplearning/"
                 "frameworks/pytorch-release-notes/rel-24-12.html#rel-24-12))'",
    }, {
        "cuda": "12.6.3", "how": "release-notes-copy",
        "source": _NOTES + "rel-24-12.html, as summarised in a public README (search-index file id 27224067577; it "
                  "writes the torch build with the shorter hash df5bbc0, the same commit)",
        "quote": "'https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-24-12.html Release 24.12 "
                 "contains * Ubuntu 24.04 * CUDA 12.6.3 * TensorRT 10.7.0.23 * PyTorch 2.6.0a0+df5bbc0'",
    }),
    "25.01": _release("25.01", _jetson("25.01"), {
        "python": "3.12", "how": "tag-statement",
        "source": "a public benchmark report of an image built FROM that tag (search-index file id 52174548262)",
        "quote": "'| Container | doc2data-gpu:latest (nvcr.io/nvidia/pytorch:25.01-py3) | | PyTorch | "
                 "2.6.0a0+ecf3bae40a.nv25.01 | | Python | 3.12.3 |'",
    }, _aligned("25.01", "6004327447", "12.8.0", 'CUDA_VER="12.8" # 12.8.0')),
    "25.02": _release("25.02", _jetson("25.02"), {
        "python": "3.12", "cuda": "12.8.0.38", "how": "tag-statement",
        "source": "a public README of an image built FROM that tag (search-index file id 52484808707), its 'Exact "
                  "Dependency Versions' table",
        "quote": "'| Base Image | `nvcr.io/nvidia/pytorch:25.02-py3` | NVIDIA NGC | | CUDA | 12.8.0.38 | Included in "
                 "NGC | | PyTorch | 2.7.0a0+6c54963f75 | Included in NGC | | Python | 3.12 | Included in NGC |'",
    }),
    "25.03": _release("25.03", _jetson("25.03"), {
        "python": "3.12", "cuda": "12.8.1", "how": "release-notes-copy",
        "source": _NOTES + "rel-25-03.html, as summarised in a public container README (search-index file id "
                  "55782390255)",
        "quote": "'The default base is `nvcr.io/nvidia/pytorch:25.03-py3`. NVIDIA's [25.03 release notes](https://"
                 "docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-25-03.html) list Python 3.12, CUDA "
                 "12.8.1, PyTorch 2.7.0a0'",
    }),
    "25.04": _release("25.04", _jetson("25.04"), {
        "python": "3.12", "cuda": "12.9", "how": "tag-statement",
        "source": "a public host inventory that checked the versions inside that image (search-index file id "
                  "70960351717)",
        "quote": "'官方镜像：`nvcr.io/nvidia/pytorch:25.04-py3` ... 实查版本：Python 3.12.3、Torch "
                 "`2.7.0a0+79aa17489c.nv25.04`、CUDA 12.9' (official image ...; versions checked: Python 3.12.3, "
                 "Torch 2.7.0a0+79aa17489c.nv25.04, CUDA 12.9)",
    }),
    "25.05": _release("25.05", _jetson("25.05")),
    "25.06": _release("25.06", _jetson("25.06"), {
        "python": "3.12", "cuda": "12.9.1", "how": "tag-statement",
        "source": "a public image README (search-index file id 69702288681) citing " + _NOTES + "rel-25-06.html",
        "quote": "'基础镜像为 `nvcr.io/nvidia/pytorch:25.06-py3`，包含 Ubuntu 24.04、Python 3.12、CUDA 12.9.1' (the base "
                 "image is nvcr.io/nvidia/pytorch:25.06-py3, with Ubuntu 24.04, Python 3.12, CUDA 12.9.1)",
    }),
    "25.08": _release("25.08", _jetson("25.08"), {
        "python": "3.12", "how": "tag-statement",
        "source": "a public GPU-image README built on NVIDIA's 25.08 image, citing " + _NOTES + "rel-25-08.html "
                  "(search-index file id 61662731018)",
        "quote": "'The pin is Ubuntu 24.04, Python 3.12, NVIDIA PyTorch `2.8.0a0+34c6371`, and CUDA 13.0. ... See "
                 "NVIDIA's [25.08 release notes](https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/"
                 "rel-25-08.html)'",
    }, _aligned("25.08", "410322285", "13.0.0", 'CUDA_VER="13.0" # 13.0.0')),
    "25.09": _release("25.09", _jetson("25.09"), {
        "python": "3.12", "how": "tag-statement",
        "source": "a public deployment README (search-index file id 70782531814) citing " + _NOTES + "rel-25-09.html; "
                  "it gives the CUDA as '13' without a minor version, so the CUDA is left unknown here",
        "quote": "'A base fixa `nvcr.io/nvidia/pytorch:25.09-py3` fornece Python 3.12, CUDA 13 e PyTorch 2.9 NVIDIA' "
                 "(the pinned base provides Python 3.12, CUDA 13 and NVIDIA's PyTorch 2.9)",
    }),
    "25.10": _release("25.10", _jetson("25.10")),
    "25.11": _release("25.11", _jetson("25.11"), {
        "cuda": "13.0", "how": "tag-statement",
        "source": "a public competition README (search-index file id 61093985709) citing " + _NOTES + "rel-25-11.html",
        "quote": "'The base image we suggest using ... is `nvcr.io/nvidia/pytorch:25.11-py3`. It includes PyTorch 2.10, "
                 "CUDA 13.0, `cuda-compat-13-0`, among others; for details, see the NVIDIA release notes for the image'",
    }),
    "25.12": _release("25.12", {
        "torch": "2.10.0a0+b4e4ee81d3", "python": "3.12", "cuda": "13.1.0", "how": "release-notes",
        "source": _NOTES + "rel-25-12.html",
        "quote": "'PyTorch container image version 25.12 is based on 2.10.0a0+b4e4ee81d3'; 'Release 25.12 is based on "
                 "CUDA 13.1.0'; 'prebuilt and installed in the default Python environment "
                 "(/usr/local/lib/python3.12/dist-packages/torch)'",
    }),
    "26.01": _release("26.01", _jetson("26.01"), {
        "python": "3.12", "cuda": "13.1.1", "how": "tag-statement",
        "source": "the README of a public image built on it (search-index file id 5736334320), linking "
                  + _NOTES + "rel-26-01.html",
        "quote": "'* [Nvidia PyTorch Container 26.01-py3](https://docs.nvidia.com/deeplearning/frameworks/"
                 "pytorch-release-notes/rel-26-01.html) * python 3.12.3 * cuda 13.1.1 * torch 2.10.0'",
    }),
    "26.02": _release("26.02", _jetson("26.02"), {
        "python": "3.12", "cuda": "13.1.1", "how": "tag-statement",
        "source": "a public deployment README (search-index file id 71393307968) citing " + _NOTES + "rel-26-02.html",
        "quote": "'`nvcr.io/nvidia/pytorch:26.02-py3` bundles CUDA 13.1.1 and PyTorch 2.11.0a0+eb65b36914 on Python "
                 "3.12/Ubuntu 24.04'",
    }),
    # the banner gives the build with a 7-digit hash (a6c236b), as NVIDIA's Jetson table's 26.03 cell does not
    # (see _JETSON_ROWS); the same commit as the 'a6c236b9fd.nv26.03' torch of NVIDIA's 26.03 images
    "26.03": _release("26.03", {
        "torch": "2.11.0a0+a6c236b", "how": "tag-statement",
        "source": "a public setup note that runs the image, with its start banner (search-index file id 66134426634)",
        "quote": "'docker run -it --rm nvcr.io/nvidia/pytorch:26.03-py3 bash ... NVIDIA Release 26.03 (build 286725636) "
                 "PyTorch Version 2.11.0a0+a6c236b'",
    }, {
        "cuda": "13.2", "how": "tag-statement",
        "source": "a public build script's list of base images (search-index file id 53077104354)",
        "quote": "'BASE_NVIDIA_IMAGE=\"nvcr.io/nvidia/pytorch:26.03-py3\"  # torch 2.11 / cu13.2, latest available'",
    }),
    "26.04": _release("26.04", {
        "cuda": "13.2.1", "how": "tag-statement",
        "source": "a public GPU-server preflight report (search-index file id 63388423911) citing " + _NOTES
                  + "rel-26-04.html",
        "quote": "'| Container tag | `nvcr.io/nvidia/pytorch:26.04-py3` | ... The pinned image contains CUDA 13.2.1.'",
    }, {
        "torch": "2.12.0a0+0291f960b6", "python": "3.12", "how": "tag-statement",
        "source": "the same project's execution record of that image run under Singularity (search-index file id "
                  "63476594832), which lists the versions of that runtime (the image plus a project-local venv; the "
                  ".nv26.04 torch build is the image's own)",
        "quote": "'- NGC source: `nvcr.io/nvidia/pytorch:26.04-py3` ... | Python | 3.12.3 | | PyTorch | "
                 "`2.12.0a0+0291f960b6.nv26.04.48445190` |'",
    }),
    "26.05": _release("26.05", {
        "cuda": "13.2.1", "how": "release-notes-copy",
        "source": _NOTES + "rel-26-05.html, as summarised in a public deployment note (search-index file id "
                  "67165953448); it gives the torch as '2.12.0a0' without the build, so the torch is left unknown",
        "quote": "'官方底座 `nvcr.io/nvidia/pytorch:26.05-py3`，ARM64；[NVIDIA 26.05 说明](https://docs.nvidia.com/"
                 "deeplearning/frameworks/pytorch-release-notes/rel-26-05.html) 对应 PyTorch 2.12.0a0、CUDA 13.2.1、"
                 "TensorRT 10.16.1.11' (the NVIDIA 26.05 notes give PyTorch 2.12.0a0, CUDA 13.2.1, TensorRT 10.16.1.11)",
    }),
    "26.06": _release("26.06", _aligned("26.06", "57596208443", "13.3.0", 'CUDA_VER="13.3" # 13.3.0')),
}
VLLM_NOTES = "https://docs.nvidia.com/deeplearning/frameworks/vllm-release-notes/"
# How an NGC vLLM fact was read (`how`, per field): "release-notes": a stored copy of NVIDIA's vLLM release-notes page
# itself; "release-notes-copy": a public file that quotes that page and names it; "tag-statement": a public file
# that names the exact tag nvcr.io/nvidia/vllm:<tag>-py3 and states the value for it (a run of the image, its
# banner, a benchmark environment table); "ngc-pytorch" (torch only): the release notes list "NVIDIA PyTorch
# YY.MM" among the container's contents, so its torch is that NGC PyTorch release's build (NGC_RELEASES above,
# with that release's own source).
VLLM_HOW = ("release-notes", "release-notes-copy", "tag-statement", "ngc-pytorch")
VLLM_FIELDS = ("vllm", "torch", "python", "cuda")


def check_vllm_release(tag: str, rel: dict) -> None:
    """An NGC vLLM per-release entry: a YY.MM[.postN] tag; versions that parse (vllm and torch PEP 440, torch a
    pre-release build, Python X.Y, CUDA X.Y[.Z]), each in the quote; at least one known; and how each was read:
    from the vLLM release notes (the source names a vLLM release-notes page), from a file about this exact tag
    (the quote names nvcr.io/nvidia/vllm:<tag>-py3), or, for the torch, from the NGC PyTorch release the notes
    name (the quote holds 'NVIDIA PyTorch YY.MM' and the torch is that release's build)."""
    from packaging.version import Version

    assert re.fullmatch(r"\d{2}\.\d{2}(?:\.post\d)?", tag), tag
    assert set(rel) == {*VLLM_FIELDS, "source", "quote", "how"}, (tag, rel)
    assert rel["source"] and rel["quote"], tag
    assert any(rel[k] for k in VLLM_FIELDS), tag
    assert set(rel["how"]) == {k for k in VLLM_FIELDS if rel[k]}, (tag, rel["how"])
    for field, how in rel["how"].items():
        assert how in VLLM_HOW, (tag, field, how)
        if how in ("release-notes", "release-notes-copy"):
            assert VLLM_NOTES in rel["source"] and not tag.count(".post"), (tag, field)
        elif how == "ngc-pytorch":
            m = re.search(r"NVIDIA PyTorch (\d{2}\.\d{2})\b", rel["quote"])
            assert field == "torch" and m and VLLM_NOTES in rel["source"], (tag, field)
            assert NGC_RELEASES[m[1]]["torch"] == rel["torch"], (tag, m[1])
            assert NGC_RELEASES[m[1]]["source"] in rel["source"], (tag, m[1])
        else:  # the quote names this exact tag
            assert re.search(r"nvcr\.io/nvidia/vllm:" + re.escape(tag) + r"-py3", rel["quote"]), (tag, field)
    if rel["vllm"]:
        assert not Version(rel["vllm"]).is_prerelease and not Version(rel["vllm"]).local, tag
        assert rel["vllm"] in rel["quote"], tag
    if rel["torch"]:
        assert Version(rel["torch"]).is_prerelease, (tag, rel["torch"])  # NGC builds are X.Ya0+<git>
        assert rel["torch"] in rel["quote"] or rel["how"]["torch"] == "ngc-pytorch", tag
    if rel["python"]:
        assert re.fullmatch(r"3\.\d{1,2}", rel["python"]), tag
    if rel["cuda"]:
        assert re.fullmatch(r"\d{1,2}\.\d{1,2}(?:\.\d+){0,2}", rel["cuda"]) and rel["cuda"] in rel["quote"], tag


def _vllm_release(tag: str, *parts: dict) -> dict:
    """One NGC vLLM release's entry from its sources (as _release above: a field no part gives stays None, one
    source per fact, each part checked on its own words)."""
    rel = {**{k: None for k in VLLM_FIELDS}, "source": "", "quote": "", "how": {}}
    for p in parts:
        check_vllm_release(tag, {**{k: None for k in VLLM_FIELDS}, **{k: v for k, v in p.items() if k != "how"},
                                 "how": {k: p["how"] for k in VLLM_FIELDS if p.get(k)}})
        for k in VLLM_FIELDS:
            if p.get(k):
                assert rel[k] is None, k
                rel[k] = p[k]
                rel["how"][k] = p["how"]
        rel["source"] = f"{rel['source']}; {p['source']}" if rel["source"] else p["source"]
        rel["quote"] = f"{rel['quote']} / {p['quote']}" if rel["quote"] else p["quote"]
    check_vllm_release(tag, rel)
    return rel


def _vllm_notes(tag: str, quote: str, **facts) -> dict:
    """Facts read from NVIDIA's vLLM release-notes page for `tag` (a stored copy of the page)."""
    yy, mm = tag.split(".")
    return {**facts, "source": f"{VLLM_NOTES}rel-{yy}-{mm}.html", "quote": quote, "how": "release-notes"}


def _vllm_on_pytorch(tag: str, pytorch: str, quote: str) -> dict:
    """The torch of vLLM release `tag`, whose notes list 'NVIDIA PyTorch <pytorch>' among its contents: that NGC
    PyTorch release's build, as NGC_RELEASES reads it (its own source)."""
    yy, mm = tag.split(".")
    return {"torch": NGC_RELEASES[pytorch]["torch"], "how": "ngc-pytorch", "quote": quote,
            "source": f"{VLLM_NOTES}rel-{yy}-{mm}.html (the container's NVIDIA PyTorch {pytorch}), whose torch is read "
                      f"from {NGC_RELEASES[pytorch]['source']}"}


# The notes of each release say 'pre-built and installed in the default system Python environment
# (/usr/local/lib/python3.12/dist-packages/vllm)': the Python of that release.
_PY312 = "'(/usr/local/lib/python3.12/dist-packages/vllm)'"
# NGC vLLM, per release (nvcr.io/nvidia/vllm:YY.MM[.postN]-py3): the vLLM it ships (the public version; NVIDIA's
# build carries a local tag, 0.10.1.1+nv25.09), its torch build, Python and CUDA. A field left None is not known
# (where a source gives only a shortened torch, '2.9.0a0+nv25.09', the build is left unknown: the rules then use
# the date bound); a .postN tag is a release of its own (26.05.post1 ships vLLM 0.21.0, 26.05 ships 0.20.1).
NGC_VLLM_RELEASES = {
    "25.09": _vllm_release("25.09", {
        "vllm": "0.10.1.1", "how": "tag-statement",
        "source": "a public benchmark report's environment table (search-index file id 57017964141); it gives the "
                  "torch as '2.9.0a0+nv25.09' without the build, so the torch is left unknown here",
        "quote": "'| Container | `nvcr.io/nvidia/vllm:25.09-py3` | `nvcr.io/nvidia/vllm:26.06-py3` | | vLLM | "
                 "0.10.1.1+nv25.09 | **0.22.1** | ... | torch | 2.9.0a0+nv25.09 | 2.13.0a0+nv26.06 |'",
    }),
    "25.10": _vllm_release("25.10", _vllm_notes(
        "25.10", "'vLLM: 0.10.2'; 'NVIDIA PyTorch 25.09'; " + _PY312 + "; 'Release 25.10 is based on CUDA 13.0.2.'",
        vllm="0.10.2", python="3.12", cuda="13.0.2"),
        _vllm_on_pytorch("25.10", "25.09", "'The NVIDIA vLLM Container ... contains the following software for GPU "
                                           "acceleration - vLLM: 0.10.2 ... - NVIDIA PyTorch 25.09'")),
    "25.12": _vllm_release("25.12", {
        "vllm": "0.11.1", "how": "tag-statement",
        "source": "github.com/vllm-project/vllm issue 31424 (2025-12-27), the container's start banner as pasted",
        "quote": "'Container: nvcr.io/nvidia/vllm:25.12-py3 ... NVIDIA Release 25.12 (build 245720121) vLLM Version "
                 "0.11.1+9114fd76'",
    }),
    "26.01": _vllm_release("26.01", _vllm_notes(
        "26.01", "'vLLM: 0.11.1'; 'PyTorch 2.10.0a0+a36e1d39eb'; " + _PY312 + "; 'Release 26.01 is based on CUDA "
        "13.1.1'", vllm="0.11.1", torch="2.10.0a0+a36e1d39eb", python="3.12", cuda="13.1.1")),
    # the torch line reads '2.11.0a0+a6c236b9fd1', one hex digit more than every other build (the same cell as in
    # NVIDIA's PyTorch Jetson table for 26.03, see _JETSON_ROWS above): not used
    "26.03": _vllm_release("26.03", _vllm_notes(
        "26.03", "'vLLM: 0.17.1'; " + _PY312 + "; 'Release 26.03 is based on CUDA 13.2.0'",
        vllm="0.17.1", python="3.12", cuda="13.2.0")),
    "26.04": _vllm_release("26.04", {
        "vllm": "0.19.0", "how": "tag-statement",
        "source": "a public deployment note's runtime matrix of the images it ran (search-index file id 55211758984)",
        "quote": "'| Base image | vLLM | torch | ... | `nvcr.io/nvidia/vllm:26.04-py3` | 0.19.0 | — | ❌ (stock) | — |'",
    }),
    "26.05": _vllm_release("26.05", _vllm_notes(
        "26.05", "'vLLM: 0.20.1'; 'Torch 2.12.0a0+5aff3928d8'; " + _PY312 + "; 'Release 26.05 is based on CUDA "
        "13.2.1'", vllm="0.20.1", torch="2.12.0a0+5aff3928d8", python="3.12", cuda="13.2.1")),
    "26.06": _vllm_release("26.06", {
        "vllm": "0.22.1", "how": "tag-statement",
        "source": "a public benchmark report's environment table (search-index file id 57017964141); it gives the "
                  "torch as '2.13.0a0+nv26.06' without the build, so the torch is left unknown here",
        "quote": "'| Container | `nvcr.io/nvidia/vllm:25.09-py3` | `nvcr.io/nvidia/vllm:26.06-py3` | | vLLM | "
                 "0.10.1.1+nv25.09 | **0.22.1** |'",
    }),
    "26.07": _vllm_release("26.07", {
        "vllm": "0.24.0", "how": "release-notes-copy",
        "source": VLLM_NOTES + "rel-26-07.html, as quoted in a public issue write-up (search-index file id 71413759080)",
        "quote": "'nvcr.io/nvidia/vllm:26.07-py3 ... NVIDIA's 26.07 release notes list: vLLM: 0.24.0 xgrammar: 0.2.0 "
                 "transformers: 5.6.1 Reference: https://docs.nvidia.com/deeplearning/frameworks/vllm-release-notes/"
                 "rel-26-07.html'",
    }),
    "26.08": _vllm_release("26.08", {
        "vllm": "0.27.1", "cuda": "13.4.1", "how": "tag-statement",
        "source": "a public deployment plan (search-index file id 65737197535) citing " + VLLM_NOTES + "rel-26-08.html",
        "quote": "'The current NVIDIA vLLM image is `nvcr.io/nvidia/vllm:26.08-py3`. ... It contains vLLM 0.27.1, CUDA "
                 "13.4.1, Transformers 5.14.1, and FlashInfer 0.6.17.'",
    }),
    "26.09": _vllm_release("26.09", {
        "vllm": "0.29.0", "cuda": "13.4.1", "how": "tag-statement",
        "source": "a public image inventory with digests and dates (search-index file id 71045581794)",
        "quote": "'| `nvcr.io/nvidia/vllm:26.09-py3` (index; arm64 `sha256:fa68ef92...`) | vLLM 0.29.0 | 13.4.1 | "
                 "2026-09-23 | ... The NGC pair shares CUDA 13.4.1'",
    }),
    "26.10": _vllm_release("26.10", _vllm_notes(
        "26.10", "'vLLM: 0.31.0'; 'Torch 2.15.0a0+875d815502'; " + _PY312 + "; 'Release 26.10 is based on CUDA "
        "13.4.3'", vllm="0.31.0", torch="2.15.0a0+875d815502", python="3.12", cuda="13.4.3")),
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
        # 1.9.1-cuda11.1-…: pushed after 1.10.0 was out and holds 1.10.0 (the row "pytorch/pytorch:1.9.1" below)
        "pattern": r"^(?:docker\.io/)?pytorch/pytorch:(?!1\.9\.1-cuda11\.1-)(?P<torch>\d+\.\d+\.\d+)-cuda(?P<cuda>\d+\.\d+)"
                   r"-cudnn\d+-(?P<flavor>runtime|devel)$",
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
        "name": "NGC vLLM",
        # a .postN tag is a release of its own (its vLLM differs): it takes its own entry, else the date bound
        "pattern": r"^nvcr\.io/nvidia/vllm:(?P<YY>\d{2})\.(?P<MM>\d{2})(?P<post>\.post\d)?-py3",
        "env": {}, "cuda": None, "nvcc": None,
        # "ships": vllm, and more that is not listed (flashinfer, transformers, flash-attention, xgrammar and what
        # the NGC PyTorch base holds): "ships_complete": False keeps the other packages unknown
        "ships": ["vllm"], "ships_complete": False,
        "torch": {"version": None, "prerelease": True, "installer": "NGC's source build into the system Python"},
        "releases": NGC_VLLM_RELEASES,
        "source": VLLM_NOTES + "rel-YY-MM.html: 'This container image contains the complete source of the version "
                  "of vLLM in /opt/vllm. It is pre-built and installed in the default system Python environment "
                  "(/usr/local/lib/python3.12/dist-packages/vllm)'; its contents list vLLM, flashinfer, transformers, "
                  "flash-attention, xgrammar and NVIDIA's torch (a pre-release build: 'Torch 2.12.0a0+5aff3928d8' in "
                  "26.05, 'NVIDIA PyTorch 25.09' in 25.10); whether the image sets PIP_CONSTRAINT (as the NGC "
                  "PyTorch images do since 25.03) is not published where it could be read, and no constraint is "
                  "assumed: in 26.02 a plain pip install replaced the image's torch (a public environment note, "
                  "search-index file id 55562292605: 'Base: `nvcr.io/nvidia/vllm:26.02-py3` → torch "
                  "`2.11.0a0+...nv26.02` ... `pip install transformer-lens` pulls a PyPI **CPU** torch 2.7.1 + "
                  "transformers v5, **clobbering** the NVIDIA CUDA torch'), which a constraint pinning it forbids",
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
        "name": "vllm/vllm-openai (latest)",
        "pattern": r"^(?:docker\.io/)?vllm/vllm-openai(?::latest)?$",
        "env": {}, "cuda": None, "nvcc": None,
        "torch": {"version": "newest-pin-of:vllm", "prerelease": False, "installer": "pip/uv into the system Python"},
        "ships": ["vllm"],
        "source": "vllm-project/vllm docker/Dockerfile and its release workflow: `latest` is pushed with each "
                  "release, so an image pulled now holds at least the newest vllm in wheeldoc's table, and the "
                  "torch it pins (a later release never pins an older torch)",
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
        # the release tags with a CUDA, build-type, target or platform suffix: `v0.4.6.post1-cu124`, `v0.3.0-cu121-srt`,
        # `v0.5.0-cu129-amd64`, `v0.5.16-cu130`, `v0.5.14-runtime`. The image CUDA is left unknown: the cu118..cu125
        # tags were built on nvcr.io/nvidia/tritonserver:24.04-py3-min whatever the tag said (the CUDA picked only
        # the torch index), and nvcc too (the `-runtime` target is a slimmer stage). ROCm (`-rocm700-mi35x`), NPU
        # and pre-release (`v0.5.0rc0-cu126`) tags do not match.
        "name": "lmsysorg/sglang (release tags with a suffix)",
        "pattern": r"^(?:docker\.io/)?lmsysorg/sglang:v(?P<sglang>\d+\.\d+\.\d+(?:\.post\d+)?)(?:-cu1[1-3]\d)?(?:-srt)?"
                   r"(?:-runtime)?(?:-(?:amd64|arm64))?$",
        "env": {}, "cuda": None, "nvcc": None,
        "env_complete": False,
        "torch": {"version": "pin-of:sglang=={sglang}", "prerelease": False, "installer": "pip into the system Python"},
        "ships": ["sglang"],
        "source": "sgl-project/sglang .github/workflows/release-docker.yml (01d2a3d0d57bc35da92de3833d72412c0b448210: "
                  "`tag=v${version}-${cuda_tag}` (cu118/cu121/cu124/cu125) plus `-srt` for BUILD_TYPE=srt, each built "
                  "from docker/Dockerfile when python/sglang/version.py changes on main; 64ec4f88e1ee38fff05d2df5987f2f995c995828: "
                  "`v${version}-cu129-amd64` / `-cu129-arm64` and their manifest `v${version}`), "
                  ".github/workflows/_docker-build-and-publish.yml (16739a60a4dcc0f1219afa562f4eb66c56034fde: cu129 and "
                  "cu130 builds of docker/Dockerfile with SGL_VERSION, tags from a per-CUDA tag list) and docker/Dockerfile "
                  "(924d890f1c840188bf6ffd9ccd62e7508cc248a2: `pip install -e \"python[${BUILD_TYPE}]\"` of the checked-out "
                  "tree; a later docker/Dockerfile of the same build, search-index file id 17896931870, clones `--branch "
                  "v${SGL_VERSION}` and installs `python[${BUILD_TYPE}]` the same way): the image holds sglang {sglang} with the torch its srt extra pins (wheeldoc/data/torch_pins.json); "
                  "the `-runtime` target copies the framework stage's /usr/local/lib/python3.12/dist-packages "
                  "(sgl-project/sglang pull 13861, 'dockerfile: add lightweight runtime stage')",
    },
    {
        # `latest` moves with each release: a floor, as for vllm/vllm-openai:latest (`_check_newest_pin_floor`)
        "name": "lmsysorg/sglang (latest)",
        "pattern": r"^(?:docker\.io/)?lmsysorg/sglang(?::latest)?$",
        "env": {}, "cuda": None, "nvcc": None,
        "env_complete": False,
        "torch": {"version": "newest-pin-of:sglang", "prerelease": False, "installer": "pip into the system Python"},
        "ships": ["sglang"],
        "source": "sgl-project/sglang .github/workflows/release-docker.yml, run when python/sglang/version.py changes on "
                  "main (a release): at 01d2a3d0d57bc35da92de3833d72412c0b448210 `docker tag lmsysorg/sglang:${tag} "
                  "lmsysorg/sglang:latest` after each release build, at 64ec4f88e1ee38fff05d2df5987f2f995c995828 `docker "
                  "buildx imagetools create -t lmsysorg/sglang:latest lmsysorg/sglang:v${version}-cu129-amd64 …`: `latest` "
                  "is the newest release, so an image pulled now holds at least the newest sglang in wheeldoc's table and "
                  "the torch its srt extra pins (a later release never pins an older torch, checked on the table)",
    },
    {
        # the nightly development image, rebuilt daily from the default branch
        "name": "lmsysorg/sglang (dev)",
        "pattern": r"^(?:docker\.io/)?lmsysorg/sglang:dev(?:-(?:x86|arm64))?(?:-cu13)?$",
        "env": {}, "cuda": None, "nvcc": None,
        "env_complete": False,
        "torch": {"version": "newest-pin-of:sglang", "prerelease": False, "installer": "pip into the system Python"},
        "ships": ["sglang"],
        "source": "sgl-project/sglang .github/workflows/release-docker-dev.yml (00c56c229c8798e2a14d1f9d5b70b50141e37014): "
                  "a daily schedule builds docker/Dockerfile `--target framework` with `USE_LATEST_SGLANG=1` (a clone of "
                  "the default branch, installed as `python[all]`) and pushes dev-x86, dev-arm64, dev-x86-cu13, "
                  "dev-arm64-cu13 and the manifests dev and dev-cu13: the default branch is at least as new as the newest "
                  "release, so the image holds at least the torch the newest sglang in wheeldoc's table pins (a later "
                  "release never pins an older torch, checked on the table)",
    },
    {
        # the exception the pytorch/pytorch row leaves out: its tag names a torch the image does not hold
        "name": "pytorch/pytorch:1.9.1 devel",
        "pattern": r"^(?:docker\.io/)?pytorch/pytorch:1\.9\.1-cuda(?P<cuda>11\.1)-cudnn8-devel$",
        "env": {}, "cuda": "{cuda}", "nvcc": True, "python": "3.7",
        "torch": {"version": "1.10.0", "prerelease": False, "installer": "conda in /opt/conda"},
        "ships": None,
        "source": "github.com/pytorch/pytorch issue 69685 (2021-12-09, 'Wrong PyTorch version in Docker image'): in "
                  "pytorch/pytorch:1.9.1-cuda11.1-cudnn8-devel `conda list` shows 'pytorch 1.10.0 "
                  "py3.7_cuda11.1_cudnn8.0.5_0' and collect_env 'PyTorch version: 1.10.0', 'CUDA used to build PyTorch: "
                  "11.1', 'Python version: 3.7.11' (issue 72784 reports the same tag's torch does not match it); issue "
                  "67966 (2021-11-08): the maintainer pushed the 1.9.1 images after torch 1.10.0 was out",
    },
    {
        "name": "pytorch/pytorch:1.9.1 runtime",
        "pattern": r"^(?:docker\.io/)?pytorch/pytorch:1\.9\.1-cuda(?P<cuda>11\.1)-cudnn8-runtime$",
        "env": {}, "cuda": "{cuda}", "nvcc": False,
        "torch": {"version": None, "prerelease": False, "installer": "conda in /opt/conda"},
        "ships": None,
        "source": "github.com/pytorch/pytorch issue 67966 (2021-11-08): 'docker push pytorch/pytorch:1.9.1-cuda11.1-"
                  "cudnn8-runtime' pushed with the devel tag, which holds torch 1.10.0, not 1.9.1 (issue 69685): which "
                  "torch the runtime tag holds was not read, so its version is left unknown",
    },
    {
        # NVIDIA's and jetson-containers' l4t-pytorch images of the `r<L4T>-pth<X.Y>-py3` naming (JetPack 4/5)
        "name": "l4t-pytorch (r<L4T>-pth<X.Y>-py3 tags)",
        "pattern": r"^(?:nvcr\.io/nvidia|(?:docker\.io/)?dustynv)/l4t-pytorch:r(?P<l4t>\d+\.\d+\.\d+)-pth(?P<tmaj>\d+)\."
                   r"(?P<tmin>\d+)-py3$",
        "env": {}, "cuda": None, "nvcc": None,
        "env_complete": False,
        "torch": {"version": "{tmaj}.{tmin}.0", "exact": False, "highest_series": "{tmaj}.{tmin}", "prerelease": None,
                  "installer": "NVIDIA's Jetson (aarch64) wheel, not PyPI"},
        "ships": None,
        "source": "dusty-nv/jetson-containers scripts/docker_build_ml.sh (at e2ae5a48, 2023-08-01): build_pytorch installs "
                  "one NVIDIA Jetson wheel of series X.Y per tag `l4t-pytorch:r$L4T_VERSION-pthX.Y-py3` (e.g. "
                  "torch-1.12.0a0+8a1a93a9.nv22.5 for pth1.12, torch-2.0.0+nv23.05 for pth2.0, torch-1.10.0 for pth1.10), "
                  "and its README (at 419aa138, 2023-05-25) lists these as the images pulled from NGC "
                  "(nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3, …:r32.4.3-pth1.6-py3) or Docker Hub: a torch of series "
                  "{tmaj}.{tmin} (a release or an NVIDIA pre-release build of it), for aarch64",
    },
    {
        # jetson-containers' `<X.Y>-r<L4T>` tags (JetPack 5/6) from L4T r36.3 on: built after TORCH_CUDA_ARCH_LIST
        # became an ENV of every PyTorch container (2024-01-12; r36.3 support came 2024-05-07)
        "name": "jetson-containers pytorch (X.Y-r<L4T> tags, r36.3 and later)",
        "pattern": r"^(?:docker\.io/)?dustynv/(?:l4t-)?pytorch:(?P<tmaj>\d+)\.(?P<tmin>\d+)(?:\.\d+)?-r(?P<l4t>36\.(?:[3-9]|"
                   r"\d{2})\.\d+|3[7-9]\.\d+\.\d+|[4-9]\d\.\d+\.\d+)(?:-cu\d{3})?(?:-\d{2}\.\d{2})?$",
        "env": {"TORCH_CUDA_ARCH_LIST": None}, "cuda": None, "nvcc": None,
        "env_complete": False,
        "torch": {"version": "{tmaj}.{tmin}.0", "exact": False, "highest_series": "{tmaj}.{tmin}", "prerelease": None,
                  "installer": "the Jetson pip server's (or a source) build into the system Python, not PyPI"},
        "ships": None,
        "source": "dusty-nv/jetson-containers packages/pytorch (packages/ml/pytorch) config.py: package `pytorch:X.Y` "
                  "passes TORCH_VERSION=X.Y, install.sh runs `pip3 install torch==${TORCH_VERSION}` from the Jetson pip "
                  "server (522265ef, 2024-09-30) or `uv pip install torch==${TORCH_VERSION} || uv pip install "
                  "--prerelease=allow \"torch>=${PYTORCH_BUILD_VERSION}.dev,<=${PYTORCH_BUILD_VERSION}\"` (dd206bfe), else "
                  "build.sh builds that version; its Dockerfile sets `ENV TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_ARGS}` "
                  "since 337f1d17 (2024-01-12, 'added TORCH_CUDA_ARCH_LIST to all PyTorch containers'; still at dd206bfe) "
                  "and L4T r36.3 images exist since 7a20acb1 (2024-05-07): a torch of series {tmaj}.{tmin} for aarch64 "
                  "(l4t-pytorch is built on that package), TORCH_CUDA_ARCH_LIST set to the build's GPUs (value not known)",
    },
    {
        # the same tags for L4T before r36.3 (JetPack 4/5, r36.2): built before or after 2024-01-12, so whether
        # TORCH_CUDA_ARCH_LIST is set is not known
        "name": "jetson-containers pytorch (X.Y-r<L4T> tags, before r36.3)",
        "pattern": r"^(?:docker\.io/)?dustynv/(?:l4t-)?pytorch:(?P<tmaj>\d+)\.(?P<tmin>\d+)(?:\.\d+)?-r(?P<l4t>3[2-6]\.\d+"
                   r"\.\d+)(?:-cu\d{3})?(?:-\d{2}\.\d{2})?$",
        "env": {}, "cuda": None, "nvcc": None,
        "env_complete": False,
        "torch": {"version": "{tmaj}.{tmin}.0", "exact": False, "highest_series": "{tmaj}.{tmin}", "prerelease": None,
                  "installer": "NVIDIA's Jetson (aarch64) wheel, not PyPI"},
        "ships": None,
        "source": "dusty-nv/jetson-containers packages/pytorch/config.py (cfa8c9cf, 2023-12): `pytorch('X.Y', <wheel>, "
                  "<url>, <L4T>)` installs one NVIDIA Jetson wheel of series X.Y per package `pytorch:X.Y` (e.g. 2.1 -> "
                  "torch-2.1.0a0+41361538.nv23.06 on r35, torch-2.1.0 on r36; 1.13 -> torch-1.13.0a0+340c4120.nv22.06), "
                  "the image tag being `X.Y-r<L4T>`: a torch of series {tmaj}.{tmin} (a release or an NVIDIA pre-release "
                  "build of it), for aarch64",
    },
    {
        # verl's base images: NGC PyTorch with its torch swapped for a PyPI/PyTorch-index release
        "name": "verlai/verl (base-…-torchX.Y… tags)",
        "pattern": r"^(?:docker\.io/)?verlai/verl:base-(?:verl\d+\.\d+(?:-preview)?|v\d+)-cu\d{3}-cudnn\d+(?:\.\d+)?-torch"
                   r"(?P<tmaj>\d+)\.(?P<tmin>\d+)(?:\.\d+)?-fa\d[\w.-]*$",
        "env": {"TORCH_CUDA_ARCH_LIST": None}, "env_complete": False, "cuda": None, "nvcc": None,
        "torch": {"version": "{tmaj}.{tmin}.0", "exact": False, "highest_series": "{tmaj}.{tmin}", "prerelease": False,
                  "installer": "pip into the system Python (the NGC torch uninstalled first)"},
        "ships": None,
        "source": "volcengine/verl docker/*/Dockerfile.base (history to b178a3cd5): each is `FROM nvcr.io/nvidia/pytorch:"
                  "24.08-py3` (25.02, 25.03 for the newer ones), uninstalls the NGC torch and runs `pip install torch==X.Y.Z "
                  "torchvision… torchaudio…` (verl0.4 / v2 `torch2.6` tags: torch==2.6.0; verl0.5 `torch2.7.1`: torch==2.7.1, "
                  "one Dockerfile.base.torch2.7.0 naming the same target installs torch==2.7.0; verl0.6 `torch2.8.0`: "
                  "torch==2.8.0 from the cu128 index): a torch of the tag's series {tmaj}.{tmin}; no Dockerfile changes "
                  "TORCH_CUDA_ARCH_LIST, which the NGC base sets (see the NGC PyTorch row), and the one on NGC 25.03 clears "
                  "PIP_CONSTRAINT",
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


def _check_newest_pin_floor(package: str) -> None:
    """The `newest-pin-of` rows rest on this: every release of `package` pins a torch no older than
    the releases before it (read from the torch-pin table)."""
    from packaging.version import InvalidVersion, Version

    from wheeldoc.data.base_images import torch_pins

    pins = []
    for v, rel in torch_pins()[package]["releases"].items():
        try:
            ver = Version(v)
        except InvalidVersion:
            continue
        exact = [x for x in rel.get("torch") or [] if x.startswith("==") and "," not in x and ";" not in x]
        if exact and not ver.is_prerelease:
            pins.append((ver, Version(exact[0][2:])))
    pins.sort()
    for (a, ta), (b, tb) in zip(pins, pins[1:]):
        assert tb >= ta, f"{package} {b} pins torch {tb}, older than {a}'s {ta}"


def main() -> None:
    _check_newest_pin_floor("vllm")
    _check_newest_pin_floor("sglang")
    for row in ROWS:
        re.compile(row["pattern"])
        assert row["source"], row["name"]
        assert set(row) <= {"name", "pattern", "env", "cuda", "nvcc", "torch", "pip_constraint", "ships", "source",
                            "releases", "python", "python_by", "ships_complete", "env_complete"}, row
        assert row.get("ships_complete", True) is not False or row.get("ships"), row["name"]
        for tag, rel in (row.get("releases") or {}).items():
            (check_vllm_release if row["name"] == "NGC vLLM" else check_release)(tag, rel)
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
                                  "projects": {k: {"arch_source": v[0], "source": v[1],
                                                   **({"build_torch": v[2]} if len(v) > 2 else {})}
                                               for k, v in sorted(EXTENSION_BUILDS.items())}}, indent=1) + "\n")


if __name__ == "__main__":
    main()
