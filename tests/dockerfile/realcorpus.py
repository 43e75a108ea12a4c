"""bench/real_corpus_dockerfiles.py loaded as a module: the corpus tests measure with the very
code the documented numbers come from."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def bench():
    spec = importlib.util.spec_from_file_location("real_corpus", ROOT / "bench" / "real_corpus_dockerfiles.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
