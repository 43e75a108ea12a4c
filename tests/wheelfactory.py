"""Build tiny REAL wheels and serve them as PEP 503 simple indexes or find-links folders.

The wheels are valid zip archives with METADATA, WHEEL and RECORD (sha256 of every
member), so pip and uv install and resolve them like any other wheel. Nothing here needs
the network. Used by the lockfile fixtures (`fixtures/locks/make.py`, `fixtures/story/`)
and by the resolver round-trip tests.

    from tests.wheelfactory import build_wheel, write_simple_index
    torch = build_wheel(tmp / "dist", "torch", "2.11.0+cu130",
                        requires=["nvidia-cublas>=13"], platform="manylinux_2_28_x86_64")
    index_url = write_simple_index(tmp / "cu130", [torch])   # "file:///.../cu130/simple"
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import os
import re
import shutil
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

# A fixed timestamp keeps the wheels (and the hashes recorded in lockfiles) reproducible.
_ZIP_DATE = (2026, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class WheelSpec:
    name: str
    version: str
    requires: Sequence[str] = ()
    platform: str = "any"
    python_tag: str = "py3"
    abi_tag: str = "none"
    requires_python: str | None = None
    extras: Sequence[str] = ()
    files: dict[str, bytes] = field(default_factory=dict)

    @property
    def dist_name(self) -> str:
        """The distribution name as it appears in wheel file names (`flashinfer_python`)."""
        return re.sub(r"[-_.]+", "_", self.name).lower()

    @property
    def filename(self) -> str:
        return f"{self.dist_name}-{self.version}-{self.python_tag}-{self.abi_tag}-{self.platform}.whl"


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def wheel_bytes(spec: WheelSpec) -> bytes:
    dist_info = f"{spec.dist_name}-{spec.version}.dist-info"
    meta = [
        "Metadata-Version: 2.1",
        f"Name: {spec.name}",
        f"Version: {spec.version}",
        "Summary: tiny test wheel built by tests/wheelfactory.py",
    ]
    if spec.requires_python:
        meta.append(f"Requires-Python: {spec.requires_python}")
    meta += [f"Provides-Extra: {e}" for e in spec.extras]
    meta += [f"Requires-Dist: {r}" for r in spec.requires]
    wheel_meta = [
        "Wheel-Version: 1.0",
        "Generator: wheeldoc-wheelfactory",
        f"Root-Is-Purelib: {'true' if spec.platform == 'any' else 'false'}",
    ]
    for py in spec.python_tag.split("."):
        for abi in spec.abi_tag.split("."):
            for plat in spec.platform.split("."):
                wheel_meta.append(f"Tag: {py}-{abi}-{plat}")
    members: dict[str, bytes] = {
        f"{spec.dist_name}/__init__.py": f'__version__ = "{spec.version}"\n'.encode(),
        **spec.files,
        f"{dist_info}/METADATA": ("\n".join(meta) + "\n").encode(),
        f"{dist_info}/WHEEL": ("\n".join(wheel_meta) + "\n").encode(),
    }
    record = [f"{n},{_record_hash(d)},{len(d)}" for n, d in members.items()]
    record.append(f"{dist_info}/RECORD,,")
    members[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in members.items():
            info = zipfile.ZipInfo(n, _ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, d)
    return buf.getvalue()


def build_wheel(
    dest: str | os.PathLike[str],
    name: str,
    version: str,
    *,
    requires: Iterable[str] = (),
    platform: str = "any",
    python_tag: str = "py3",
    abi_tag: str = "none",
    requires_python: str | None = None,
    extras: Iterable[str] = (),
    files: dict[str, bytes] | None = None,
) -> Path:
    """Write one wheel into `dest` and return its path.

    `platform` is a wheel platform tag (`manylinux_2_28_x86_64`, `linux_aarch64`,
    `manylinux_2_28_x86_64.manylinux_2_28_aarch64` for several); `version` may carry a
    local label (`2.11.0+cu130`), which ends up in the file name as PyTorch's wheels do.
    """
    spec = WheelSpec(
        name=name, version=version, requires=tuple(requires), platform=platform,
        python_tag=python_tag, abi_tag=abi_tag, requires_python=requires_python,
        extras=tuple(extras), files=dict(files or {}),
    )
    out = Path(dest)
    out.mkdir(parents=True, exist_ok=True)
    path = out / spec.filename
    path.write_bytes(wheel_bytes(spec))
    return path


def _project_of(wheel: Path) -> str:
    dist = wheel.name.split("-", 1)[0]
    return re.sub(r"[-_.]+", "-", dist).lower()


def write_simple_index(
    root: str | os.PathLike[str],
    wheels: Iterable[str | os.PathLike[str]],
    *,
    simple_dir: str = "simple",
) -> str:
    """Serve `wheels` as a PEP 503 simple index and return its `file://` URL.

    Layout: `root/<simple_dir>/index.html` lists the projects, and
    `root/<simple_dir>/<project>/` holds each project's files beside an `index.html` with
    one `#sha256=` link per file. The URL (`file:///abs/root/simple`) works for
    `--index-url`, `--extra-index-url` and `[[tool.uv.index]] url`. With `simple_dir=""`
    the index is `root` itself, like `https://download.pytorch.org/whl/cu130`.
    Calling it again on the same root adds files; the listings cover everything present.
    """
    simple = Path(root).resolve() / simple_dir if simple_dir else Path(root).resolve()
    simple.mkdir(parents=True, exist_ok=True)
    for w in wheels:
        src = Path(w)
        d = simple / _project_of(src)
        d.mkdir(exist_ok=True)
        if src.resolve() != (d / src.name).resolve():
            shutil.copyfile(src, d / src.name)
    projects = sorted(p for p in simple.iterdir() if p.is_dir())
    for d in projects:
        links = []
        for f in sorted(d.glob("*.whl")):
            sha = hashlib.sha256(f.read_bytes()).hexdigest()
            href = html.escape(f"{f.name}#sha256={sha}")
            links.append(f'    <a href="{href}">{html.escape(f.name)}</a><br/>')
        (d / "index.html").write_text(
            "<!DOCTYPE html>\n<html><body>\n" + "\n".join(links) + "\n</body></html>\n"
        )
    (simple / "index.html").write_text(
        "<!DOCTYPE html>\n<html><body>\n"
        + "\n".join(f'    <a href="{p.name}/">{p.name}</a><br/>' for p in projects)
        + "\n</body></html>\n"
    )
    return simple.as_uri()


def write_find_links(folder: str | os.PathLike[str], wheels: Iterable[str | os.PathLike[str]]) -> Path:
    """Copy `wheels` into a flat folder usable as `--find-links`; returns the folder."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    for w in wheels:
        src = Path(w)
        if src.resolve() != (out / src.name).resolve():
            shutil.copyfile(src, out / src.name)
    return out
