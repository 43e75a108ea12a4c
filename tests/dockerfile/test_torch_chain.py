"""The torch an install takes from PyPI, followed into later CUDA builds (WD405), and the torch
requirement of a requirements file inside a `git clone` of a project the pin table knows.

When requirements move torch off the build already in the image (or bring one where there was
none), pip takes the newest torch release on PyPI they admit for the image's Python; PyPI's wheels
of that series are CUDA builds of a known major (wheeldoc/data/torch.json). A later
`--no-build-isolation` / source build compiles with the image's nvcc against that torch, and
torch.utils.cpp_extension refuses a different CUDA major.
"""

from __future__ import annotations


def hits(findings, rule):
    return [(f["line"], f["severity"]) for f in findings if f["rule"] == rule and f["severity"] != "info"]


def test_pinned_dependent_moves_torch_then_the_build_compiles_against_it(check):
    """pytorch/pytorch 2.1.2 (CUDA 12.1 devel); vllm 0.9.1 pins torch==2.7.0 (a CUDA 12 build on
    PyPI): the build after it is fine. vllm 0.33.0 pins torch==2.14.0, a CUDA 13 build: nvcc 12.1 then
    compiles against CUDA 13 torch."""
    f = check("""
        FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-devel AS a
        RUN pip install vllm==0.33.0
        RUN pip install flash-attn --no-build-isolation
        FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-devel AS b
        RUN pip install vllm==0.9.1
        RUN pip install flash-attn --no-build-isolation
        FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-devel AS c
        RUN pip install -c /etc/torch.txt vllm==0.33.0
        RUN pip install flash-attn --no-build-isolation
    """)
    assert hits(f, "WD405") == [(3, "error")]
    (w,) = [x for x in f if x["rule"] == "WD405"]
    assert "torch==2.14.0" in w["message"] and "CUDA 13" in w["message"]
    assert w["data"]["torch_cuda"] == "13.x"


def test_a_pip_configured_index_leaves_the_pypi_torch_unknown(check):
    """`pip config set global.index-url …`, a pip.conf copied in, or PIP_CONFIG_FILE give pip an
    index the model does not read: which torch the install takes is then not known."""
    base = """
        FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-devel
        {setup}
        RUN pip install vllm==0.33.0
        RUN pip install flash-attn --no-build-isolation
    """
    assert hits(check(base.format(setup="RUN true")), "WD405") == [(4, "error")]
    for setup in ("RUN pip config set global.index-url https://mirror.example/simple",
                  "COPY pip.conf /etc/pip.conf", "ENV PIP_CONFIG_FILE=/opt/pip.conf"):
        assert hits(check(base.format(setup=setup), files={"pip.conf": "[global]\n"}), "WD405") == [], setup


def test_unpinned_dependent_from_requirements_is_a_warning(check):
    """The newest release of an unpinned requirement decides: assumed, so a warning. (The image's
    Python is said here: on other Pythons the newest xformers asks another torch, of another CUDA.)"""
    f = check("""
        FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-devel
        ENV PYTHON_VERSION=3.10
        COPY requirements.txt .
        RUN pip install -r requirements.txt
        RUN pip install flash-attn --no-build-isolation
    """, files={"requirements.txt": "einops\nxformers\n"})
    assert hits(f, "WD403") and hits(f, "WD403")[0][0] == 4
    assert hits(f, "WD405") == [(5, "warning")]


