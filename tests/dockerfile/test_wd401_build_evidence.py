"""WD401 for build variables (TORCH_CUDA_ARCH_LIST, MAX_JOBS, …) takes the evidence WD409 takes
that a build compiles native code: a known CUDA extension, a CUDA build switch, or a
`--no-build-isolation` build in a file that installs torch. Where only the base image's nvcc says
a local project of unknown content may compile, the gap is said at info (held-out 4's marie-ai on
a Docker Hub nvidia/cuda devel base: a pure-Python project installed `--no-deps`)."""

from __future__ import annotations

TWO_STAGES = """
    FROM nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04 AS build
    ENV TORCH_CUDA_ARCH_LIST="8.0;9.0"
    RUN pip install torch==2.5.1
    FROM nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04
    COPY . /app
    RUN cd /app && {install}
"""


def arch_gap(findings: list[dict]) -> list[str]:
    return [f["severity"] for f in findings if f["rule"] == "WD401" and f["data"]["variable"] == "TORCH_CUDA_ARCH_LIST"]


def test_only_the_base_images_nvcc_says_it_may_compile(check):
    [f] = [f for f in check(TWO_STAGES.format(install="pip install --no-deps .")) if f["rule"] == "WD401"
           and f["data"]["variable"] == "TORCH_CUDA_ARCH_LIST"]
    assert f["severity"] == "info" and "only the base image's nvcc says it may" in f["message"]


def test_a_cuda_build_switch_is_evidence(check):
    assert arch_gap(check(TWO_STAGES.format(install="FORCE_CUDA=1 pip install --no-deps ."))) == ["error"]


def test_a_no_build_isolation_build_in_a_file_that_installs_torch_is_evidence(check):
    assert arch_gap(check(TWO_STAGES.format(install="pip install --no-build-isolation ."))) == ["error"]


def test_wheel_files_under_no_build_isolation_build_nothing(check):
    text = """
        FROM nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04
        RUN pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cu128
        RUN pip install --no-build-isolation "https://example.org/flash_attn-2.8.3+cu128torch2.7-cp311-cp311-linux_x86_64.whl"
        RUN pip install --no-build-isolation flash-linear-attention
    """
    builds = sorted(f["line"] for f in check(text) if f["rule"] == "WD409")
    assert builds == [4]  # the wheel URL installs; the named package may be built from its sdist


CUDA_SETUP = """from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension
setup(name="myext", ext_modules=[CUDAExtension("myext._C", ["csrc/k.cu"])], cmdclass={"build_ext": BuildExtension})
"""


def test_a_setup_py_in_the_build_context_that_builds_a_cuda_extension_is_evidence(check):
    # the context says what the base image's nvcc only suggests: the gap is an error, and the message
    # does not say the build's native code is unknown
    text = TWO_STAGES.replace("COPY . /app\n    RUN cd /app && ", "WORKDIR /app\n    COPY . .\n    RUN ")
    got = [f for f in check(text.format(install="pip install --no-deps ."), files={"setup.py": CUDA_SETUP})
           if f["rule"] == "WD401" and f["data"]["variable"] == "TORCH_CUDA_ARCH_LIST"]
    assert [f["severity"] for f in got] == ["error"]
    assert "not known here" not in got[0]["message"]


def test_a_setup_py_that_builds_no_cuda_code_leaves_the_gap_at_info(check):
    text = TWO_STAGES.replace("COPY . /app\n    RUN cd /app && ", "WORKDIR /app\n    COPY . .\n    RUN ")
    cython = 'from setuptools import setup\nfrom Cython.Build import cythonize\nsetup(ext_modules=cythonize("a.pyx"))\n'
    assert arch_gap(check(text.format(install="pip install --no-deps ."), files={"setup.py": cython})) == ["info"]
