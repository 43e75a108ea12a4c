"""Generated Dockerfiles: the WD4 rules never crash, and applying their safe fixes always leaves a
Dockerfile that parses and no longer raises the findings that were fixed."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wheeldoc.dockerfile.command import analyze_text, apply_edits, safe_edits
from wheeldoc.core.engine import Context
from wheeldoc.core.errors import InputError
from wheeldoc.core.target import build_target

IMAGES = ["python:3.12", "nvidia/cuda:12.8.1-devel-ubuntu24.04", "nvidia/cuda:${CUDA}-runtime-ubuntu24.04",
          "scratch", "nvcr.io/nvidia/pytorch:25.12-py3", "pytorch/pytorch:2.9.0-cuda13.0-cudnn9-devel"]
LINES = [
    "ARG X=1", "ARG CUDA=13.0.1", "ARG TARGETARCH", "ARG UV_HTTP_TIMEOUT", "ARG PIP_INDEX_URL=https://m.example/simple",
    "ENV UV_HTTP_TIMEOUT=600", "ENV UV_TORCH_BACKEND=auto", "ENV UV_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu",
    'ENV TORCH_CUDA_ARCH_LIST="8.0;9.0+PTX"', "ENV CMAKE_ARGS=-DCMAKE_CUDA_ARCHITECTURES=native",
    'ENV NVCC_APPEND_FLAGS="-gencode arch=compute_90,code=[sm_90,compute_90]"', "ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH",
    "ENV UV_PYTHON=/opt/venv/bin/python UV_OVERRIDE=/o.txt", 'ENV PIP_EXTRA_INDEX_URL="a b $c"',
    "RUN uv pip install torch", "RUN pip install --extra-index-url https://download.pytorch.org/whl/cu$(x) vllm",
    "RUN uv venv /opt/venv", "RUN pip install -r /r.txt --override /o.txt", "RUN echo torch==2.1+cu130 > /o.txt",
    "RUN UV_TORCH_BACKEND=auto uv pip install /w/*.whl", "RUN export TORCH_CUDA_ARCH_LIST=$X && pip install --no-build-isolation .",
    "RUN cmake -S . -B b -DCMAKE_CUDA_ARCHITECTURES=${A}", "RUN nvcc -arch=sm_${X} -o k k.cu", "RUN echo $TARGETARCH $X",
    'RUN ["sh", "-c", "pip install $Y"]', "RUN uv sync --locked", "RUN python -m pip install flash-attn",
    "RUN pip install --no-build-isolation git+https://github.com/Dao-AILab/flash-attention.git",
    "COPY <<EOF /o.txt\ntorch==2.11.0+cu130\nEOF", "COPY --from=s0 /opt /opt", "COPY --from=1 /x /y", "COPY req.txt /r.txt",
    "WORKDIR app", "# wheeldoc: ignore=WD401", "RUN <<EOF\nuv pip install vllm\nEOF", "RUN --device=nvidia.com/gpu=all uv pip install --torch-backend auto torch",
    "RUN pip install \\\n  # a comment\n  accelerate", "ONBUILD RUN pip install vllm",
]


@st.composite
def dockerfiles(draw) -> str:
    out = []
    if draw(st.booleans()):
        out.append(draw(st.sampled_from([line for line in LINES if line.startswith("ARG")])))
    for i in range(draw(st.integers(1, 4))):
        if i and draw(st.booleans()):
            out.append(f"FROM s{draw(st.integers(0, i - 1))} AS s{i}")
        else:
            out.append(f"FROM {draw(st.sampled_from(IMAGES))} AS s{i}")
        out += draw(st.lists(st.sampled_from(LINES), max_size=8))
        if draw(st.booleans()):
            value = draw(st.text(alphabet="ab $\"'\\{}=;:/.-+", max_size=12))
            out.append(f"ENV {draw(st.sampled_from(['UV_HTTP_TIMEOUT', 'TORCH_CUDA_ARCH_LIST', 'X']))}={value}")
    return "\n".join(out) + draw(st.sampled_from(["\n", "", "\r\n"]))


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dockerfiles(), st.sampled_from([None, "gb10", "h100"]), st.sampled_from([None, "12.8", "580.95.05"]))
def test_rules_never_crash_and_safe_fixes_hold(text, gpu, driver):
    ctx = Context(build_target(gpu=gpu, driver=driver))
    try:
        df, findings = analyze_text(text, "Dockerfile", ctx)
    except InputError:
        return
    pairs = safe_edits(findings, lambda f: False)
    if not pairs:
        return
    fixed_text = apply_edits(text, (e for _, e in pairs))
    _, after = analyze_text(fixed_text, "Dockerfile", ctx)  # a fixed file always parses
    fixed = {(f.rule, f.data.get("variable") or f.data.get("arg"), f.data.get("stage")) for f, _ in pairs}
    still = {(f.rule, f.data.get("variable") or f.data.get("arg"), f.data.get("stage")) for f in after}
    assert not fixed & still, (text, fixed_text, fixed & still)
