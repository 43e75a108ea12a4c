"""Base-image rows for the families a scan of public Dockerfiles found unknown: SGLang's moving
and suffixed tags, and the Jetson PyTorch images (jetson-containers' `X.Y-r<L4T>` tags and the
`r<L4T>-pthX.Y-py3` l4t-pytorch tags). Each answer is what the row's published source says, and
what it does not say stays unknown."""

from __future__ import annotations

import pytest

from wheeldoc.data.base_images import base_image, newest_release, torch_pins, torch_requirement


def _newest_sglang_pin() -> str:
    newest = newest_release(torch_pins()["sglang"]["releases"])
    spec, _ = torch_requirement("sglang", newest)
    assert spec.startswith("==")
    return spec[2:]


@pytest.mark.parametrize("ref", ["lmsysorg/sglang:latest", "lmsysorg/sglang", "docker.io/lmsysorg/sglang:latest",
                                 "lmsysorg/sglang:dev", "lmsysorg/sglang:dev-cu13", "lmsysorg/sglang:dev-arm64"])
def test_sglang_moving_tags_hold_at_least_the_newest_release_torch(ref):
    img = base_image(ref)
    assert img is not None and img.torch is not None
    assert img.torch.version is None and img.torch.lowest == _newest_sglang_pin() and img.torch.highest_series is None
    assert "at least the newest sglang in the table" in img.torch.via
    assert img.ships == frozenset({"sglang"}) and img.cuda is None and img.nvcc is None and not img.env_complete


@pytest.mark.parametrize("ref,torch", [("lmsysorg/sglang:v0.4.6.post1-cu124", "2.6.0"),
                                       ("lmsysorg/sglang:v0.5.10.post1-runtime", "2.9.1"),
                                       ("lmsysorg/sglang:v0.5.16-cu130", "2.11.0"),
                                       ("lmsysorg/sglang:v0.5.14-runtime", "2.11.0")])
def test_sglang_release_tags_with_a_suffix_hold_that_release_pin(ref, torch):
    img = base_image(ref)
    assert img.row == "lmsysorg/sglang (release tags with a suffix)"
    sglang = ref.split(":v")[1].split("-")[0]
    assert img.torch.version == torch == torch_requirement("sglang", sglang)[0][2:]
    assert img.cuda is None and img.nvcc is None  # the cu1xx tags once ran on a tritonserver base whatever the tag


@pytest.mark.parametrize("ref", ["lmsysorg/sglang:latest-rocm", "lmsysorg/sglang:v0.5.8-rocm700-mi35x",
                                 "lmsysorg/sglang:blackwell", "lmsysorg/sglang:v0.5.0rc0-cu126",
                                 "lmsysorg/sglang:nightly-dev-20251208-5e2cda61"])
def test_sglang_tags_without_evidence_stay_unknown(ref):
    assert base_image(ref) is None


def test_sglang_pins_only_move_up():
    """The `latest`/`dev` floor rests on this (scripts/make_base_images.py checks it when it rebuilds)."""
    from packaging.version import Version

    rel = torch_pins()["sglang"]["releases"]
    pins = sorted((Version(v), Version(r["torch"][0][2:])) for v, r in rel.items()
                  if not Version(v).is_prerelease and r.get("torch") and len(r["torch"]) == 1
                  and r["torch"][0].startswith("==") and ";" not in r["torch"][0])
    assert len(pins) > 20
    assert all(b[1] >= a[1] for a, b in zip(pins, pins[1:]))


@pytest.mark.parametrize("ref,series", [("nvcr.io/nvidia/l4t-pytorch:r35.2.1-pth2.0-py3", "2.0"),
                                        ("nvcr.io/nvidia/l4t-pytorch:r32.4.3-pth1.6-py3", "1.6"),
                                        ("dustynv/l4t-pytorch:r35.1.0-pth1.12-py3", "1.12"),
                                        ("dustynv/pytorch:2.7-r36.4.0", "2.7"),
                                        ("dustynv/pytorch:2.6-r36.4.0-cu128-24.04", "2.6"),
                                        ("dustynv/pytorch:2.9.1-r36.4.0", "2.9"),
                                        ("dustynv/l4t-pytorch:2.2-r35.4.1", "2.2"),
                                        ("dustynv/pytorch:1.13-r35.3.1", "1.13")])
