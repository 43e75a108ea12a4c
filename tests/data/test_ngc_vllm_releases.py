"""NGC vLLM per release (base_images.json, the `releases` of the "NGC vLLM" row): every entry has its
source, quote and how per fact, its versions parse, base_image() answers the release's vLLM, torch build,
Python and CUDA; a .postN tag is a release of its own; a release without an entry keeps the date bound."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from packaging.version import Version

from wheeldoc.data.base_images import base_image

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "wheeldoc" / "data" / "base_images.json"
NOTES = "docs.nvidia.com/deeplearning/frameworks/vllm-release-notes/"


def _script():
    spec = importlib.util.spec_from_file_location("make_base_images", ROOT / "scripts" / "make_base_images.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _row(name: str) -> dict:
    (row,) = [r for r in json.loads(TABLE.read_text())["rows"] if r["name"] == name]
    return row


def test_every_release_has_a_source_a_quote_and_versions_that_parse():
    rels = _row("NGC vLLM")["releases"]
    assert {"25.09", "25.10", "26.01", "26.05", "26.10"} <= set(rels)
    ngc = _row("NGC PyTorch")["releases"]
    for tag, rel in rels.items():
        assert re.fullmatch(r"\d{2}\.\d{2}(?:\.post\d)?", tag)
        assert rel["source"] and rel["quote"], tag
        assert set(rel["how"]) == {k for k in ("vllm", "torch", "python", "cuda") if rel[k]}, tag
        for field, how in rel["how"].items():
            if how in ("release-notes", "release-notes-copy"):
                assert NOTES in rel["source"], (tag, field)
            elif how == "ngc-pytorch":  # the notes name the NGC PyTorch release the container holds
                m = re.search(r"NVIDIA PyTorch (\d{2}\.\d{2})", rel["quote"])
                assert field == "torch" and m and ngc[m[1]]["torch"] == rel["torch"], tag
            else:
                assert how == "tag-statement", (tag, how)
                assert f"nvcr.io/nvidia/vllm:{tag}-py3" in rel["quote"], (tag, field)
        if rel["vllm"]:
            assert rel["vllm"] in rel["quote"] and not Version(rel["vllm"]).local, tag
        if rel["torch"]:
            assert Version(rel["torch"]).is_prerelease, tag
        if rel["cuda"]:
            assert rel["cuda"] in rel["quote"], tag


def test_the_script_rejects_what_its_sources_do_not_say():
    mod = _script()
    notes = mod.NGC_VLLM_RELEASES["26.05"]
    mod.check_vllm_release("26.05", notes)
    with pytest.raises(AssertionError):  # a vLLM the quote does not hold
        mod.check_vllm_release("26.05", {**notes, "vllm": "0.21.0"})
    with pytest.raises(AssertionError):  # a release-notes page holds for its own release, not a .post tag
        mod.check_vllm_release("26.05.post1", notes)
    with pytest.raises(AssertionError):  # a final torch is not an NGC build
        mod.check_vllm_release("26.05", {**notes, "torch": "2.12.0", "quote": notes["quote"] + " 2.12.0"})
    stated = mod.NGC_VLLM_RELEASES["26.04"]
    mod.check_vllm_release("26.04", stated)
    with pytest.raises(AssertionError):  # a statement about one tag is not one about another
        mod.check_vllm_release("26.06", stated)
    on_pytorch = mod.NGC_VLLM_RELEASES["25.10"]
    with pytest.raises(AssertionError):  # the torch of the NGC PyTorch release the notes name, and no other
        mod.check_vllm_release("25.10", {**on_pytorch, "torch": mod.NGC_RELEASES["25.08"]["torch"]})


def test_a_release_with_an_entry_answers_vllm_torch_python_cuda():
    img = base_image("nvcr.io/nvidia/vllm:26.05-py3")
    assert img.row == "NGC vLLM" and img.torch.version == "2.12.0a0+5aff3928d8" and img.torch.prerelease
    assert img.python == "3.12" and img.cuda == (13, 2)
    assert "vllm" in img.ships and img.versions == {"vllm": "0.20.1"} and not img.ships_all
    assert "rel-26-05" in img.source and img.constraint is None  # no constraint file is published for it
    img = base_image("nvcr.io/nvidia/vllm:25.10-py3")  # the notes name NVIDIA PyTorch 25.09
    assert img.torch.version == base_image("nvcr.io/nvidia/pytorch:25.09-py3").torch.version
    assert "NGC PyTorch release" in img.torch.via and img.cuda == (13, 0)
    img = base_image("nvcr.io/nvidia/vllm:25.09-py3")  # only the vLLM was read for 25.09
    assert img.versions == {"vllm": "0.10.1.1"} and img.torch.version is None
    assert img.torch.highest_series is not None and img.python is None


def test_a_post_tag_and_a_release_without_an_entry_keep_the_date_bound():
    post = base_image("nvcr.io/nvidia/vllm:26.05.post1-py3")  # ships vLLM 0.21.0, not 26.05's 0.20.1
    assert post.row == "NGC vLLM" and post.versions == {} and post.torch.version is None
    assert post.torch.prerelease and post.torch.highest_series is not None
    unread = base_image("nvcr.io/nvidia/vllm:25.11-py3")
    assert unread.torch.version is None and unread.torch.highest_series is not None and unread.versions == {}
    assert "vllm" in unread.ships and not unread.ships_all
    assert base_image("nvcr.io/nvidia/vllm:latest") is None  # a moving tag: unknown
