"""Hostile inputs for every verb, built in a folder: each carries a canary that would show if
wheeldoc ever ran, imported or compiled-and-executed what it reads.

- a wheel whose package `__init__.py`, `.pth` file and `torch/version.py` would create the
  canary file if executed; real ELF extension and GPU libraries beside a truncated one; members
  named `../evil.so` and `/abs/evil.so`, a symlink member and a 1000x deflate bomb;
- the same files installed into a site-packages folder (plus `sitecustomize.py`, a symlink loop);
- a `docker save` image holding them, a `python3` that is a shell script, links out of the root,
  a link loop and a junk `/etc/ld.so.cache`;
- lockfiles and a Dockerfile naming the canary package.
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tests import imagefactory as im
from tests.wheelfactory import build_wheel

REPO = Path(__file__).resolve().parents[2]
CANARY = "WHEELDOC_CANARY_7f3a"
CANARY_MODULES = ("canary_pkg", "sitecustomize", "usercustomize", "torch")


@dataclass(frozen=True)
class Hostile:
    root: Path
    pwned: Path  # created by any canary that runs
    wheel: Path
    site: Path
    image: Path
    locks: Path
    torch_wheel: Path


def _canary(pwned: Path) -> bytes:
    return f"import os\nos.system('touch {pwned}')  # {CANARY}\nopen('{pwned}', 'w').write('{CANARY}')\n".encode()


def build(root: Path) -> Hostile:
    root.mkdir(parents=True, exist_ok=True)
    pwned = root / "PWNED"
    code = _canary(pwned)
    files = {
        "canary_pkg/__init__.py": code,
        "canary_pkg/_C.so": (REPO / "fixtures/abi/ext/ext_cxx11.so").read_bytes(),
        "canary_pkg/libgpu.so": (REPO / "fixtures/kernels/libmulti.so").read_bytes(),
        "canary_pkg/_broken.so": (REPO / "fixtures/kernels/broken/libmixed-truncated.so").read_bytes(),
        "canary.pth": b"import os; exec(open('canary_pkg/__init__.py').read())  # " + CANARY.encode() + b"\n",
        "torch/version.py": b"__version__ = '2.11.0+cu130'\ncuda = '13.0'\n" + code,
    }
    clean = build_wheel(root / "dist", "canary-pkg", "1.0", platform="manylinux_2_28_x86_64",
                        python_tag="cp311", abi_tag="cp311", requires=["torch==2.11.0"], files=files)
    buf = io.BytesIO(clean.read_bytes())
    with zipfile.ZipFile(buf, "a") as zf:
        zf.writestr("../evil.so", files["canary_pkg/_C.so"])
        zf.writestr("/abs/evil.so", files["canary_pkg/_C.so"])
        link = zipfile.ZipInfo("canary_pkg/link.so")
        link.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(link, "/etc/passwd")
        zf.writestr(zipfile.ZipInfo("canary_pkg/zeros.bin"), bytes(8 << 20), compress_type=zipfile.ZIP_DEFLATED)
    wheel = root / clean.name
    wheel.write_bytes(buf.getvalue())

    site = root / "site-packages"
    with zipfile.ZipFile(clean) as zf:
        zf.extractall(site)  # our own clean wheel, written by the test: safe to extract
    (site / "sitecustomize.py").write_bytes(code)
    dist = site / "torch-2.11.0+cu130.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\n"
                                   "Requires-Dist: nvidia-cuda-runtime==13.0.96\n\n")
    (dist / "RECORD").write_text("torch/version.py,,\n")
    os.symlink("loop.so", site / "canary_pkg" / "loop.so")

    sp = "usr/local/lib/python3.12/site-packages"
    entries = [im.file_(f"{sp}/{p.relative_to(site)}", p.read_bytes()) for p in sorted(site.rglob("*"))
               if p.is_file() and not p.is_symlink()]
    entries += [
        im.file_("usr/bin/python3.12", b"#!/bin/sh\ntouch " + str(pwned).encode() + b"\n", mode=0o755),
        im.symlink("usr/local/bin/python3", "/usr/bin/python3.12"),
        im.symlink(f"{sp}/canary_pkg/out.so", "../../../../../../../../etc/shadow"),
        im.symlink(f"{sp}/canary_pkg/loop.so", "loop2.so"), im.symlink(f"{sp}/canary_pkg/loop2.so", "loop.so"),
        im.hardlink(f"{sp}/canary_pkg/hard.so", f"{sp}/canary_pkg/_C.so"),
        im.file_("etc/ld.so.cache", b"glibc-ld.so.cache1.1" + b"\xff" * 64),
    ]
    layer = im.layer(entries)
    image = im.write_docker_save(root / "image.tar", [layer, im.layer([im.whiteout("etc/ld.so.cache")])],
                                 im.config(env=["PATH=/usr/local/bin:/usr/bin", "LD_LIBRARY_PATH=/../../lib"]))

    locks = root / "locks"
    locks.mkdir()
    (locks / "requirements.txt").write_text(
        f"-e ./canary_pkg\ncanary-pkg @ file://{wheel}\n-r /etc/passwd\ntorch==2.11.0+cu130  # {CANARY}\n")
    shutil.copy(REPO / "fixtures/fuzz-crashes/uv_lock/version-array-of-tables.uv.lock", locks / "uv.lock")
    (locks / "Dockerfile").write_text(
        f"FROM python:3.12\nCOPY . /app\nRUN python -c \"import canary_pkg\"  # {CANARY}\n"
        f"RUN <<EOF\n{code.decode()}EOF\nRUN pip install torch\n")
    torch_wheel = REPO / "fixtures/abi/wheels/fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"
    return Hostile(root, pwned, wheel, site, image, locks, torch_wheel)
