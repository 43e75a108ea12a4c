"""NGC PyTorch per release (base_images.json, the `releases` of the NGC row): every entry is read
from that release's notes with its source and quote, its versions parse, and base_image() answers
the release's torch build, Python and CUDA; a release without an entry keeps the date bound."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
from pathlib import Path

import pytest
from packaging.version import Version

from wheeldoc.data.base_images import base_image

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "wheeldoc" / "data" / "base_images.json"


def _script():
    spec = importlib.util.spec_from_file_location("make_base_images", ROOT / "scripts" / "make_base_images.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _ngc_row() -> dict:
    rows = json.loads(TABLE.read_text())["rows"]
    (row,) = [r for r in rows if r["name"] == "NGC PyTorch"]
    return row


NOTES = "docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/"
JETSON = "docs.nvidia.com/deeplearning/frameworks/install-pytorch-jetson-platform-release-notes/pytorch-jetson-rel.html"


def test_every_release_has_a_source_a_quote_and_versions_that_parse():
    rels = _ngc_row()["releases"]
    assert {"20.12", "23.03", "24.12", "24.11", "24.09", "24.08", "24.07", "24.06", "24.03", "24.02",
            "25.01", "25.06"} <= set(rels)
    for tag, rel in rels.items():
        assert re.fullmatch(r"\d{2}\.\d{2}", tag)
        assert rel["source"] and rel["quote"], tag
        # how each known field was read, and the check that kind of source allows
        assert set(rel["how"]) == {k for k in ("torch", "python", "cuda") if rel[k]}, tag
        for field, how in rel["how"].items():
            if how in ("release-notes", "release-notes-copy"):  # the page, or a file that copies it and names it
                assert NOTES in rel["source"], (tag, field)
            elif how == "jetson-matrix":  # NVIDIA's Jetson table: its row for this release holds this torch
                assert field == "torch" and JETSON in rel["source"], (tag, field)
                row = next(r for r in rel["quote"].split("'") if r.startswith(f"| {rel['torch']} |"))
                assert tag in row.split("|")[2], (tag, row)
            else:  # a file about this exact tag (not its -igpu variant), or one that names this release's notes
                assert how == "tag-statement", (tag, field, how)
                yy, mm = tag.split(".")
                assert (re.search(r"nvcr\.io/nvidia/pytorch:" + re.escape(tag) + r"-py3(?!-igpu)", rel["quote"])
                        or f"pytorch-release-notes/rel-{yy}-{mm}.html" in rel["quote"]), (tag, field)
        if rel["torch"]:
            v = Version(rel["torch"])
            assert v.is_prerelease and v.local, (tag, rel["torch"])  # an NGC build: X.Ya0+<git>
            assert rel["torch"] in rel["quote"], tag
        if rel["python"]:
            assert re.fullmatch(r"3\.\d{1,2}", rel["python"]), tag
        if rel["cuda"]:
            assert re.fullmatch(r"\d+\.\d+(\.\d+){0,2}", rel["cuda"]) and rel["cuda"] in rel["quote"], tag
        assert rel["torch"] or rel["python"] or rel["cuda"], tag


def test_the_committed_table_is_what_the_script_writes():
    assert _ngc_row()["releases"] == _script().NGC_RELEASES


def test_the_script_rejects_a_malformed_release():
    mod = _script()
    good = mod.NGC_RELEASES["20.12"]
    mod.check_release("20.12", good)
    for bad in ({"torch": "1.8.0"},  # a final release is not an NGC build
                {"torch": "1.8.0a0+deadbee"},  # not in the quote
                {"python": "3"}, {"cuda": "eleven"}, {"source": ""}, {"quote": ""},
                {"torch": None, "python": None, "cuda": None},
                {"how": {"python": "release-notes-copy", "cuda": "release-notes-copy"}},  # torch without a how
                {"how": {**good["how"], "python": "hearsay"}}):
        rel = {**copy.deepcopy(good), **bad}
        with pytest.raises(AssertionError):
            mod.check_release("20.12", rel)
    with pytest.raises(AssertionError):
        mod.check_release("2012", good)
    # a statement about a tag holds for that tag only
    stated = mod.NGC_RELEASES["24.12"]
    mod.check_release("24.12", stated)
    with pytest.raises(AssertionError):
        mod.check_release("24.11", {**stated, "how": {**stated["how"], "torch": "tag-statement"}})
    with pytest.raises(AssertionError):  # a statement about the -igpu variant is not one about -py3
        mod.check_release("24.12", {**stated, "quote": stated["quote"].replace("24.12-py3", "24.12-py3-igpu")
                                    .replace("rel-24-12", "rel-xx-xx")})
    # a Jetson table row holds for the releases it names only
    jetson = mod.NGC_RELEASES["25.05"]
    mod.check_release("25.05", jetson)
    with pytest.raises(AssertionError):
        mod.check_release("25.04", jetson)
    with pytest.raises(AssertionError):  # a release-notes fact needs a release-notes page in the source
        mod.check_release("25.05", {**jetson, "how": {"torch": "release-notes"}})


def test_a_release_with_an_entry_answers_torch_python_cuda():
    img = base_image("nvcr.io/nvidia/pytorch:20.12-py3")
    assert img.torch.version == "1.8.0a0+1606899" and img.torch.prerelease
    assert img.python == "3.8" and img.cuda == (11, 1)
    assert "rel_20-12" in img.source and "Python 3.8" in img.source
    img = base_image("nvcr.io/nvidia/pytorch:23.03-py3")
    assert img.torch.version == "2.0.0a0+1767026" and img.cuda == (12, 1)
    # not found in a readable copy of its notes: 22.12 and 23.04 on either side both say Python 3.8
    assert img.python == "3.8" and "as for 22.12 and 23.04 on either side" in img.source


def test_releases_read_from_other_sources_answer_their_facts():
    img = base_image("nvcr.io/nvidia/pytorch:24.12-py3")
    assert img.torch.version == "2.6.0a0+df5bbc09d1" and img.python == "3.12" and img.cuda == (12, 6)
    assert "bionemo-framework" in img.source and "pytorch-jetson-rel" in img.source
    img = base_image("nvcr.io/nvidia/pytorch:24.08-py3")
    assert img.torch.version == "2.5.0a0+872d972e41" and img.python == "3.10" and img.cuda == (12, 6)
    img = base_image("nvcr.io/nvidia/pytorch:25.02-py3")
    assert img.python == "3.12" and img.cuda == (12, 8)  # "12.8.0.38": a build number after the patch level
    img = base_image("nvcr.io/nvidia/pytorch:25.05-py3")  # only the torch build was found
    assert img.torch.version == "2.8.0a0+5228986c39" and img.cuda is None
    assert img.python == "3.12"  # as 25.04 and 25.06 on either side
    assert "Jetson compatibility table" in img.torch.via


def test_a_release_without_an_entry_keeps_the_date_bound_and_its_read_neighbours():
    img = base_image("nvcr.io/nvidia/pytorch:21.06-py3")
    assert img.torch.version is None and img.torch.highest_series is not None and img.cuda is None
    # NGC's builds only move up: at least the build of the nearest read release before it
    assert img.torch.lowest == "1.8.0a0+1606899" and "the build of release 20.12" in img.torch.via
    assert img.python == "3.8"  # 20.12 and 21.09 on either side both say 3.8
    # a later read release caps the series below the date bound
    img = base_image("nvcr.io/nvidia/pytorch:25.07-py3")
    assert (img.torch.lowest, img.torch.highest_series) == ("2.8.0a0+5228986c39", "2.8")
    assert "as release 25.08 ships 2.8.0a0+34c6371d24" in img.torch.via


def test_a_release_between_different_pythons_lies_between_them():
    img = base_image("nvcr.io/nvidia/pytorch:20.11-py3")  # 20.10 says 3.6, 20.12 says 3.8
    assert img.python is None and img.pythons == ("3.6", "3.7", "3.8")


def test_a_release_after_every_read_one_has_no_python_and_no_cap_from_them():
    img = base_image("nvcr.io/nvidia/pytorch:27.01-py3")
    assert img.python is None and img.pythons == ()
    newest = max(t for t, r in _ngc_row()["releases"].items() if r.get("torch"))
    assert img.torch.lowest == _ngc_row()["releases"][newest]["torch"]


def test_python_tags_answer_their_python():
    assert base_image("python:3.11-slim").python == "3.11"
    assert base_image("python:3.9.18-bookworm").python == "3.9"
    assert base_image("ubuntu:22.04").python is None
