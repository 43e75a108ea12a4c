"""The offline torch ABI index: the shipped catalog, `wheeldoc index add`, answers equal to the
wheel's, offline, and the round trip of real torch wheels against `nm -D --defined-only`."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from packaging.utils import parse_wheel_filename
from packaging.version import Version

from tests.conftest import ROOT, run_subprocess
from wheeldoc.abi.index import Key, _catalog, find, key_of, load_entry, shipped_dir

WHEELS = ROOT / "fixtures" / "abi" / "wheels"
EXT = WHEELS / "ext-1.0-cp311-cp311-linux_x86_64.whl"
FAKE_TORCH = WHEELS / "fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"
# Where the real wheels of the slow tests may be cached (they are skipped without them).
WHEEL_DIRS = [Path(p) for p in os.environ.get("WHEELDOC_TEST_WHEELS", "/work/wheels").split(os.pathsep)]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path / "cache"))
    _catalog.cache_clear()
    yield tmp_path / "cache"
    _catalog.cache_clear()


def _offline_env(cache_dir: Path) -> dict[str, str]:
    """No uv on PATH, no index reachable: only the index can answer."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_"))}
    env.update(WHEELDOC_CACHE_DIR=str(cache_dir), PATH="/nonexistent", UV_OFFLINE="1", PIP_NO_INDEX="1",
               HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9")
    return env


def _same_answer(a: dict, b: dict) -> None:
    assert a["verdict"] == b["verdict"]
    assert a["extensions"] == b["extensions"]
    assert [(f["rule"], f["severity"], f["message"], f["member"]) for f in a["findings"]] == \
           [(f["rule"], f["severity"], f["message"], f["member"]) for f in b["findings"]]


# -- the shipped index -------------------------------------------------------------------------------
def test_the_shipped_catalog_is_whole_and_each_entry_is_its_wheel():
    folder = shipped_dir()
    raw = json.loads((folder / "catalog.json").read_text(encoding="utf-8"))
    rows = raw["entries"]
    assert rows, "the shipped torch index is empty"
    for row in rows:
        assert re.fullmatch(r"[0-9a-f]{64}", row["sha256"]), row
        name, version, _, tags = parse_wheel_filename(row["wheel"])
        assert name == "torch" and version.public == row["version"] and (version.local or None) == row["local"]
        assert any(t.platform.endswith(row["arch"]) for t in tags)
        entry = load_entry(folder / row["file"])
        assert entry is not None and entry["wheel"]["sha256"] == row["sha256"]
        assert key_of(entry) == Key(row["version"], row["local"], row["arch"])
        assert entry["elf"], f"{row['file']}: no shared objects"
    for arch in ("x86_64", "aarch64"):
        versions = {Version(r["version"]) for r in rows if r["arch"] == arch and r["local"] is None}
        assert Version("2.0.0") in versions and max(versions) >= Version("2.15.0"), (arch, sorted(versions))


def test_the_shipped_index_is_small():
    total = sum(p.stat().st_size for p in shipped_dir().iterdir())
    assert total <= 15 << 20, f"{total} bytes"


# -- wheeldoc index add, and answers from it --------------------------------------------------------
def test_a_wheel_added_to_the_local_index_answers_offline_as_the_wheel_does(cache, tmp_path):
    added = run_subprocess("index", "add", str(FAKE_TORCH), cwd=ROOT)
    assert added.code == 0, added.err
    assert "added torch 2.11.0+cu130 (x86_64)" in added.out
    listed = run_subprocess("index", "list", "--format", "json", cwd=ROOT).json()
    assert any(r["origin"] == "local index" and r["local"] == "cu130" for r in listed["entries"])
    env = _offline_env(cache)
    proc = subprocess.run([os.sys.executable, "-m", "wheeldoc", "abi", str(EXT), "torch==2.11.0+cu130",
                           "--format", "json"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    from_index = json.loads(proc.stdout)
    assert from_index["torch"]["origin"] == "local index"
    assert from_index["torch"]["wheel_sha256"] == _sha256(FAKE_TORCH)
    from_wheel = run_subprocess("abi", str(EXT), str(FAKE_TORCH), "--format", "json", cwd=ROOT).json()
    assert from_wheel["torch"]["origin"] == "files"
    _same_answer(from_index, from_wheel)


def test_no_torch_index_reads_the_wheel_and_a_missing_build_falls_back(cache):
    run_subprocess("index", "add", str(FAKE_TORCH), cwd=ROOT)
    env = _offline_env(cache)
    for argv in (["torch==2.11.0+cu130", "--no-torch-index"], ["torch==2.11.0+cu999"]):
        proc = subprocess.run([os.sys.executable, "-m", "wheeldoc", "abi", str(EXT), *argv],
                              capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
        assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)  # uv is needed and absent: an input error
        assert "Traceback" not in proc.stderr and "wheeldoc: error:" in proc.stderr


def test_index_add_refuses_what_is_not_a_torch_wheel(cache):
    for bad in (ROOT / "README.md", EXT):
        got = run_subprocess("index", "add", str(bad), cwd=ROOT)
        assert got.code == 2 and "Traceback" not in got.err and str(bad.name) in got.err, got.err


def test_damaged_local_entries_are_ignored(cache):
    run_subprocess("index", "add", str(FAKE_TORCH), cwd=ROOT)
    _catalog.cache_clear()
    entry = next((cache / "torch-index").glob("*.wdti"))
    for damage in (b"", b"WDTI1" + os.urandom(300), entry.read_bytes()[:200]):
        entry.write_bytes(damage)
        assert find(Key("2.11.0", "cu130", "x86_64")) is None
    (cache / "torch-index" / "catalog.json").write_text("{not json", encoding="utf-8")
    _catalog.cache_clear()
    assert find(Key("2.11.0", "cu130", "x86_64")) is None


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- real torch wheels (slow; skipped where they are not cached) -------------------------------------
def _cached(name: str) -> Path | None:
    return next((d / name for d in WHEEL_DIRS if (d / name).is_file()), None)


ROUND_TRIP = ("torch-2.0.1-cp311-cp311-manylinux1_x86_64.whl", "torch-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl",
              "torch-2.6.0-cp312-cp312-manylinux_2_28_aarch64.whl")


@pytest.mark.slow
@pytest.mark.parametrize("name", ROUND_TRIP)
def test_round_trip_every_exported_symbol_equals_nm(name, tmp_path):
    wheel = _cached(name) or _cached(name.replace("cp312-cp312", "cp311-cp311"))
    if wheel is None or shutil.which("nm") is None:
        pytest.skip(f"{name} is not cached (or no nm)")
    from wheeldoc.abi.index import IndexedWheel
    from wheeldoc.abi.index_build import extract
    from wheeldoc.abi.index_pack import pack_entry

    packed = tmp_path / "entry.wdti"
    packed.write_bytes(pack_entry(extract(wheel), None))
    indexed = IndexedWheel(load_entry(packed), "local index")
    assert indexed.entry["elf"]
    with zipfile.ZipFile(wheel) as z:
        for member in indexed.entry["elf"]:
            out = tmp_path / "lib.so"
            with z.open(member) as src, open(out, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            nm = subprocess.run(["nm", "-D", "--defined-only", str(out)], capture_output=True, text=True, check=True)
            expected = set()
            for line in nm.stdout.splitlines():
                parts = line.split()
                if len(parts) == 3 and (parts[1].isupper() or parts[1] == "u"):
                    expected.add(parts[2].split("@", 1)[0])
            got = set(indexed.elf_facts(member).symbols.exports())
            assert got == expected, (member, sorted(got ^ expected)[:10])


def _local_pairs():
    vision = sorted(Path("/opt/pypi-more/files").glob("torchvision-*-cp311-cp311-manylinux_2_28_x86_64.whl"))
    torches = {"torch==2.14.1": Path("/opt/pypi-more/files/torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl"),
               "torch==2.13.0+cpu": Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")}
    return [(v, req, whl) for v in vision for req, whl in torches.items()]


@pytest.mark.slow
@pytest.mark.parametrize("ext, requirement, wheel", _local_pairs() or [pytest.param(None, None, None,
                                                                       marks=pytest.mark.skip("no local wheels"))])
def test_the_index_answers_the_truth_table_as_the_wheels_do(ext, requirement, wheel, cache):
    if not (ext.is_file() and wheel.is_file()):
        pytest.skip("wheels not here")
    from wheeldoc.abi.index import pinned_key

    if "+" in requirement:  # a PyTorch-index build: not shipped, added to the local index the way a user would
        assert run_subprocess("index", "add", str(wheel), cwd=ROOT).code == 0
        _catalog.cache_clear()
    key = pinned_key(requirement, "x86_64", index_options=False)
    indexed = find(key)
    if indexed is None:
        pytest.skip(f"{key.label} is not in the shipped index")
    if indexed.sha256 != _sha256(wheel):
        pytest.skip(f"the local {wheel.name} is not the indexed file")
    env = _offline_env(cache)
    proc = subprocess.run([os.sys.executable, "-m", "wheeldoc", "abi", str(ext), requirement, "--format", "json"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    from_index = json.loads(proc.stdout)
    assert from_index["torch"]["origin"] == ("local index" if "+" in requirement else "index")
    from_wheel = run_subprocess("abi", str(ext), str(wheel), "--format", "json", cwd=ROOT, timeout=600).json()
    _same_answer(from_index, from_wheel)


def _rebuilt(tmp_path: Path, version: str) -> Path:
    """fake_torch's CPU build under another local version (same libraries, a new wheel)."""
    from tests.wheelfactory import WheelSpec, wheel_bytes

    src = WHEELS / "fake_torch-2.11.0+cpu-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(src) as z:
        files = {n: z.read(n) for n in z.namelist() if ".dist-info/" not in n}
    spec = WheelSpec("fake_torch", version, platform="linux_x86_64", python_tag="cp311", abi_tag="cp311", files=files)
    out = tmp_path / spec.filename
    out.write_bytes(wheel_bytes(spec))
    return out


def test_a_build_the_index_lacks_is_answered_only_when_every_indexed_build_agrees(cache, tmp_path):
    one = ROOT / "fixtures" / "abi" / "ext" / "ext_cxx11.so"
    for w in (WHEELS / "fake_torch-2.11.0+cpu-cp311-cp311-linux_x86_64.whl", _rebuilt(tmp_path, "2.11.0+xpu")):
        assert run_subprocess("index", "add", str(w), cwd=ROOT).code == 0
    env = {**_offline_env(cache), "WHEELDOC_NO_TORCH_INDEX": "1"}  # only the builds added here
    run = lambda *a: subprocess.run([os.sys.executable, "-m", "wheeldoc", "abi", *a, "--format", "json"],  # noqa: E731
                                    capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    agreed = run(str(one), "torch==2.11.0+cu126")
    assert agreed.returncode == 0, agreed.stderr
    doc = json.loads(agreed.stdout)
    assert doc["verdict"] == "compatible"
    assert doc["torch_variant"]["answered_from"] == ["torch 2.11.0+cpu (x86_64)", "torch 2.11.0+xpu (x86_64)"]
    # the CUDA build gives this extension another answer: no stand-in, the real wheel is needed (uv: absent)
    assert run_subprocess("index", "add", str(FAKE_TORCH), cwd=ROOT).code == 0
    _catalog.cache_clear()
    disagreed = run(str(one), "torch==2.11.0+cu126")
    assert disagreed.returncode == 2 and "Traceback" not in disagreed.stderr, disagreed.stderr


def _real_world_pairs() -> list[tuple[str, str]]:
    from tests.abi import realworld

    if not realworld.TRUTH.exists():
        return []
    return sorted({(p["extension"], p["torch_wheel"]) for p in realworld.pairs()})


@pytest.mark.slow
def test_the_index_answers_the_real_world_truth_table_as_the_wheels_do(cache):
    """docs/real-world-truth.md's pairs: `abi EXT torch==X` from the index (or, for the PyTorch
    index's CPU build, from a local index it was added to) against `abi EXT TORCH.whl`, both with
    the CUDA plan from torch's METADATA: the same verdict, per-object verdicts and first failures,
    and the same findings."""
    from tests.abi import realworld

    compared = 0
    for ext_name, torch_name in _real_world_pairs():
        ext, wheel = realworld.find(ext_name), realworld.find(torch_name)
        if ext is None or wheel is None:
            continue
        version = parse_wheel_filename(wheel.name)[1]
        if version.local:
            assert run_subprocess("index", "add", str(wheel), cwd=ROOT).code == 0
            _catalog.cache_clear()
        requirement = f"torch=={version}"
        indexed = run_subprocess("abi", str(ext), requirement, "--format", "json", "--fail-on", "never",
                                 cwd=ROOT, timeout=900)
        assert indexed.code == 0, indexed.err
        from_index = indexed.json()
        if from_index["torch"].get("origin") not in ("index", "local index"):
            continue  # not indexed here (WHEELDOC_NO_TORCH_INDEX)
        assert from_index["torch"]["wheel_sha256"] == _sha256(wheel), (ext_name, torch_name)
        from_wheel = run_subprocess("abi", str(ext), str(wheel), "--format", "json", "--fail-on", "never",
                                    cwd=ROOT, timeout=900).json()
        _same_answer(from_index, from_wheel)
        compared += 1
    if not compared:
        pytest.skip("none of the real-world pairs is cached here")
