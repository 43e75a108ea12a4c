"""A clone of a known package's default branch is at least as new as its newest release (its
torch floor holds: sources do not go back); a clone at a tag, branch or commit is not judged.
An isolated source build whose own requirements move torch compiles against the torch they
resolve to (WD405 with the image's nvcc); with --no-build-isolation it compiles against the torch
already there."""

from __future__ import annotations

BASE = """
    FROM nvidia/cuda:11.8.0-devel-ubuntu22.04
    RUN apt-get update && apt-get install -y python3-pip git
    RUN pip3 install "torch==2.0.1" --extra-index-url https://download.pytorch.org/whl/cu118
    RUN git clone {clone} https://github.com/vllm-project/vllm.git && \\
        cd vllm && {checkout}pip3 install {flags}-e .
"""


def found(findings: list[dict], rule: str) -> list[dict]:
    return [f for f in findings if f["rule"] == rule and f["severity"] in ("warning", "error")]


def text(clone: str = "", checkout: str = "", flags: str = "") -> str:
    return BASE.format(clone=clone, checkout=checkout, flags=flags)


def test_a_default_branch_clone_moves_the_torch_and_compiles_against_the_new_one(check):
    for clone in ("", "--depth 1", "--single-branch --depth 1 --branch main", "-b master"):
        f = check(text(clone=clone))
        [replaced] = found(f, "WD403")
        assert replaced["severity"] == "error" and "a clone of vllm's default branch" in replaced["message"], clone
        [built] = found(f, "WD405")
        assert built["data"]["nvcc_cuda"] == "11.8" and built["data"]["torch_cuda"] == "13.x", clone


def test_a_clone_at_a_tag_or_commit_is_not_judged(check):
    for kw in ({"clone": "-b v0.2.0"}, {"clone": "--branch=v0.2.0"}, {"checkout": "git checkout 1a2b3c4 && "}):
        f = check(text(**kw))
        assert found(f, "WD403") == [] and found(f, "WD405") == [], kw


def test_without_build_isolation_the_build_uses_the_torch_already_there(check):
    f = check(text(flags="--no-build-isolation "))
    assert found(f, "WD403")  # the install still moves torch afterwards
    assert found(f, "WD405") == []  # but the compile ran against torch 2.0.1 (CUDA 11.8, from the cu118 index)


def test_more_ways_to_name_a_ref_are_not_judged(check):
    # a branch attached to -b, a checkout through `git -C DIR`, and a --revision
    for kw in ({"clone": "-bv0.2.0"}, {"clone": "--revision=v0.2.0"},
               {"checkout": "cd .. && git -C vllm checkout v0.2.0 && cd vllm && "}):
        f = check(text(**kw))
        assert found(f, "WD403") == [] and found(f, "WD405") == [], kw
    # options whose value is not the URL
    f = check(text(clone="--reference-if-able /cache/vllm --depth 1"))
    assert found(f, "WD403"), "the URL after valued options is still the clone's"
