"""An unpinned `pip install torch` on an image whose Python is not known: for each Python the
image may have, the install took the newest release the table knows for it (or a later one). A
later install that admits none of those, whatever the Python, replaces it (WD403); one that admits
some is not judged."""

from __future__ import annotations

from wheeldoc.data.base_images import torch_pythons


def wd403(findings: list[dict]) -> list[dict]:
    return [f for f in findings if f["rule"] == "WD403" and f["severity"] in ("warning", "error")]


CUDA_BASE = """
    FROM nvidia/cuda:12.4.1-devel-ubuntu22.04
    RUN apt-get update && apt-get install -y python3-pip
    RUN pip install torch
    RUN {install}
"""


def test_an_exact_old_pin_replaces_the_newest_torch_of_every_python(check):
    # vllm 0.7.2 pins torch==2.5.1; the newest torch for each Python vllm 0.7.2 admits (3.9 on) is later
    [f] = wd403(check(CUDA_BASE.format(install="pip install vllm==0.7.2")))
    assert f["severity"] == "error" and f["line"] == 4
    assert "for the image's Python, not known here: Python 3.7: 1.13.1 or later" in f["message"]
    assert "3.9: 2.8.0 or later" in f["message"]


def test_the_per_python_floors_come_from_the_table():
    newest_39 = max((v for v, pys in torch_pythons().items() if "3.9" in pys and "a" not in v and "rc" not in v),
                    key=lambda v: tuple(int(x) for x in v.split(".")))
    assert newest_39 == "2.8.0"  # the message above quotes it: the table, not this test, is the source


def test_an_install_that_admits_the_newest_torch_is_quiet(check):
    assert wd403(check(CUDA_BASE.format(install="pip install transformers accelerate"))) == []
    assert wd403(check(CUDA_BASE.format(install="pip install vllm==0.7.2 --no-deps"))) == []


def test_over_an_unknown_base_it_is_a_warning_unless_the_name_suggests_a_torch(check):
    plain = """
        FROM quay.io/example/ubi9-cuda-py:latest-devel
        RUN pip install torch
        RUN pip install vllm==0.7.2
    """
    [f] = wd403(check(plain))
    assert f["severity"] == "warning" and "taking the base image (not in the base-image table" in f["message"]
    # a base whose name suggests a torch may already hold one that `pip install torch` keeps
    assert wd403(check(plain.replace("ubi9-cuda-py", "pytorch-cuda-py"))) == []


def test_a_known_python_keeps_the_single_floor(check):
    text = """
        FROM python:3.11-slim
        RUN pip install torch
        RUN pip install vllm==0.7.2
    """
    [f] = wd403(check(text))
    assert f["severity"] == "error" and "not known here: Python" not in f["message"]


def test_each_candidate_is_judged_against_the_floor_of_its_own_python():
    from wheeldoc.dockerfile.dependents import Candidate, verdict
    from wheeldoc.dockerfile.torch_state import TorchState

    state = TorchState(True, where="installed on line 3", by_python=(("3.8", "2.4.1"), ("3.9", "2.8.0")))
    below_25 = ("pkg 1.0", "<2.5", False)
    # 3.8's newest (2.4.1) fits <2.5, 3.9's (2.8.0) does not: which Python, not known
    assert verdict([Candidate("3.8", "1.0", (below_25,)), Candidate("3.9", "1.0", (below_25,))], state) is None
    assert verdict([Candidate("3.9", "1.0", (below_25,))], state) is False
    # a floor is not a version: a later release may be there, so a lower bound it meets is a yes
    assert verdict([Candidate("3.9", "1.0", (("pkg 1.0", ">=2.1", False),))], state) is True


def test_an_unknown_base_counts_as_plain_only_when_its_name_says_so(check):
    text = """
        FROM {base}
        RUN pip install torch
        RUN pip install vllm==0.10.0
    """
    # an ML image whose name says nothing of torch may hold one (this tag names torch 2.7.1, which
    # vllm 0.10.0's torch==2.7.1 keeps): not judged
    assert wd403(check(text.format(base="axolotlai/axolotl:main-py3.11-cu126-2.7.1"))) == []
    assert wd403(check(text.format(base="example/trainer:latest"))) == []
    [f] = wd403(check(text.format(base="example/cuda-python:12.4")))
    assert f["severity"] == "warning"
