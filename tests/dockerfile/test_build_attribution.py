"""Two precision fixes seen on held-out set 4: an install of local paths / wheel files with
`--no-deps` resolves nothing from an index (WD401 asks no index, timeout or retry variable of it),
and a build compiles the spec it builds from source, not a bare name beside it (WD409)."""

from __future__ import annotations

STAGES = """
    FROM python:3.12 AS build
    ARG PIP_EXTRA_INDEX_URL=https://example.org/simple
    ENV PIP_DEFAULT_TIMEOUT=100
    RUN pip install torch
    FROM python:3.12
    COPY . /app
    WORKDIR /app
    RUN {install}
"""


def rules(findings: list[dict], rule: str) -> list[dict]:
    return [f for f in findings if f["rule"] == rule and f["severity"] in ("warning", "error")]


def test_no_deps_install_of_local_paths_reads_no_index_settings(check):
    for install in ("pip install --no-deps .", "pip install --no-deps --compile ./dist/app-1.0-py3-none-any.whl",
                    "pip install --no-deps -e ."):
        assert rules(check(STAGES.format(install=install)), "WD401") == [], install


def test_an_install_that_resolves_names_still_reads_them(check):
    for install in ("pip install .", "pip install --no-deps requests", "pip install --no-deps -r requirements.txt ."):
        got = {f["data"]["variable"] for f in rules(check(STAGES.format(install=install),
                                                         files={"requirements.txt": "requests\n"}), "WD401")}
        assert "PIP_EXTRA_INDEX_URL" in got, install


ARCH = """
    FROM pytorch/pytorch:2.6.0-cuda12.6-cudnn9-devel
    RUN pip install {specs}
"""


def test_a_bare_name_beside_a_source_build_is_not_what_compiles(check):
    text = ARCH.format(specs="xformers 'unsloth[huggingface] @ git+https://github.com/unslothai/unsloth.git'")
    assert rules(check(text), "WD409") == []


def test_the_source_spec_or_no_binary_still_compiles(check):
    for specs in ("'xformers @ git+https://github.com/facebookresearch/xformers.git'",
                  "--no-binary xformers xformers 'unsloth @ git+https://github.com/unslothai/unsloth.git'"):
        [f] = rules(check(ARCH.format(specs=specs)), "WD409")
        assert "compiles xformers" in f["message"], specs
