"""Fuzz the installed-distribution readers `doctor` and `image` run: `*.dist-info` METADATA
headers, RECORD rows, INSTALLER, direct_url.json, and `torch/version.py` parsed with `ast`
(never executed), both as bare parsers and through `read_distributions` / `read_torch_build`
over a real folder.

Byte 0 picks the file the rest of the input becomes (mod 4): METADATA, RECORD,
direct_url.json, torch/version.py; the other files of the distribution are the seeds' own.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from _harness import REPO, contract, instrumented, main

with instrumented():
    from wheeldoc.environment.dist import (
        parse_metadata_headers,
        parse_record,
        parse_version_py,
        read_distributions,
        read_torch_build,
    )
    from wheeldoc.environment.fs import HostFileSystem

_DIR = tempfile.mkdtemp(prefix="wheeldoc-fuzz-dist-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
SITE = os.path.join(_DIR, "site-packages")
DIST = os.path.join(SITE, "torch-2.11.0+cu130.dist-info")
FILES = ["METADATA", "RECORD", "direct_url.json", "../torch/version.py"]
DEFAULTS = [b"Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\nRequires-Dist: nvidia-cublas==13.1.0.3\n\n",
            b"torch/version.py,sha256=AAAA,120\ntorch-2.11.0+cu130.dist-info/RECORD,,\n",
            b'{"url": "file:///tmp/torch.whl", "archive_info": {}}',
            b"__version__ = '2.11.0+cu130'\ncuda: str = '13.0'\nhip = None\ndebug = False\ngit_version = 'abc'\n"]
FS = HostFileSystem()


def _fixture_seeds() -> list[bytes]:
    out = [bytes([i]) + d for i, d in enumerate(DEFAULTS)]
    with tempfile.TemporaryDirectory() as tmp:  # METADATA and RECORD of the fixture wheels
        import zipfile

        for whl in sorted(REPO.glob("fixtures/abi/wheels/*.whl")):
            with zipfile.ZipFile(whl) as zf:
                for n in zf.namelist():
                    if n.endswith(".dist-info/METADATA"):
                        out.append(b"\x00" + zf.read(n))
                    elif n.endswith(".dist-info/RECORD"):
                        out.append(b"\x01" + zf.read(n))
                    elif n.endswith("torch/version.py"):
                        out.append(b"\x03" + zf.read(n))
    return out


def seeds() -> list[bytes]:
    import _hostile_seeds

    return _fixture_seeds() + _hostile_seeds.dist()  # the shapes tests/hostile/ proves bounded


def _write(which: int, body: bytes) -> None:
    shutil.rmtree(SITE, ignore_errors=True)
    os.makedirs(os.path.join(SITE, "torch"))
    os.makedirs(DIST)
    for i, name in enumerate(FILES):
        with open(os.path.join(DIST, name), "wb") as fh:
            fh.write(body if i == which else DEFAULTS[i])


@contract
def test_one_input(data: bytes) -> None:
    if not data:
        return
    which, body = data[0] % 4, data[1:]
    text = body.decode("utf-8", "replace")
    if which == 0:
        parse_metadata_headers(text)
    elif which == 1:
        parse_record(text)
    elif which == 3:
        parse_version_py(body, "torch/version.py")
    _write(which, body)
    dists, _skipped = read_distributions(FS, SITE)
    for d in dists:
        if d.name == "torch":
            read_torch_build(FS, d)


if __name__ == "__main__":
    main(__file__, test_one_input, seeds)
