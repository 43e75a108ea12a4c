"""The GPU and CUDA tables: content, lookups, and validation of malformed copies."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from wheeldoc.data import tables as T

DATA = Path(T.__file__).resolve().parent
REFERENCE = Path("/work/shared/reference/cuda-binaries.md")


def raw(name: str) -> dict:
    return json.loads((DATA / name).read_text())


def test_newest_toolkit_is_covered_everywhere():
    """The newest toolkit we know (13.5, PTX ISA 9.5) is in every table that needs it."""
    t = T.cuda_table()
    assert t.newest_toolkit == (13, 5)
    assert t.toolkits[-1].cuda == (13, 5) and T.ptx_isa_for_cuda("13.5") == (9, 5)
    assert max(b.cuda for b in t.driver_branches) >= (13, 3)  # newest with a published driver


def test_newest_toolkit_matches_the_reference_when_present():
    if not REFERENCE.exists():
        pytest.skip("shared reference not available")
    text = REFERENCE.read_text()
    listed = {tuple(map(int, v.split("."))) for v in
              __import__("re").findall(r"\b(13\.\d)\b", text)}
    assert max(listed) == T.cuda_table().newest_toolkit


@pytest.mark.parametrize("cuda, isa", [("11.8", (7, 8)), ("12.6", (8, 5)), ("12.8", (8, 7)),
                                       ("12.9", (8, 8)), ("13.0", (9, 0)), ("13.3", (9, 3)),
                                       ("13.0.88", (9, 0)), (13000, (9, 0)), ("13", (9, 0))])
def test_ptx_isa_for_cuda(cuda, isa):
    assert T.ptx_isa_for_cuda(cuda) == isa


@pytest.mark.parametrize("driver, cuda", [
    ("580.95.05", (13, 0)), ("580.159.04", (13, 0)), ("575.57.08", (12, 9)),
    ("570.124.06", (12, 8)), ("590.48.01", (13, 1)), ("595.71.05", (13, 2)),
    ("610.43.02", (13, 3)), ("585.1", (13, 0)), ("535.54.03", (12, 2)), ("440.33", None)])
def test_cuda_for_driver(driver, cuda):
    assert T.cuda_for_driver(driver) == cuda


def test_driver_ptx_isa_and_back():
    assert T.driver_ptx_isa("580.95.05") == (9, 0)
    assert T.min_cuda_for_ptx_isa("9.3") == (13, 3)
    assert T.min_driver_for_cuda("13.3") == "610.43.02"
    assert T.min_driver_for_cuda("13.0") == "580.65.06"
    assert T.min_driver_for_cuda("13.5") is None  # not published
    with pytest.raises(ValueError):
        T.driver_branch("latest")


@pytest.mark.parametrize("name, cc, platform", [
    ("gb10", (12, 1), "aarch64"), ("DGX Spark", (12, 1), "aarch64"), ("h100", (9, 0), None),
    ("H200", (9, 0), None), ("gh200", (9, 0), "aarch64"), ("b200", (10, 0), None),
    ("gb200", (10, 0), "aarch64"), ("b300", (10, 3), None), ("gb300", (10, 3), "aarch64"),
    ("thor", (11, 0), "aarch64"), ("NVIDIA GeForce RTX 5090", (12, 0), None),
    ("rtx5080", (12, 0), None), ("rtx50xx", (12, 0), None), ("rtx-4090", (8, 9), None),
    ("l40s", (8, 9), None), ("L4", (8, 9), None), ("a100", (8, 0), None), ("a10", (8, 6), None),
    ("rtx3090", (8, 6), None), ("t4", (7, 5), None), ("jetson-orin", (8, 7), "aarch64"),
    ("Jetson Orin", (8, 7), "aarch64")])
def test_gpu_lookup(name, cc, platform):
    gpu = T.lookup_gpu(name)
    assert gpu is not None, name
    assert (gpu.cc, gpu.platform) == (cc, platform)
    assert gpu.sm == f"sm_{cc[0]}{cc[1]}"


def test_unknown_gpu():
    assert T.lookup_gpu("voodoo5") is None


# -- validation -------------------------------------------------------------------------------


def broken_cuda(mutate):
    data = copy.deepcopy(raw("cuda.json"))
    mutate(data)
    return data


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.pop("toolkits"), "non-empty list"),
    (lambda d: d["toolkits"][3].update(ptx_isa="9"), "X.Y"),
    (lambda d: d["toolkits"][3].update(min_driver="new"), "min_driver"),
    (lambda d: d["toolkits"][3].pop("source"), "source"),
    (lambda d: d["toolkits"].insert(0, dict(d["toolkits"][5])), "sorted"),
    (lambda d: d["toolkits"][-1].update(ptx_isa="8.0"), "backwards"),
    (lambda d: d.update(newest_toolkit="13.4"), "newest_toolkit"),
    (lambda d: d["driver_branches"][0].update(cuda="10.2"), "unknown CUDA"),
    (lambda d: d["driver_branches"].reverse(), "sorted"),
    (lambda d: d["driver_branches"][0].update(branch="580"), "integer"),
])
def test_malformed_cuda_table_is_rejected(mutate, message):
    data = broken_cuda(mutate)
    with pytest.raises(T.TableError, match=message):
        T.parse_cuda_table(data)


def test_schema_check_on_load(tmp_path, monkeypatch):
    (tmp_path / "cuda.json").write_text('{"schema": 2}')
    (tmp_path / "gpus.json").write_text("not json")
    monkeypatch.setattr(T, "HERE", tmp_path)
    with pytest.raises(T.TableError, match="schema"):
        T._load_json("cuda.json")
    with pytest.raises(T.TableError, match="cannot load"):
        T._load_json("gpus.json")


@pytest.mark.parametrize("mutate, message", [
    (lambda g: g[0].update(cc="12"), "X.Y"),
    (lambda g: g[0].update(platform="arm64"), "platform"),
    (lambda g: g[1].update(aliases=["gb10"]), "also belongs"),
    (lambda g: g[2].update(aliases="x"), "aliases"),
    (lambda g: g[0].pop("name"), "name"),
])
def test_malformed_gpu_table_is_rejected(mutate, message):
    data = copy.deepcopy(raw("gpus.json"))
    mutate(data["gpus"])
    with pytest.raises(T.TableError, match=message):
        T.parse_gpu_table(data)


def test_shipped_tables_load_cleanly():
    T.cuda_table.cache_clear()
    T.gpu_table.cache_clear()
    assert len(T.cuda_table().toolkits) >= 25
    assert len(T.gpu_table()) >= 20
