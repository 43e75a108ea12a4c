"""WD405 says a CUDA-major mismatch between the image's nvcc and torch at warning or error only for a
build known to compile CUDA code (a known extension, a CUDA build switch, `--no-build-isolation` in a
file that installs torch, a local project whose build files name CUDA); a VCS URL, sdist or local
project not known to hold CUDA code gets it at info (held-out 9's pure-Python circuit-tracer over NGC
25.01 after pip moved torch to a CUDA 13 build)."""

from __future__ import annotations

TEXT = """
    FROM nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04
    RUN pip install torch==2.12.0
    RUN pip install {first}
    RUN {second}
"""


def wd405(findings: list[dict]) -> list[tuple[int, str]]:
    return [(f["line"], f["severity"]) for f in findings if f["rule"] == "WD405"]


def test_an_unknown_vcs_project_is_said_at_info(check):
    got = wd405(check(TEXT.format(first="git+https://github.com/example/pure-python-tool.git", second="true")))
    assert got == [(3, "info")]


def test_a_known_cuda_build_after_it_in_the_stage_is_still_said(check):
    got = wd405(check(TEXT.format(first="git+https://github.com/example/pure-python-tool.git",
                                  second="pip install --no-build-isolation flash-attn==2.8.3")))
    assert got == [(3, "info"), (4, "error")]
