"""The cache answers by content, never by location: uv hard-links one file into every venv, so
two environments share the content keys; each report names its own environment's paths only."""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

from tests.conftest import ROOT

W = "fixtures/abi/wheels"
WHEELS = (f"{W}/fake_torch-2.12.0+cu130-cp311-cp311-linux_x86_64.whl",
          f"{W}/fake_nvidia_cuda_runtime-13.0.0-py3-none-linux_x86_64.whl",
          f"{W}/ext-1.0-cp311-cp311-linux_x86_64.whl")


def _install(sp: Path) -> None:
    for wheel in WHEELS:
        with zipfile.ZipFile(ROOT / wheel) as zf:
            for info in zf.infolist():
                target = sp / info.filename
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(info))
    # the doctor looks for a distribution named torch: the fixture's fake-torch, renamed
    old = next(sp.glob("fake_torch-*.dist-info"))
    meta = (old / "METADATA").read_text().replace("Name: fake_torch", "Name: torch").replace("Name: fake-torch", "Name: torch")
    new = sp / old.name.replace("fake_torch", "torch")
    old.rename(new)
    (new / "METADATA").write_text(meta)


def _hardlinked_copy(src: Path, dst: Path) -> None:
    for root, _, files in os.walk(src):
        for f in files:
            a = Path(root) / f
            b = dst / a.relative_to(src)
            b.parent.mkdir(parents=True, exist_ok=True)
            os.link(a, b)  # same inode: same size, same mtime, same RECORD hash


def test_second_venv_report_names_only_its_own_paths(cli, tmp_path, monkeypatch):
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path / "cache"))
    a = tmp_path / "venv-a" / "lib" / "python3.11" / "site-packages"
    b = tmp_path / "venv-b" / "lib" / "python3.11" / "site-packages"
    _install(a)
    _hardlinked_copy(a, b)
    argv = ("--gpu", "h200", "--driver", "580.95.05", "--format", "json", "--fail-on", "never")
    first = cli("doctor", "--site-packages", str(a), *argv)
    second = cli("doctor", "--site-packages", str(b), *argv)
    assert first.code == 0 and second.code == 0, (first.err, second.err)
    assert str(a) in first.out
    assert str(tmp_path / "venv-a") not in second.out, "venv-b's report names venv-a"
    located = [f["path"] for f in second.json()["findings"] if f["rule"].startswith(("WD2", "WD3"))]
    assert located and all(p.startswith(str(tmp_path / "venv-b")) for p in located), located
    # one content key for both venvs: venv-b was answered from venv-a's entry, with its own paths
    entries = list((tmp_path / "cache" / "doctor-abi").rglob("*.*"))
    assert len(entries) == 1, entries
    third = cli("doctor", "--site-packages", str(b), *argv)
    assert third.json()["findings"] == second.json()["findings"]
    shutil.rmtree(tmp_path / "venv-a")
