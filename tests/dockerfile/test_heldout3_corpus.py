"""The WD4xx rules on held-out set 3 (fixtures/real/heldout3/dockerfiles): 32 Dockerfiles, each in
the folder that is its build context, labelled by hand and committed (47aaa47) before wheeldoc ran
on them. Its first run measured the rules as they were; two later changes were informed by it
(WD401's stage order, native builds and base-image evidence; an unpinned torch is the newest
release), so for those
causes it is no longer held out (docs/real-world-heldout3.md). These tests pin today's numbers:
a change shows up either way, and the doc and this file change together."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.dockerfile.realcorpus import assert_labelled, bench, missed

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fixtures" / "real" / "heldout3" / "dockerfiles"


@pytest.fixture(scope="module")
def measured() -> dict:
    return bench().measure(CORPUS)


def test_heldout3_labels_cover_the_corpus() -> None:
    assert_labelled(CORPUS, 30, lambda name: f"| {name.split('/')[0]} |")


def test_heldout3_numbers(measured: dict) -> None:
    assert (measured["defects"], measured["tp"], measured["fp"], measured["miss"]) == (7, 6, 0, 1)
    assert measured["clean_files_with_findings"] == []
    misses = missed(measured)
    assert misses == ["tacc-inference__Dockerfile/Dockerfile"]