def test_extra_pytorch_index_of_an_old_cuda_loses_to_pypi_with_pip(check):
    """pip takes the highest version across PyPI and an extra index: the cu116 index holds no torch
    2.x, so an open requirement gets PyPI's newest. With --index-url the index decides (no finding
    from PyPI), and uv takes torch from the extra index first (nor there)."""
    f = check("""
        FROM nvidia/cuda:11.6.1-devel-ubuntu20.04 AS pip-extra
        ENV PYTHON_VERSION=3.10
        RUN pip install xformers==0.0.35 --extra-index-url https://download.pytorch.org/whl/cu116
        RUN pip install --no-build-isolation git+https://github.com/Dao-AILab/causal-conv1d
        FROM nvidia/cuda:11.6.1-devel-ubuntu20.04 AS pip-only
        ENV PYTHON_VERSION=3.10
        RUN pip install xformers==0.0.35 --index-url https://download.pytorch.org/whl/cu116
        RUN pip install --no-build-isolation git+https://github.com/Dao-AILab/causal-conv1d
        FROM nvidia/cuda:11.6.1-devel-ubuntu20.04 AS uv-extra
        ENV PYTHON_VERSION=3.10
        RUN uv pip install --system xformers==0.0.35 --extra-index-url https://download.pytorch.org/whl/cu116
        RUN uv pip install --system --no-build-isolation git+https://github.com/Dao-AILab/causal-conv1d
    """)
    assert [line for line, _ in hits(f, "WD405")] == [4]


def test_requirements_in_a_clone_of_a_known_project(check):
    """`git clone` of xformers, then its requirements.txt: the clone's text is not known; xformers'
    newest release asks torch>=2.10 (no upper bound), so pip takes PyPI's newest torch, a CUDA 13
    build, and nvcc 11.6 compiles against it. Assumed: a warning."""
    f = check("""
        FROM nvidia/cuda:11.6.1-devel-ubuntu20.04
        ARG PYTHON_VERSION=3.10
        WORKDIR /tmp/xformers
        RUN git clone --depth 1 https://github.com/facebookresearch/xformers.git /tmp/xformers
        RUN pip install -r requirements.txt --extra-index-url https://download.pytorch.org/whl/cu116
        RUN FORCE_CUDA=1 pip wheel . --no-deps
    """)
    assert hits(f, "WD405") == [(6, "warning")]
    (w,) = [x for x in f if x["rule"] == "WD405"]
    assert "git clone of xformers" in w["message"] and "assumed" in w["message"]


def test_a_clone_at_a_branch_tag_or_commit_is_not_the_newest_release(check):
    text = """
        FROM nvidia/cuda:11.6.1-devel-ubuntu20.04
        ARG PYTHON_VERSION=3.10
        WORKDIR /tmp/xformers
        RUN git clone --depth 1 https://github.com/facebookresearch/xformers.git /tmp/xformers
        RUN pip install -r requirements.txt --extra-index-url https://download.pytorch.org/whl/cu116
        RUN FORCE_CUDA=1 pip wheel . --no-deps
    """
    tagged = text.replace("--depth 1 https", "-b v0.0.20 https")
    assert hits(check(tagged), "WD405") == []
    checked_out = text.replace("/tmp/xformers\n        RUN pip", "/tmp/xformers && git checkout v0.0.20\n        RUN pip")
    assert checked_out != text and hits(check(checked_out), "WD405") == []


def test_clone_requirement_never_judges_a_torch_already_there(check):
    """Where a torch is already in the image, the clone's torch floor (which may be lower than the
    release's) decides whether pip keeps it: not known, so nothing is said."""
    f = check("""
        FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-devel
        RUN git clone https://github.com/facebookresearch/xformers.git /src/xformers
        RUN pip install -r /src/xformers/requirements.txt
        RUN cd /src/xformers && pip install --no-build-isolation .
    """)
    assert hits(f, "WD403") == [] and hits(f, "WD405") == []


def test_clone_of_an_unknown_project_or_a_bounded_release_is_not_judged(check):
    f = check("""
        FROM nvidia/cuda:11.6.1-devel-ubuntu20.04
        ARG PYTHON_VERSION=3.10
        RUN git clone https://github.com/someone/some-project.git /src/p
        RUN pip install -r /src/p/requirements.txt
        RUN cd /src/p && pip install --no-build-isolation .
        RUN git clone https://github.com/vllm-project/vllm.git /src/vllm
        RUN pip install -r /src/vllm/requirements.txt
        RUN cd /src/vllm && pip install --no-build-isolation .
    """)
    assert hits(f, "WD405") == []