def test_jetson_tags_name_the_torch_series(ref, series):
    img = base_image(ref)
    assert img is not None and img.torch.version is None
    assert img.torch.lowest == f"{series}.0.dev0" and img.torch.highest_series == series  # NVIDIA's X.Ya0+… included
    assert f"a torch of series {series}" in img.torch.via
    assert img.ships is None and img.cuda is None and img.nvcc is None and not img.env_complete


def test_jetson_arch_list_is_set_only_where_the_build_recipe_evidences_it():
    # ENV TORCH_CUDA_ARCH_LIST since 2024-01-12; L4T r36.3 images are younger than that
    assert base_image("dustynv/pytorch:2.7-r36.4.0").env == {"TORCH_CUDA_ARCH_LIST": None}
    assert base_image("dustynv/pytorch:2.6-r36.4.0-cu128").env == {"TORCH_CUDA_ARCH_LIST": None}
    # r36.2 and older: built before or after it, so not said either way
    assert base_image("dustynv/pytorch:2.1-r36.2.0").env == {}
    assert base_image("dustynv/l4t-pytorch:2.2-r35.4.1").env == {}


@pytest.mark.parametrize("ref", ["dustynv/l4t-pytorch:r36.4.0", "dustynv/l4t-pytorch:latest",
                                 "dustynv/pytorch:2.6-amd64-cu128-24.04", "dustynv/l4t-pytorch:r36.3.0-cu124",
                                 "dustynv/pytorch:2.8-builder-r36.4.0"])
def test_jetson_tags_that_do_not_name_a_series_stay_unknown(ref):
    assert base_image(ref) is None


def test_rows_that_do_not_say_env_complete_keep_the_old_meaning():
    assert base_image("nvidia/cuda:12.4.1-devel-ubuntu22.04").env_complete is True
    assert base_image("lmsysorg/sglang:v0.5.10").env_complete is True


def test_pytorch_1_9_1_tag_holds_torch_1_10_0():
    # issue 69685: `conda list` in the devel image shows pytorch 1.10.0 (pushed after 1.10.0 was out, issue 67966)
    devel = base_image("pytorch/pytorch:1.9.1-cuda11.1-cudnn8-devel")
    assert devel.torch.version == "1.10.0" and devel.python == "3.7" and devel.cuda == (11, 1) and devel.nvcc
    runtime = base_image("pytorch/pytorch:1.9.1-cuda11.1-cudnn8-runtime")
    assert runtime.torch is not None and runtime.torch.version is None  # not read: unknown, not 1.9.1
    assert base_image("pytorch/pytorch:1.9.0-cuda11.1-cudnn8-devel").torch.version == "1.9.0"  # the general row


@pytest.mark.parametrize("ref", ["pytorch/pytorch:latest", "pytorch/pytorch", "ghcr.io/pytorch/pytorch:2.1.0-devel"])
def test_pytorch_moving_and_ghcr_tags_stay_unknown(ref):
    # `latest` has lagged the releases (issue 6397: torch 0.2 in 2018); the ghcr `X-devel`/`X-runtime` tags were
    # CUDA builds in one docker.Makefile and CPU builds (`X-runtime` when CUDA_VERSION_SHORT=cpu) in another
    assert base_image(ref) is None


@pytest.mark.parametrize("ref,series", [("verlai/verl:base-verl0.4-cu124-cudnn9.8-torch2.6-fa2.7.4", "2.6"),
                                        ("verlai/verl:base-v2-cu124-cudnn9.8-torch2.6-fa2.8.0-te2.3", "2.6"),
                                        ("verlai/verl:base-verl0.5-cu126-cudnn9.8-torch2.7.1-fa2.8.0-fi0.2.6", "2.7"),
                                        ("verlai/verl:base-verl0.6-cu128-cudnn9.8-torch2.8.0-fa2.7.4", "2.8")])
def test_verl_base_tags_hold_a_torch_of_the_tag_series(ref, series):
    # a series, not the exact version: one Dockerfile naming the torch2.7.1 target installs torch==2.7.0
    img = base_image(ref)
    assert img.torch.version is None and img.torch.lowest == f"{series}.0.dev0" and img.torch.highest_series == series
    assert img.env == {"TORCH_CUDA_ARCH_LIST": None} and not img.env_complete  # the NGC base's list, inherited


@pytest.mark.parametrize("ref", ["verlai/verl:app-verl0.6-transformers4.56.1-sglang0.5.2-mcore0.13.0-te2.2",
                                 "verlai/verl:sgl056.exp", "verlai/verl:vll012.exp"])
def test_verl_application_and_experiment_tags_stay_unknown(ref):
    assert base_image(ref) is None
