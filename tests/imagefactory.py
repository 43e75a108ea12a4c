"""Build REAL container images in tests: layer tarballs, image config, manifests, digests.

    layers = [layer([dir_("usr"), file_("etc/os-release", b"ID=debian\\n")]),
              layer([whiteout("etc/os-release")])]
    write_oci_layout(tmp / "oci", layers, config(env=["PATH=/usr/bin"]), compression="gzip")
    write_docker_save(tmp / "img.tar", layers, config(), tags=["app:1"], style="classic")

Layers are written with the standard `tarfile` module (PAX or GNU format), compressed with
gzip or zstd where asked; every blob is named and referenced by its real sha256, and the
config carries the real diff_ids, as `docker save` and OCI image layouts do. Hostile entries
(`../` names, absolute paths, links out of the root) are written as given.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from dataclasses import dataclass
from pathlib import Path

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER_MEDIA = {"none": "application/vnd.oci.image.layer.v1.tar",
               "gzip": "application/vnd.oci.image.layer.v1.tar+gzip",
               "zstd": "application/vnd.oci.image.layer.v1.tar+zstd"}


@dataclass(frozen=True)
class Entry:
    path: str
    type: str = "file"  # file, dir, symlink, hardlink, char, fifo
    data: bytes = b""
    link: str = ""
    mode: int = 0o644


def file_(path: str, data: bytes = b"", mode: int = 0o644) -> Entry:
    return Entry(path, "file", data, mode=mode)


def dir_(path: str) -> Entry:
    return Entry(path, "dir", mode=0o755)


def symlink(path: str, target: str) -> Entry:
    return Entry(path, "symlink", link=target, mode=0o777)


def hardlink(path: str, target: str) -> Entry:
    return Entry(path, "hardlink", link=target)


def whiteout(path: str) -> Entry:
    head, _, name = path.rpartition("/")
    return file_(f"{head}/.wh.{name}" if head else f".wh.{name}")


def opaque(folder: str) -> Entry:
    return file_(f"{folder.rstrip('/')}/.wh..wh..opq")


def layer(entries: list[Entry], *, fmt: int = tarfile.PAX_FORMAT) -> bytes:
    """An uncompressed layer tar holding `entries` in the given order."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tf:
        for e in entries:
            info = tarfile.TarInfo(e.path)
            info.mode = e.mode
            info.mtime = 1_700_000_000
            if e.type == "file":
                info.size = len(e.data)
                tf.addfile(info, io.BytesIO(e.data))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "symlink": tarfile.SYMTYPE, "hardlink": tarfile.LNKTYPE,
                         "char": tarfile.CHRTYPE, "fifo": tarfile.FIFOTYPE}[e.type]
            info.linkname = e.link
            tf.addfile(info)
    return buf.getvalue()


def compress(data: bytes, compression: str) -> bytes:
    if compression == "gzip":
        return gzip.compress(data, compresslevel=6, mtime=0)
    if compression == "zstd":
        import zstandard

        return zstandard.ZstdCompressor(level=3).compress(data)
    assert compression == "none", compression
    return data


def sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def config(layers: list[bytes] | None = None, *, env: list[str] | None = None, entrypoint: list[str] | None = None,
           cmd: list[str] | None = None, workdir: str = "", user: str = "", labels: dict | None = None,
           architecture: str = "amd64", history: list[str] | None = None) -> dict:
    """An image config; `diff_ids` are filled in by the writers from the layers given to them."""
    return {
        "architecture": architecture, "os": "linux", "created": "2026-01-01T00:00:00Z",
        "config": {"Env": env or ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
                   "Entrypoint": entrypoint, "Cmd": cmd, "WorkingDir": workdir, "User": user,
                   "Labels": labels or {}},
        "rootfs": {"type": "layers", "diff_ids": [sha256(x) for x in layers or []]},
        "history": [{"created_by": h} for h in history or []],
    }


def _blob(root: Path, data: bytes) -> str:
    digest = sha256(data)
    path = root / "blobs" / "sha256" / digest.split(":", 1)[1]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return digest


