"""The WD4xx rules on the HELD-OUT Dockerfiles (fixtures/real/heldout/dockerfiles): files the rules
were never tuned on, labelled by hand and committed before wheeldoc first ran on them.

The issue's goals (precision >= 97 %, recall >= 90 %) are NOT met on this set; these tests pin the
numbers measured after the cause fixes (docs/real-world-heldout.md, "After the cause fixes"), for
the Dockerfiles alone (their build contexts are not in the folder) and with the build-context files
their repositories hold (fixtures/real/heldout/contexts, `check --context`), so that a change shows
up either way.
If a change improves them, update the numbers here and in the doc in the same commit, and never
change a rule because of a file in this folder: a held-out set tuned on is no longer held out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.dockerfile.realcorpus import bench

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fixtures" / "real" / "heldout" / "dockerfiles"
CONTEXTS = ROOT / "fixtures" / "real" / "heldout" / "contexts"



@pytest.fixture(scope="module")
def measured() -> dict:
    return bench().measure(CORPUS)


@pytest.fixture(scope="module")
def measured_with_context() -> dict:
    return bench().measure(CORPUS, CONTEXTS)


def test_heldout_labels_cover_the_corpus() -> None:
    labels = json.loads((CORPUS / "labels.json").read_text())
    files = {p.name for p in CORPUS.glob("*.Dockerfile")}
    assert files == set(labels["files"]), "every held-out file has labels, every label a file"
    assert len(files) >= 25
    manifest = (CORPUS.parent / "MANIFEST.md").read_text()
    for name in files:
        assert f"dockerfiles/{name} |" in manifest, f"{name} has no provenance row"
    tuning = (ROOT / "fixtures" / "real" / "MANIFEST.md").read_text()
    for name in files:
        assert f"dockerfiles/{name} |" not in tuning, f"{name} is also in the tuning corpus"
    for name, entry in labels["files"].items():
        for d in entry["defects"]:
            assert d["rule"] in labels["rules"] and d["line"] >= 1 and d["why"], (name, d)
        assert entry["clean"].get("*"), name


def test_heldout_numbers(measured: dict) -> None:
    got = (measured["defects"], measured["tp"], measured["fp"], measured["miss"])
    assert got == (4, 1, 0, 3), "held-out numbers changed (defects, tp, fp, miss):\n" + "\n".join(measured["details"])
    assert measured["precision"] == 1.0 and measured["recall"] == 0.25
    assert measured["clean_files_with_findings"] == []


def test_heldout_misses_are_the_known_ones(measured: dict) -> None:
    """The three misses need the build context (the folder holds the Dockerfiles only): wheeldoc
    says so at info level. (The fourth, a package name assembled in a shell variable, is found
    since shell variables of the RUN expand.)"""
    misses = sorted(line.split()[1] + " " + line.split()[2] for line in measured["details"] if line.startswith("MISS"))
    assert misses == [
        "WD403 vllm-bootstrap-09785775__Dockerfile.Dockerfile:15",
        "WD403 vllm-bootstrap-61441100__Dockerfile.Dockerfile:15",
        "WD403 vllm-inference-server__Dockerfile.Dockerfile:4",
    ]
    unread = [line for line in measured["details"] if line.startswith("info  WD403")
              and ("vllm-bootstrap-0978" in line or "vllm-bootstrap-6144" in line or "vllm-inference" in line)]
    assert len(unread) == 3 and all("cannot read here" in line for line in unread)


def test_heldout_with_build_context(measured_with_context: dict) -> None:
    m = measured_with_context
    got = (m["defects"], m["tp"], m["fp"], m["miss"])
    assert got == (4, 4, 0, 0), "held-out numbers with contexts changed:\n" + "\n".join(m["details"])
    assert m["clean_files_with_findings"] == []  # vllm-bootstrap-92ec208b (the fix, a torch constraint) stays clean


def test_heldout_contexts_have_provenance() -> None:
    manifest = (CORPUS.parent / "MANIFEST.md").read_text()
    for folder in CONTEXTS.iterdir():
        assert (CORPUS / folder.name).is_file(), folder.name
        for f in folder.iterdir():
            assert f"contexts/{folder.name}/{f.name} |" in manifest, f"{folder.name}/{f.name} has no provenance row"
