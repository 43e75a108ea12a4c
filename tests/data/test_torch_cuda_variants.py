"""The CUDA variants torch.json says the PyTorch index publishes per series come from PyTorch's
release compatibility matrix (stable and experimental CUDA, the row quoted as their source), and
every CUDA build of torch that a real lockfile of the corpora took from download.pytorch.org is
one of them (a cross-check against artifacts wheeldoc did not make)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLE = json.loads((ROOT / "wheeldoc" / "data" / "torch.json").read_text())["series"]


def _script():
    spec = importlib.util.spec_from_file_location("make_torch_table", ROOT / "scripts" / "make_torch_table.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_each_series_of_the_matrix_has_its_variants_and_their_source():
    mod = _script()
    for series, line in mod.MATRIX.items():
        assert TABLE[series]["cuda"] == mod.variants(line), series
        assert line in TABLE[series]["sources"]["cuda"]
    assert mod.variants(mod.MATRIX["2.13"]) == ["cu126", "cu130", "cu132"]  # experimental 13.2 counts
    assert mod.variants(mod.MATRIX["2.5"]) == ["cu118", "cu121", "cu124"]  # "None" experimental
    for series, line in mod.MATRIX.items():
        assert TABLE[series]["cuda_experimental"] == mod.experimental(line), series
    assert mod.experimental(mod.MATRIX["2.13"]) == ["cu132"] and mod.experimental(mod.MATRIX["2.14"]) == []


def test_a_fix_pins_a_stable_build_before_an_experimental_one():
    from wheeldoc.data.torch import torch_table

    s = torch_table().series["2.13"]
    assert s.cuda == ("cu126", "cu130", "cu132") and s.experimental == ("cu132",)


_LOCKED = re.compile(r'name = "torch", version = "(\d+\.\d+)\.\d+\+(cu\d+)", source = \{ registry = '
                     r'"https://download\.pytorch\.org/whl/(cu\d+)" \}')


def test_every_cuda_torch_a_real_lock_took_from_the_pytorch_index_is_listed():
    seen = set()
    for lock in (ROOT / "fixtures" / "real").rglob("uv.lock"):
        for m in _LOCKED.finditer(lock.read_text(encoding="utf-8", errors="replace")):
            series, local, index = m.groups()
            if local == index and series in TABLE:
                seen.add((series, local))
                assert local in TABLE[series]["cuda"], (lock, series, local)
    assert ("2.13", "cu126") in seen and len(seen) >= 8
