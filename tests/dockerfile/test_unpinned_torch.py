"""An unpinned `pip install torch` takes the newest release the index serves: at least the newest
final release the tables know for the image's Python (a PyTorch CUDA index: of the series built
for it). A later install pinning an older torch then replaces it (WD403, the story's trap 1)."""

from __future__ import annotations

import pytest


@pytest.fixture
def wd403(check):
    return lambda text: [(f["line"], f["severity"]) for f in check(text)
                         if f["rule"] == "WD403" and f["severity"] in ("warning", "error")]


VENV = """
    FROM nvidia/cuda:13.0.2-cudnn-devel-ubuntu24.04
    RUN python3.12 -m venv /opt/venv
    ENV PATH="/opt/venv/bin:$PATH"
    RUN pip install torch torchvision --index-url https://download.pytorch.org/whl/cu130
    RUN pip install vllm==0.12.0
"""


def test_a_venv_on_path_gives_the_python_and_the_pinned_dependent_replaces_the_newest_torch(wd403):
    assert wd403(VENV) == [(5, "error")]


def test_the_venv_pip_by_path_and_an_activated_venv(wd403):
    assert wd403(VENV.replace('ENV PATH="/opt/venv/bin:$PATH"\n', "").replace("RUN pip", "RUN /opt/venv/bin/pip")) \
        == [(4, "error")]
    assert wd403("""
        FROM nvidia/cuda:13.0.2-cudnn-devel-ubuntu24.04
        RUN uv venv .venv --python 3.11 && . .venv/bin/activate && uv pip install torch && uv pip install vllm==0.12.0
    """) == [(2, "error")]


def test_no_python_known_judged_per_python(wd403):
    # vllm 0.12.0 (Python 3.10 on) pins torch==2.9.0; for each of those Pythons the cu130 index's
    # newest torch is later: replaced, whichever Python the venv has
    assert wd403(VENV.replace("python3.12 -m venv", "python3 -m venv")) == [(5, "error")]


def test_an_older_pin_on_an_old_cuda_index_is_still_replaced(wd403):
    assert wd403("""
        FROM python:3.11
        RUN pip install torch --index-url https://download.pytorch.org/whl/cu121
        RUN pip install vllm==0.5.0
    """) == [(3, "error")]  # vllm 0.5.0 pins torch 2.3.0; the cu121 index serves up to 2.5.1


def test_an_old_cuda_index_stops_at_its_last_series(wd403):
    # cu121 wheels exist for torch 2.1 to 2.5: vllm 0.6.4's torch==2.5.1 may well be what is there
    assert wd403("""
        FROM python:3.11
        RUN pip install torch --index-url https://download.pytorch.org/whl/cu121
        RUN pip install vllm==0.6.4
    """) == []


def test_a_pinned_or_held_torch_is_not_the_newest(wd403):
    assert wd403(VENV.replace("torch torchvision", "torch==2.9.0 torchvision")) == []
    assert wd403(VENV.replace("vllm==0.12.0", "--no-deps vllm==0.12.0")) == []


def test_a_bare_torch_over_a_torch_already_there_keeps_it(wd403):
    """pip and uv keep an installed torch that satisfies a bare `torch`: no newest release then."""
    text = """
        FROM python:3.11
        RUN pip install torch==2.3.0
        RUN pip install torch
        RUN pip install vllm==0.5.0
    """
    assert wd403(text) == []  # vllm 0.5.0 pins torch 2.3.0, which is what is there
    assert wd403(text.replace("RUN pip install torch\n", "RUN pip install -U torch\n")) == [(4, "error")]


def test_the_venv_is_found_by_its_folder_not_its_base_name(wd403):
    assert wd403("""
        FROM nvidia/cuda:13.0.2-cudnn-devel-ubuntu24.04
        RUN python3.12 -m venv /opt/venv
        RUN python3.12 -m venv /srv/app/venv --prompt app
        ENV PATH="/srv/app/venv/bin:$PATH"
        RUN pip install torch --index-url https://download.pytorch.org/whl/cu130
        RUN pip install vllm==0.12.0
    """) == [(6, "error")]


EXTRA_CU128 = """
    FROM python:3.12
    RUN {tool} torch --extra-index-url https://download.pytorch.org/whl/cu128
    RUN {tool} vllm==0.26.0
"""


def test_pip_takes_the_highest_torch_across_pypi_and_an_extra_cuda_index(wd403):
    # pip: PyPI's newest (2.15) beats the cu128 index's last series (2.11, PyTorch's release matrix):
    # vllm 0.26.0's torch==2.11.0 replaces it
    assert wd403(EXTRA_CU128.format(tool="pip install")) == [(3, "error")]


def test_uv_takes_torch_from_the_extra_cuda_index_first(wd403):
    # uv takes torch from the first index that has it, the extra one: cu128's newest is of series 2.11,
    # which vllm 0.26.0's torch==2.11.0 may well be
    assert wd403(EXTRA_CU128.format(tool="uv pip install --system")) == []


def test_the_cu126_index_serves_series_after_2_11(wd403):
    # PyTorch's matrix lists cu126 for 2.12 to 2.14 (not cu128): the cu126 index's newest is 2.14.x, so
    # vllm 0.26.0's torch==2.11.0 is below it; on the cu128 index (last 2.11) it may be what is there
    text = """
        FROM python:3.12
        RUN pip install torch --index-url https://download.pytorch.org/whl/{variant}
        RUN pip install vllm==0.26.0
    """
    assert wd403(text.format(variant="cu126")) == [(3, "error")]
    assert wd403(text.format(variant="cu128")) == []
