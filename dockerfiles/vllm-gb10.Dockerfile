# syntax=docker/dockerfile:1.7
# vLLM on a DGX Spark / ASUS GX10: one GB10 (compute capability 12.1, sm_121), aarch64, a
# driver for CUDA 13.0. Every lesson of wheeldoc's field report, applied:
#  1. torch stays the CUDA build: UV_TORCH_BACKEND=cu130 and an overrides file holding
#     torch==2.11.0+cu130 (UV_OVERRIDE) reach every stage that installs, so a dependency
#     that does not pin torch (FlashInfer) cannot pull torch+cpu. The test stage fails the
#     build if torch.version.cuda is None.
#  2. The vLLM wheel must be built against that torch: check it with
#     `wheeldoc abi vllm-*.whl torch==2.11.0+cu130` before copying it into wheels/.
#  3. Kernels compiled here carry sm_121 machine code (TORCH_CUDA_ARCH_LIST=12.1a): no PTX JIT
#     at first load, no PTX newer than the driver.
#  4. Every stage that downloads sets UV_HTTP_TIMEOUT itself: a FROM starts from its base
#     image's environment, ENV of other stages never reaches it.
# Lint: wheeldoc check dockerfiles/vllm-gb10.Dockerfile --gpu gb10 --driver 580.95.05
# Build (on the Spark, or with buildx for linux/arm64), with the vLLM wheel in ./wheels/:
#   docker build -f dockerfiles/vllm-gb10.Dockerfile -t vllm-gb10 .

ARG CUDA_VERSION=13.0.1
ARG UBUNTU=24.04
ARG PYTHON_VERSION=3.12
ARG UV_VERSION=0.9.5
ARG TORCH_VERSION=2.11.0
ARG TORCH_BACKEND=cu130
ARG FLASHINFER_REF=v0.4.1

# ------------------------------------------------------------------- uv binary
FROM --platform=linux/arm64 ghcr.io/astral-sh/uv:${UV_VERSION} AS uv

# ------------------------------------------------------------------- base: toolchain + venv
FROM --platform=linux/arm64 nvidia/cuda:${CUDA_VERSION}-devel-ubuntu${UBUNTU} AS base
ARG PYTHON_VERSION
ARG TORCH_VERSION
ARG TORCH_BACKEND
ENV UV_HTTP_TIMEOUT=600 \
    UV_HTTP_RETRIES=5 \
    UV_LINK_MODE=copy \
    UV_COMPILE_BYTECODE=1 \
    UV_TORCH_BACKEND=${TORCH_BACKEND} \
    UV_OVERRIDE=/opt/overrides.txt \
    UV_PYTHON_INSTALL_DIR=/opt/python \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH
COPY --from=uv /uv /uvx /usr/local/bin/
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ninja-build ccache \
 && rm -rf /var/lib/apt/lists/*
# the torch build every later install must keep
COPY <<EOF /opt/overrides.txt
torch==${TORCH_VERSION}+${TORCH_BACKEND}
EOF
RUN uv venv --python ${PYTHON_VERSION} ${VIRTUAL_ENV}

# ------------------------------------------------------------------- torch (CUDA 13.0 build)
FROM base AS torch
ARG TORCH_VERSION
ARG TORCH_BACKEND
RUN --mount=type=cache,target=/root/.cache/uv \
    uv pip install "torch==${TORCH_VERSION}+${TORCH_BACKEND}" torchvision

# ------------------------------------------------------------------- FlashInfer for sm_121
FROM torch AS flashinfer-build
ARG FLASHINFER_REF
ENV TORCH_CUDA_ARCH_LIST="12.1a" \
    FLASHINFER_CUDA_ARCH_LIST="12.1a" \
    CUDA_HOME=/usr/local/cuda \
    MAX_JOBS=8 \
    NVCC_THREADS=2
WORKDIR /src
RUN git clone --depth 1 --branch ${FLASHINFER_REF} --recursive https://github.com/flashinfer-ai/flashinfer.git
WORKDIR /src/flashinfer
RUN --mount=type=cache,target=/root/.cache/uv \
    uv build --wheel --no-build-isolation --out-dir /wheels .

# ------------------------------------------------------------------- vLLM
FROM torch AS vllm
COPY wheels/ /tmp/wheels/
COPY --from=flashinfer-build /wheels/ /tmp/flashinfer/
RUN --mount=type=cache,target=/root/.cache/uv \
    uv pip install /tmp/wheels/vllm-*.whl /tmp/flashinfer/*.whl

# ------------------------------------------------------------------- checks (lesson 1)
FROM vllm AS test
RUN python -c "import sys, torch; print(torch.__version__, torch.version.cuda); sys.exit(torch.version.cuda is None)"
RUN --mount=type=cache,target=/root/.cache/uv uv pip install pytest==8.3.3

# ------------------------------------------------------------------- runner
FROM --platform=linux/arm64 nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu${UBUNTU} AS runner
ARG TORCH_BACKEND
ENV UV_HTTP_TIMEOUT=600 \
    UV_HTTP_RETRIES=5 \
    UV_LINK_MODE=copy \
    UV_COMPILE_BYTECODE=1 \
    UV_TORCH_BACKEND=${TORCH_BACKEND} \
    UV_OVERRIDE=/opt/overrides.txt \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH
COPY --from=uv /uv /usr/local/bin/uv
COPY --from=vllm /opt/python /opt/python
COPY --from=vllm /opt/venv /opt/venv
COPY --from=vllm /opt/overrides.txt /opt/overrides.txt
# the runner downloads too: it sets UV_HTTP_TIMEOUT itself (trap 4)
RUN --mount=type=cache,target=/root/.cache/uv \
    uv pip install "huggingface-hub[hf-transfer]==0.35.3"
EXPOSE 8000
ENTRYPOINT ["vllm", "serve"]
# the vision encoder's flash-attention library carries only PTX newer than a CUDA 13.0
# driver (trap 3): send the encoder to PyTorch's SDPA
CMD ["Qwen/Qwen3.5-122B-A10B-NVFP4", "--mm-encoder-attn-backend", "TORCH_SDPA"]
