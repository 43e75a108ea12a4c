"""bench/real_corpus_dockerfiles.py loaded as a module: the corpus tests measure with the very
code the documented numbers come from."""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def bench():
    spec = importlib.util.spec_from_file_location("real_corpus", ROOT / "bench" / "real_corpus_dockerfiles.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def assert_labelled(corpus: Path, minimum: int, row: Callable[[str], str]) -> None:
    """Every `<case>/Dockerfile` of `corpus` is labelled (and every label is a file), there are at
    least `minimum`, and MANIFEST.md beside the folder holds `row(name)` for each (its provenance)."""
    labels = json.loads((corpus / "labels.json").read_text())
    files = {p.relative_to(corpus).as_posix() for p in corpus.glob("*/Dockerfile")}
    assert files == set(labels["files"]) and len(files) >= minimum
    manifest = (corpus.parent / "MANIFEST.md").read_text()
    for name in files:
        assert row(name) in manifest, f"{name} has no provenance row"


def missed(measured: dict) -> list[str]:
    """The files of the labelled defects a measurement missed, sorted (one entry per defect)."""
    return sorted(line.split()[2].split(":")[0] for line in measured["details"] if line.startswith("MISS"))
