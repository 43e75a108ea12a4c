"""A shared cache trusts only bytes it hashed: an archive whose RECORD lies about a member, run
first, changes nothing in a later honest run's report (same cache folder).

Each generator builds an honest input holding a GPU library and a poisoned twin whose library is
another file, padded to the same size and stamped with the same time, with RECORD claiming the
honest library's sha256. The poisoned run goes first into a shared cache; the honest run that
follows must report exactly what the honest input reports on a cold cache of its own.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import zipfile
from pathlib import Path

import pytest

from tests import imagefactory as im
from tests.hostile.runner import REPO, wheeldoc

GPU = ("--gpu", "h200", "--driver", "580.95.05")
HONEST = (REPO / "fixtures/kernels/libisa95.so").read_bytes()  # GPU code
_OTHER = (REPO / "fixtures/kernels/libhostonly.so").read_bytes()  # no GPU code
POISON = _OTHER + bytes(len(HONEST) - len(_OTHER))  # the same size as the honest library
assert len(POISON) == len(HONEST) and POISON != HONEST
MEMBER = "pkg/libk.so"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _record(files: dict[str, bytes], claims: dict[str, bytes], dist_info: str) -> bytes:
    rows = [f"{n},sha256={_b64(claims.get(n, d))},{len(d)}" for n, d in files.items()]
    return ("\n".join(rows) + f"\n{dist_info}/RECORD,,\n").encode()


def wheel(dest: Path, lib: bytes, claim: bytes, compression: int) -> Path:
    info = "pkg-1.0.dist-info"
    files = {MEMBER: lib, "pkg/__init__.py": b"",
             f"{info}/METADATA": b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n",
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n"}
    files[f"{info}/RECORD"] = _record(files, {MEMBER: claim}, info)
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / "pkg-1.0-py3-none-linux_x86_64.whl"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for n, d in files.items():
            zi = zipfile.ZipInfo(n, (2026, 1, 1, 0, 0, 0))
            zi.compress_type = compression
            zf.writestr(zi, d)
    path.write_bytes(buf.getvalue())
    return path


def site(dest: Path, lib: bytes, claim: bytes) -> Path:
    info = "pkg-1.0.dist-info"
    files = {MEMBER: lib, "pkg/__init__.py": b"",
             f"{info}/METADATA": b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"}
    files[f"{info}/RECORD"] = _record(files, {MEMBER: claim}, info)
    for n, d in files.items():
        p = dest / n
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(d)
    os.utime(dest / MEMBER, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    return dest


def image(dest: Path, lib: bytes, claim: bytes) -> Path:
    sp = "usr/lib/python3.12/site-packages"
    info = "pkg-1.0.dist-info"
    files = {MEMBER: lib, "pkg/__init__.py": b"",
             f"{info}/METADATA": b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"}
    files[f"{info}/RECORD"] = _record(files, {MEMBER: claim}, info)
    entries = [im.file_("usr/bin/python3.12", b"", 0o755)]
    entries += [im.file_(f"{sp}/{n}", d, 0o755 if n.endswith(".so") else 0o644) for n, d in files.items()]
    return im.write_docker_save(dest, [im.layer(entries)], im.config())


def _report(run):
    """The report without what differs between a cold and a warm run (timings, cache counts)."""
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if "timing" not in k and "cache" not in k}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    return strip(json.loads(run.out))


def _same(tmp: Path, make, argv: tuple[str, ...]) -> None:
    honest = make(tmp / "honest", HONEST, HONEST)
    poisoned = make(tmp / "poisoned", POISON, HONEST)  # RECORD claims the honest library's digest
    alone = wheeldoc(tmp, *argv(honest), "--format", "json", cache=tmp / "cache-alone").check(0, 1)
    shared = tmp / "cache-shared"
    first = wheeldoc(tmp, *argv(poisoned), "--format", "json", cache=shared).check(0, 1, 2)
    after = wheeldoc(tmp, *argv(honest), "--format", "json", cache=shared).check(0, 1)
    assert _report(after) == _report(alone), f"poisoned first:\n{first.out[:2000]}"
    again = wheeldoc(tmp, *argv(honest), "--format", "json", cache=shared).check(0, 1)  # warm
    assert _report(again) == _report(alone)


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED], ids=["stored", "deflated"])
def test_poisoned_wheel_changes_nothing_for_a_later_honest_wheel(tmp_path, compression):
    _same(tmp_path, lambda d, lib, claim: wheel(d, lib, claim, compression),
          lambda p: ("kernels", str(p), *GPU))


def test_poisoned_site_packages_changes_nothing_for_a_later_honest_one(tmp_path):
    _same(tmp_path, site, lambda p: ("doctor", "--site-packages", str(p), *GPU))


def test_poisoned_image_changes_nothing_for_a_later_honest_one(tmp_path):
    _same(tmp_path, lambda d, lib, claim: image(d.with_suffix(".tar"), lib, claim),
          lambda p: ("image", str(p), *GPU))
