"""A torch installed with conda from the PyTorch channel, followed into later pip installs: its
last release there is 2.5 (pytorch/pytorch#138506), so a later requirement of a newer torch
replaces it; one from conda-forge or the default channels stays unknown."""

from __future__ import annotations

import pytest

from wheeldoc.dockerfile.facts import DockerFacts
from wheeldoc.dockerfile.parser import parse_text
from wheeldoc.dockerfile.stages import analyze
from wheeldoc.dockerfile.torch_state import conda_torch
from wheeldoc.core.target import Target


def wd403(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["rule"] == "WD403" and f["severity"] in ("warning", "error")]


def _conda(line: str):
    text = f"FROM ubuntu:22.04\nRUN {line}\n"
    df = parse_text(text, "Dockerfile")
    facts = DockerFacts(df, analyze(df), Target(), text=text)
    return conda_torch(facts.steps[0])


@pytest.mark.parametrize("line, want", [
    ("conda install pytorch torchvision pytorch-cuda=12.1 -c pytorch -c nvidia", (None, "1.13.0", "2.5")),
    ("conda install -y pytorch==2.1.0 torchvision==0.16.0 pytorch-cuda=11.8 -c pytorch -c nvidia", ("2.1.0", None, None)),
    ("mamba install pytorch=2.3 -c pytorch", (None, "2.3.0", "2.3")),
    ("conda install pytorch::pytorch", (None, None, "2.5")),
    ("conda install -c conda-forge pytorch", None),
    ("conda install pytorch", None),
])
def test_what_conda_installs(line, want):
    got = _conda(line)
    assert (got[:3] if got else None) == want


def test_a_pip_install_needing_a_newer_torch_replaces_condas(check):
    text = """
        FROM nvidia/cuda:12.1.0-devel-ubuntu22.04
        RUN conda install -y pytorch torchvision pytorch-cuda=12.1 -c pytorch -c nvidia
        RUN pip install vllm==0.9.1
    """
    [f] = wd403(check(text))
    assert f["severity"] == "error" and "installed by conda on line 2" in f["message"]


def test_the_same_torch_pinned_through_conda_is_kept(check):
    text = """
        FROM nvidia/cuda:12.1.0-devel-ubuntu22.04
        RUN conda install -y pytorch==2.5.1 pytorch-cuda=12.4 -c pytorch -c nvidia
        RUN pip install xformers==0.0.28.post3
    """
    assert wd403(check(text)) == []  # xformers 0.0.28.post3 pins torch==2.5.1: kept


def test_conda_forge_torch_stays_unknown(check):
    text = """
        FROM nvidia/cuda:12.1.0-devel-ubuntu22.04
        RUN conda install -y -c conda-forge pytorch
        RUN pip install vllm==0.9.1
    """
    assert wd403(check(text)) == []
