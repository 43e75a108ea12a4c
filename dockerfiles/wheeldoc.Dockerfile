# syntax=docker/dockerfile:1.7
# wheeldoc itself, for CI jobs that have Docker but not Python:
#   docker build -f dockerfiles/wheeldoc.Dockerfile -t wheeldoc .
#   docker run --rm -v "$PWD:/work" -w /work wheeldoc check Dockerfile uv.lock
# Two stages: uv installs the locked dependencies into /opt/wheeldoc, the runtime copies it.
ARG PYTHON_VERSION=3.12
ARG UV_VERSION=0.9.5

FROM ghcr.io/astral-sh/uv:${UV_VERSION} AS uv

FROM python:${PYTHON_VERSION}-slim AS build
ENV UV_HTTP_TIMEOUT=300 \
    UV_LINK_MODE=copy \
    UV_COMPILE_BYTECODE=1 \
    UV_PYTHON_DOWNLOADS=never \
    UV_PROJECT_ENVIRONMENT=/opt/wheeldoc
COPY --from=uv /uv /usr/local/bin/uv
WORKDIR /src
RUN --mount=type=cache,target=/root/.cache/uv \
    --mount=type=bind,source=uv.lock,target=uv.lock \
    --mount=type=bind,source=pyproject.toml,target=pyproject.toml \
    uv sync --locked --no-dev --no-install-project
COPY pyproject.toml uv.lock README.md ./
COPY wheeldoc ./wheeldoc
RUN --mount=type=cache,target=/root/.cache/uv \
    uv sync --locked --no-dev --no-editable

FROM python:${PYTHON_VERSION}-slim AS runtime
COPY --from=build /opt/wheeldoc /opt/wheeldoc
ENV PATH=/opt/wheeldoc/bin:$PATH
RUN useradd --create-home --uid 1000 wheeldoc
USER wheeldoc
ENTRYPOINT ["wheeldoc"]
CMD ["--help"]
