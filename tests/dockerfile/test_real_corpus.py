"""The WD4xx rules on the real-world corpus (fixtures/real/dockerfiles), against the hand labels
written before wheeldoc ran on it: no warning or error on a file labelled clean for that rule
(precision >= 97 % over all warnings and errors), recall >= 90 % of the labelled defects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dockerfile.realcorpus import bench

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fixtures" / "real" / "dockerfiles"



@pytest.fixture(scope="module")
def measured() -> dict:
    return bench().measure()


def test_labels_cover_the_corpus() -> None:
    labels = json.loads((CORPUS / "labels.json").read_text())
    files = {p.name for p in CORPUS.glob("*.Dockerfile")}
    assert files == set(labels["files"]), "every corpus file has labels, every label a file"
    assert len(files) >= 60
    manifest = (CORPUS.parent / "MANIFEST.md").read_text()
    for name in files:
        assert f"dockerfiles/{name} |" in manifest, f"{name} has no provenance row"
    for name, entry in labels["files"].items():
        for d in entry["defects"]:
            assert d["rule"] in labels["rules"] and d["line"] >= 1 and d["why"], (name, d)
        assert entry["clean"].get("*"), name


def test_precision(measured: dict) -> None:
    assert measured["precision"] >= 0.97, "\n".join(x for x in measured["details"] if x.startswith("FP"))


def test_no_warning_on_clean_files(measured: dict) -> None:
    assert measured["clean_files_with_findings"] == []


def test_recall(measured: dict) -> None:
    assert measured["recall"] >= 0.90, "\n".join(x for x in measured["details"] if x.startswith("MISS"))