def test_a_conda_torch_is_followed_and_a_conda_forge_one_is_not(check):
    """A torch conda installs from the PyTorch channel is followed (pytorch==2.1.0, CUDA 11.8): xformers
    0.0.35 asks torch>=2.10, pip takes PyPI's newest (a CUDA 13 build) over it, and the flash-attn build
    after it meets nvcc 11.8. From conda-forge which torch is there is not known: not judged."""
    text = """
        FROM nvidia/cuda:11.8.0-devel-ubuntu22.04
        ENV PYTHON_VERSION=3.10
        RUN conda install -y {what}
        RUN pip install xformers==0.0.35
        RUN pip install flash-attn --no-build-isolation
    """
    assert hits(check(text.format(what="pytorch==2.1.0 pytorch-cuda=11.8 -c pytorch -c nvidia")), "WD405") == \
        [(5, "error")]
    assert hits(check(text.format(what="-c conda-forge pytorch")), "WD405") == []


def test_an_install_with_unknown_inputs_is_not_followed(check):
    """A local wheel or an unread requirements file in the same install may ask for another torch:
    which one PyPI serves is then not known."""
    f = check("""
        FROM nvidia/cuda:11.6.1-devel-ubuntu20.04
        ENV PYTHON_VERSION=3.10
        RUN pip install xformers==0.0.35 /wheels/mything-1.0-py3-none-any.whl
        RUN pip install --no-build-isolation git+https://github.com/Dao-AILab/causal-conv1d
        FROM nvidia/cuda:11.6.1-devel-ubuntu20.04
        ENV PYTHON_VERSION=3.10
        COPY reqs.txt /r/reqs.txt
        RUN pip install xformers==0.0.35 -r /r/other.txt
        RUN pip install --no-build-isolation git+https://github.com/Dao-AILab/causal-conv1d
    """)
    assert hits(f, "WD405") == []


def test_an_exact_pypi_torch_pin_has_the_cuda_of_its_pypi_wheels(check):
    """`pip install torch==2.14.1` from PyPI is a CUDA 13 build (wheeldoc/data/torch.json); an nvcc 12.1
    build against it fails; torch 2.5.1 from PyPI (CUDA 12) is fine; a CUDA index decides instead."""
    base = """
        FROM nvidia/cuda:12.1.1-devel-ubuntu22.04
        RUN pip install torch=={version}{index}
        RUN pip install --no-build-isolation flash-attn
    """
    assert hits(check(base.format(version="2.14.1", index="")), "WD405") == [(3, "error")]
    assert hits(check(base.format(version="2.5.1", index="")), "WD405") == []
    cu121 = " --index-url https://download.pytorch.org/whl/cu121"
    assert hits(check(base.format(version="2.5.1", index=cu121)), "WD405") == []


def test_an_isolated_build_compiles_against_the_torch_its_build_requirements_take(check):
    """causal-conv1d's default branch requires torch in [build-system]: pip's isolated build installs
    PyPI's newest (a CUDA 13 build) and, forced to compile, meets the image's nvcc 12.1. A clone made by
    an earlier RUN counts; without the force switch setup.py fetches a prebuilt wheel (not judged); with
    --no-build-isolation it builds against the image's own torch (CUDA 12.1: fine)."""
    base = """
        FROM pytorch/pytorch:2.3.0-cuda12.1-cudnn8-devel
        WORKDIR /code
        RUN git clone https://github.com/Dao-AILab/causal-conv1d{ref}
        RUN {force}pip install {flags}./causal-conv1d/
    """
    forced = "CAUSAL_CONV1D_FORCE_BUILD=TRUE "
    assert hits(check(base.format(ref="", force=forced, flags="")), "WD405") == [(4, "error")]
    assert hits(check(base.format(ref="", force="", flags="")), "WD405") == []
    assert hits(check(base.format(ref="", force=forced, flags="--no-build-isolation ")), "WD405") == []
    assert hits(check(base.format(ref=" -b v1.4.0", force=forced, flags="")), "WD405") == []
