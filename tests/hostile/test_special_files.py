"""FIFOs (and other special files) where a regular file is expected never hang a verb: a library,
a RECORD, a METADATA, a file RECORD lists, an OCI blob, a cache entry, a file named on the
command line. Each is made with os.mkfifo; nobody ever writes to it, so an open() that blocks
would hang until the runner's deadline."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import imagefactory as im
from tests.hostile import bombs as b
from tests.hostile import deep as d
from tests.hostile.runner import REPO, wheeldoc

GPU = ("--gpu", "h200", "--driver", "580.95.05")


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("argv", [
    ("check", "{f}"), ("check", "{f}", "--format", "json"), ("kernels", "{f}", *GPU), ("abi", "{f}", "{f}"),
    ("image", "{f}", *GPU), ("check", "{d}", "--config", "{f}"), ("doctor", "--python", "{f}", *GPU),
], ids=["check", "check-json", "kernels", "abi", "image", "config", "doctor-python"])
@pytest.mark.parametrize("name", ["Dockerfile", "uv.lock", "requirements.txt", "lib.so", "x.whl", "img.tar"])
def test_command_line_file_is_a_fifo(tmp_path, argv, name):
    f = fifo(tmp_path / name)
    df = tmp_path / "real.Dockerfile"
    df.write_text("FROM python:3.12\n")
    r = wheeldoc(tmp_path, *(a.format(f=f, d=df) for a in argv)).check(1, 2)
    assert str(f) in r.err or str(f) in r.out


def _site(tmp: Path) -> Path:
    return b.site(tmp / "site", b.eg.shared_object(b"\0libc.so.6\0", [(b.eg.DT_NEEDED, 1)]))


@pytest.mark.parametrize("where", ["pkg/_ext.so", "pkg-1.0.dist-info/RECORD", "pkg-1.0.dist-info/METADATA",
                                   "pkg-1.0.dist-info/direct_url.json", "pkg-1.0.dist-info/INSTALLER",
                                   "torch/version.py", "pkg.libs/libvendored.so"])
def test_installed_file_is_a_fifo(tmp_path, where):
    site = _site(tmp_path)
    if where == "torch/version.py":
        d.site(site)
    fifo(site / where)
    for argv in (("doctor", "--site-packages", str(site), *GPU), ("kernels", str(site), *GPU),
                 ("abi", "pkg", "--site-packages", str(site))):
        wheeldoc(tmp_path, *argv).check(0, 1, 2)


def test_record_row_naming_a_fifo_outside_the_distribution(tmp_path):
    site = _site(tmp_path)
    fifo(tmp_path / "outside.so")
    rec = site / "pkg-1.0.dist-info/RECORD"
    rec.write_text(rec.read_text() + "../outside.so,,\n/abs/outside.so,,\n")
    wheeldoc(tmp_path, "doctor", "--site-packages", str(site), *GPU).check(0, 1)


def test_oci_blob_is_a_fifo(tmp_path):
    layer = im.layer([im.file_("usr/bin/true", b"", 0o755)])
    oci = im.write_oci_layout(tmp_path / "oci", [layer], im.config())
    blobs = sorted((oci / "blobs/sha256").iterdir(), key=lambda p: p.stat().st_size)
    for blob in blobs:  # each blob in turn: config, manifest, layer
        data = blob.read_bytes()
        fifo(blob)
        r = wheeldoc(tmp_path, "image", str(oci), *GPU).check(1, 2)
        assert blob.name in r.err or blob.name in r.out
        blob.unlink()
        blob.write_bytes(data)
    fifo(oci / "index.json")
    wheeldoc(tmp_path, "image", str(oci), *GPU).check(2)


def test_cache_entry_is_a_fifo(tmp_path):
    lib = tmp_path / "lib.so"
    lib.write_bytes((REPO / "fixtures/kernels/libisa95.so").read_bytes())
    cache = tmp_path / "cache"
    first = wheeldoc(tmp_path, "kernels", str(lib), *GPU, "--format", "json", cache=cache).check(0, 1)
    site = _site(tmp_path)
    wheeldoc(tmp_path, "doctor", "--site-packages", str(site), *GPU, cache=cache).check(0, 1)
    entries = [p for p in cache.rglob("*") if p.is_file()]
    assert entries, "the runs must have written cache entries"
    for p in entries:
        fifo(p)
    again = wheeldoc(tmp_path, "kernels", str(lib), *GPU, "--format", "json", cache=cache).check(0, 1)
    assert again.out == first.out
    wheeldoc(tmp_path, "doctor", "--site-packages", str(site), *GPU, cache=cache).check(0, 1)
