"""WD403 for the common torch-dependent packages: the torch requirement of each release and its
Requires-Python (wheeldoc/data/torch_pins.json, from the wheels' METADATA on PyPI), the release
pip/uv pick for the image's Python, one level of dependency, and severity by certainty."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "wheeldoc" / "data"


@pytest.fixture
def check(check):
    """The WD403 findings only (tests/dockerfile/conftest.py's `check` gives them all)."""
    return lambda text, files=None: [f for f in check(text, files=files) if f["rule"] == "WD403"]


def sev(findings):
    return [(f["line"], f["severity"]) for f in findings]


# -- the table ----------------------------------------------------------------------------------

def table_file() -> dict:
    """torch_pins.json.gz as stored (schema 4: each package's body is its own JSON text), bodies decoded."""
    import gzip

    pins = json.loads(gzip.decompress((DATA / "torch_pins.json.gz").read_bytes()))
    assert all(isinstance(v, str) for v in pins["packages"].values())
    pins["packages"] = {k: json.loads(v) for k, v in pins["packages"].items()}
    return pins


def test_table_rows_are_valid_and_each_has_provenance():
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.utils import parse_wheel_filename
    from packaging.version import Version

    import gzip

    pins = table_file()
    src = json.loads(gzip.decompress((DATA / "torch_pins_sources.json.gz").read_bytes()))
    assert pins["schema"] == 4 and src["schema"] == 3
    for body in pins["packages"].values():
        seen = [v for _row, vs in body["rows"] for v in vs.split()]
        assert len(seen) == len(set(seen)), "a release in two rows"
        body["releases"] = {v: row for row, vs in body.pop("rows") for v in vs.split()}
    need = {"vllm", "sglang", "xformers", "torchvision", "torchaudio", "sentence-transformers", "lightning",
            "pytorch-lightning", "accelerate", "peft", "timm", "bitsandbytes", "deepspeed", "torchmetrics",
            "ultralytics", "diffusers", "open-clip-torch", "einops"}
    assert need <= set(pins["packages"])
    for pkg, body in pins["packages"].items():
        assert body["releases"], pkg
        assert set(body["releases"]) == set(src["packages"][pkg]), pkg
        for ver, row in body["releases"].items():
            Version(ver)
            if row["python"]:
                try:
                    SpecifierSet(row["python"])
                except InvalidSpecifier:  # as published (skrl 0.7-0.10: `>=3.6.*`); the picker admits it
                    from wheeldoc.dockerfile.dependents import _python_ok

                    assert _python_ok(row["python"], "3.10"), (pkg, ver)
            prov = src["packages"][pkg][ver]
            if row["torch"] is None:
                assert prov.startswith("no wheel") or prov.endswith(tuple("0123456789abcdef")), (pkg, ver)
            else:
                m = re.fullmatch(r"(\S+\.whl) sha256:([0-9a-f]{64})", prov)
                assert m, (pkg, ver, prov)
                assert str(parse_wheel_filename(m[1])[1]) == ver, (pkg, ver, m[1])
                for line in row["torch"]:
                    spec, _, marker = line.partition(";")
                    SpecifierSet(spec.strip())
                    assert not marker or re.fullmatch(r"@\d+", marker), (pkg, ver, line)
            for dep, line in row["deps"].items():
                assert dep in pins["packages"] and dep != pkg
    # the series dates and the Pythons of torch's wheels come with it
    assert pins["torch_series"]["2.0"] == "2023-03-15" and set(pins["torch_series"]) == set(src["torch_series"])
    assert pins["torch_pythons"]["2.5.1"] == ["3.9", "3.10", "3.11", "3.12", "3.13"]


def test_markers_are_stored_evaluated():
    from wheeldoc.data.base_images import _marker_holds, release_torch, torch_pins

    # vllm 0.6.5: `torch==2.5.1; platform_machine != "aarch64"`
    rel = torch_pins()["vllm"]["releases"]["0.6.5"]
    assert release_torch(rel, "3.11", "x86_64") == "==2.5.1"
    assert release_torch(rel, "3.11", "aarch64") == ""
    assert release_torch(rel, "3.11", None) is None  # depends on the machine, which is not known
    assert _marker_holds("not-a-mask", "3.11", "x86_64") is None


def test_table_facts_read_from_metadata():
    from wheeldoc.data.base_images import torch_pins

    p = torch_pins()
    assert p["sentence-transformers"]["releases"]["3.2.1"]["torch"] == [">=1.11.0"]
    assert p["sentence-transformers"]["releases"]["3.2.1"]["python"] == ">=3.8"
    assert p["lightning"]["releases"]["2.0.1.post0"]["deps"]["pytorch-lightning"] == ""
    assert p["pytorch-lightning"]["releases"]["2.4.0"]["torch"] == [">=2.1.0"]
    assert p["deepspeed"]["releases"]["0.14.0"]["torch"] is None  # sdist only: not read
    assert p["einops"]["releases"]["0.8.0"]["torch"] == []  # no torch requirement


def test_the_table_loads_lazily_and_fast():
    import subprocess
    import sys
    import time

    code = ("import time, wheeldoc.dockerfile.rules, sys; assert 'wheeldoc.dockerfile.dependents' not in sys.modules;"
            "t = time.perf_counter(); from wheeldoc.data.base_images import torch_pins; torch_pins();"
            "print(time.perf_counter() - t)")
    took = float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    assert took < 0.1
    # a package is decoded when it is asked for, not before
    code = ("from wheeldoc.data.base_images import torch_pins; p = torch_pins(); assert 'vllm' in p and not p._done;"
            "p['vllm']['releases']['0.6.5']; p.get('sglang'); assert set(p._done) == {'vllm', 'sglang'};"
            "assert p.get('no-such-package') is None and len(p) == len(list(p)) > 100")
    subprocess.run([sys.executable, "-c", code], check=True)


# -- picking the release -----------------------------------------------------------------------

def test_newest_release_for_the_known_python(check):
    # python3.8: sentence-transformers 3.2.1 is the newest for 3.8 and requires torch>=1.11.0
    f = check("FROM pytorch/pytorch:1.8.1-cuda11.1-cudnn8-runtime\n"
              "RUN python3.8 -m pip install sentence-transformers\n")
    assert sev(f) == [(2, "error")] and "sentence-transformers 3.2.1" in f[0]["message"]
    assert "--override" in f[0]["fix"]["title"] or "-c" in f[0]["fix"]["title"]


def test_unknown_python_judged_only_when_every_pick_fails(check):
    # torch 1.8.1's wheels are for Python 3.6 to 3.9; for 3.6/3.7 the newest sentence-transformers has
    # no wheel (its requirement is not read): not every pick is known to fail, so an info
    f = check("FROM pytorch/pytorch:1.8.1-cuda11.1-cudnn8-runtime\nRUN pip install sentence-transformers\n")
    assert sev(f) == [(2, "info")]
    # a package whose newest release admits the torch there: nothing
    assert check("FROM pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime\nRUN pip install accelerate einops\n") == []


def test_one_level_of_dependency(check):
    # lightning 2.0.1.post0 requires pytorch-lightning (any version): for Python 3.8 pip takes 2.4.0,
    # which requires torch>=2.1.0
    f = check("FROM pytorch/pytorch:2.0.1-cuda11.7-cudnn8-runtime\n"
              "RUN python3.8 -m pip install lightning==2.0.1.post0\n")
    assert sev(f) == [(2, "error")] and "through pytorch-lightning 2.4.0" in f[0]["message"]
    # held by a constraint: clean
    assert check("FROM pytorch/pytorch:2.0.1-cuda11.7-cudnn8-runtime\n"
                 "RUN echo torch==2.0.1 > /c.txt && python3.8 -m pip install -c /c.txt lightning==2.0.1.post0\n") == []


def test_dated_ngc_torch_is_bounded(check):
    # NGC 20.12 is dated before torch 1.8 was out: its pre-release torch is of series 1.9 at most, and
    # accelerate 1.10.0 requires torch>=2.0.0
    f = check("FROM nvcr.io/nvidia/pytorch:20.12-py3\nRUN pip install accelerate==1.10.0\n")
    assert sev(f) == [(2, "error")]
    # NGC 24.08 may hold a 2.x torch: not known
    assert sev(check("FROM nvcr.io/nvidia/pytorch:24.08-py3\nRUN pip install accelerate==1.10.0\n")) in ([], [(2, "info")])


def test_companion_over_a_torch_no_release_admits(check):
    # a local pre-release torch wheel (cp310) then an unpinned torchvision: no torchvision release admits
    # 2.2.0a0, so whichever is picked or already there asks for another torch
    f = check("""
        FROM nvcr.io/nvidia/l4t-base:r36.2.0
        COPY torch-2.2.0a0+git8ac9b20-cp310-cp310-linux_aarch64.whl /tmp/
        RUN pip3 install /tmp/torch-2.2.0a0+git8ac9b20-cp310-cp310-linux_aarch64.whl && pip3 install torchvision
    """)
    assert ("error" in {s for _, s in sev(f)}) and any("torchvision" in x["message"] for x in f)
    # the NGC torch comes with the image, which may ship a source-built torchvision: not an error
    f = check("FROM nvcr.io/nvidia/pytorch:23.04-py3\nRUN pip install torchvision\n")
    assert "error" not in {s for _, s in sev(f)}


def test_later_torch_pin_supersedes(check):
    text = """
        FROM pytorch/pytorch:1.11.0-cuda11.3-cudnn8-runtime
        RUN pip install xformers==0.0.16
    """
    assert sev(check(text)) == [(2, "error")]  # requires torch==1.13.1
    f = check(text + "        RUN pip install torch==1.13.1+cu117 --extra-index-url https://download.pytorch.org/whl/cu117\n")
    assert (2, "info") in sev(f) and "afterwards on purpose" in f[0]["message"]


def test_ngc_release_with_known_torch_and_python(check):
    # NGC 20.12's release notes: torch 1.8.0a0+1606899, Python 3.8. An unpinned sentence-transformers
    # is picked for Python 3.8 (3.2.1, torch>=1.11.0), which does not admit 1.8.0a0: pip replaces it
    f = check("FROM nvcr.io/nvidia/pytorch:20.12-py3\nRUN pip install --no-cache-dir sentence-transformers\n")
    assert sev(f) == [(2, "error")]
    msg = f[0]["message"]
    assert "Python 3.8" in msg and "1.8.0a0+1606899" in msg
    assert "Python 3.9" not in msg  # judged for the image's Python only
    # with the torch held by a constraint file, nothing is replaced
    assert check("FROM nvcr.io/nvidia/pytorch:20.12-py3\n"
                 "RUN echo torch==1.8.0a0+1606899 > /c.txt && pip install -c /c.txt sentence-transformers\n") == []


def test_table_covers_the_ecosystem_candidates():
    """Every candidate of scripts/torch_pins_candidates.txt is either in the table (some release
    declares a torch requirement) or listed as dropped with the reason."""
    import gzip
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import make_torch_pins as m
    finally:
        sys.path.pop(0)
    pins = table_file()
    src = json.loads(gzip.decompress((DATA / "torch_pins_sources.json.gz").read_bytes()))
    cands = m.candidates()
    assert len(cands) >= 140
    for name in cands:
        if name in src["dropped"]:
            assert name not in pins["packages"] and src["dropped"][name], name
            continue
        body = pins["packages"][name]
        assert name in m.CORE or any(row["torch"] for row, _ in body["rows"]), name
    assert len(pins["packages"]) >= 100
    p = torch_pins_loaded()
    assert p["tensordict"]["releases"]["0.15.3"]["torch"] == [">=2.11.0a0"]


def torch_pins_loaded():
    from wheeldoc.data.base_images import torch_pins

    return torch_pins()