def write_oci_layout(dest: Path, layers: list[bytes], cfg: dict, *, compression: str = "gzip",
                     ref: str = "app:latest", multi_platform: bool = False) -> Path:
    """An OCI image layout directory (`oci-layout`, `index.json`, `blobs/sha256/...`)."""
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    cfg = {**cfg, "rootfs": {"type": "layers", "diff_ids": [sha256(x) for x in layers]}}
    cfg_bytes = json.dumps(cfg).encode()
    descs = []
    for raw in layers:
        blob = compress(raw, compression)
        descs.append({"mediaType": LAYER_MEDIA[compression], "digest": _blob(dest, blob), "size": len(blob)})
    manifest = {"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                "config": {"mediaType": OCI_CONFIG, "digest": _blob(dest, cfg_bytes), "size": len(cfg_bytes)},
                "layers": descs}
    m_bytes = json.dumps(manifest).encode()
    m_desc = {"mediaType": OCI_MANIFEST, "digest": _blob(dest, m_bytes), "size": len(m_bytes)}
    if multi_platform:
        m_desc["platform"] = {"architecture": cfg.get("architecture", "amd64"), "os": "linux"}
        other = {"mediaType": OCI_MANIFEST, "digest": "sha256:" + "0" * 64, "size": 1,
                 "platform": {"architecture": "s390x", "os": "linux"}}
        inner = {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": [other, m_desc]}
        i_bytes = json.dumps(inner).encode()
        m_desc = {"mediaType": OCI_INDEX, "digest": _blob(dest, i_bytes), "size": len(i_bytes)}
    m_desc["annotations"] = {"org.opencontainers.image.ref.name": ref}
    (dest / "index.json").write_text(json.dumps({"schemaVersion": 2, "mediaType": OCI_INDEX,
                                                 "manifests": [m_desc]}))
    return dest


def write_docker_save(dest: Path, layers: list[bytes], cfg: dict, *, tags: tuple[str, ...] = ("app:latest",),
                      style: str = "classic", outer: str = "none") -> Path:
    """A `docker save` tarball: "classic" (`<id>/layer.tar`, `<id>.json` config, manifest.json),
    "oci" (Docker 25+: an OCI layout with `blobs/sha256/...` plus manifest.json) or "oci-archive"
    (the OCI layout alone, as `skopeo copy ... oci-archive:` writes it). `outer` compresses the
    whole tarball (`docker save | gzip`)."""
    cfg = {**cfg, "rootfs": {"type": "layers", "diff_ids": [sha256(x) for x in layers]}}
    cfg_bytes = json.dumps(cfg).encode()
    members: dict[str, bytes] = {}
    if style == "classic":
        names = []
        for raw in layers:
            layer_id = hashlib.sha256(b"id" + raw).hexdigest()
            members[f"{layer_id}/VERSION"] = b"1.0"
            members[f"{layer_id}/layer.tar"] = raw
            names.append(f"{layer_id}/layer.tar")
        cfg_name = f"{hashlib.sha256(cfg_bytes).hexdigest()}.json"
        members[cfg_name] = cfg_bytes
    else:
        names = []
        for raw in layers:
            name = f"blobs/sha256/{hashlib.sha256(raw).hexdigest()}"
            members[name] = raw
            names.append(name)
        cfg_name = f"blobs/sha256/{hashlib.sha256(cfg_bytes).hexdigest()}"
        members[cfg_name] = cfg_bytes
        manifest = {"schemaVersion": 2, "mediaType": OCI_MANIFEST,
                    "config": {"mediaType": OCI_CONFIG, "digest": sha256(cfg_bytes), "size": len(cfg_bytes)},
                    "layers": [{"mediaType": LAYER_MEDIA["none"], "digest": sha256(r), "size": len(r)}
                               for r in layers]}
        m_bytes = json.dumps(manifest).encode()
        members[f"blobs/sha256/{hashlib.sha256(m_bytes).hexdigest()}"] = m_bytes
        members["oci-layout"] = b'{"imageLayoutVersion": "1.0.0"}'
        members["index.json"] = json.dumps({"schemaVersion": 2, "manifests": [
            {"mediaType": OCI_MANIFEST, "digest": sha256(m_bytes), "size": len(m_bytes),
             "annotations": {"io.containerd.image.name": f"docker.io/library/{tags[0]}"}}]}).encode()
    if style != "oci-archive":  # an OCI layout archived as is has no manifest.json
        members["manifest.json"] = json.dumps([{"Config": cfg_name, "RepoTags": list(tags),
                                                "Layers": names}]).encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1_700_000_000
            tf.addfile(info, io.BytesIO(data))
    dest.write_bytes(compress(buf.getvalue(), outer))
    return dest


def torch_files(site: str, version: str, cuda: str | None) -> list[Entry]:
    """A tiny torch install: `torch/version.py` and a dist-info with METADATA and RECORD."""
    dist_version = version
    di = f"{site}/torch-{dist_version}.dist-info"
    vpy = (f"__version__ = '{version}'\ndebug = False\ncuda = {cuda!r}\ngit_version = 'deadbeef'\n"
           "hip = None\n").encode()
    meta = f"Metadata-Version: 2.1\nName: torch\nVersion: {dist_version}\n\n".encode()
    record = f"torch/version.py,,{len(vpy)}\ntorch-{dist_version}.dist-info/METADATA,,\n".encode()
    return [dir_(f"{site}/torch"), file_(f"{site}/torch/version.py", vpy), dir_(di),
            file_(f"{di}/METADATA", meta), file_(f"{di}/RECORD", record), file_(f"{di}/INSTALLER", b"pip\n")]
