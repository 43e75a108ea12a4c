"""Shared by the held-out lockfile corpus tests: the measuring script, and the check that every
labelled lock is there with its provenance row and well-formed labels."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def measure_script():
    """scripts/measure_real_locks.py as a module (its `measure(corpus)`)."""
    spec = importlib.util.spec_from_file_location("measure_real_locks", REPO / "scripts" / "measure_real_locks.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def assert_locks_recorded(corpus: Path, minimum: int) -> None:
    """Every labelled lock is in `corpus` (at least `minimum`), the only other files are the
    pyproject.toml a uv.lock is read with, each file has a MANIFEST row, and every label is complete."""
    labels = json.loads((corpus / "labels.json").read_text())
    paths = {e["path"] for e in labels["locks"]}
    files = {p.relative_to(corpus).as_posix() for p in corpus.rglob("*") if p.is_file() and p.name != "labels.json"}
    assert paths <= files and len(paths) >= minimum
    assert all(f.endswith("/pyproject.toml") and f.replace("pyproject.toml", "uv.lock") in paths for f in files - paths)
    manifest = (corpus.parent / "MANIFEST.md").read_text()
    for f in files:
        assert f"| locks/{f} |" in manifest, f"{f} has no provenance row"
    for e in labels["locks"]:
        for t in e["targets"]:
            assert t["reason"]
            assert all(d["rule"].startswith("WD1") and d["package"] and d["environment"] and d["reason"]
                       for d in t["defects"])
