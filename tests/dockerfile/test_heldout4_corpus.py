"""The WD4xx rules on held-out set 4 (fixtures/real/heldout4/dockerfiles): 39 Dockerfiles, each in
the folder that is its build context, labelled by hand and committed (8e5c16b) before wheeldoc ran
on them. Its first run (the rules at 8e5c16b) measured (7, 1, 6, 6); three later changes were informed
by it (a `--no-deps` install of local paths reads no index settings; a build compiles the spec it
builds from source, not a bare name beside it; a clone of a known package's default branch is at least
its newest release, and an isolated source build compiles against the torch its requirements move to;
`pip install --ignore-installed` reinstalls torch;
the Python of pytorch/pytorch images, built from other sources the same day; later, NGC 24.12's torch build and
Python; a package installed from its repository's default branch keeps its newest release's torch floor and
uncapped dependencies), so for those causes it is no longer held out (docs/real-world-heldout4.md).
These tests pin today's numbers: the doc and this file change together."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dockerfile.realcorpus import assert_labelled, bench, missed

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fixtures" / "real" / "heldout4" / "dockerfiles"


@pytest.fixture(scope="module")
def measured() -> dict:
    return bench().measure(CORPUS)


def test_heldout4_labels_cover_the_corpus() -> None:
    assert_labelled(CORPUS, 30, lambda name: f"| {name.split('/')[0]} |")


def test_heldout4_numbers(measured: dict) -> None:
    assert (measured["defects"], measured["tp"], measured["fp"], measured["miss"]) == (7, 7, 0, 0)
    per_rule = {rule: (v["tp"], v["fp"], v["miss"]) for rule, v in measured["per_rule"].items() if any(
        (v["tp"], v["fp"], v["miss"]))}
    assert per_rule == {"WD403": (6, 0, 0), "WD405": (1, 0, 0)}
    assert measured["clean_files_with_findings"] == []
    assert missed(measured) == []
