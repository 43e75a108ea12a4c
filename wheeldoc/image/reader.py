"""A container image's filesystem, read without running it and without extracting it.

    with open_image("app.tar") as image:          # docker save (classic or OCI-in-tar) or
        image.config.env, image.env["PATH"]       # an OCI image layout directory / archive
        image.files.read("/etc/os-release", 64 * 1024)
        with image.files.open_buffer("/opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so") as buf:
            ...                                    # an mmap of the layer: nothing copied
        for loc in find_python_environments(image):
            env = inspect_environment(loc, fs=image.files)

Layers are applied in order with whiteouts honoured (see `image_tree`); uncompressed layers
are read in place, gzip / zstd layers are decompressed once into anonymous temporary files;
nothing is ever written to a path taken from the archive. Every size is bounded by `Limits`
(members, bytes, expansion ratio, path length and depth, metadata JSON size, link hops), and
a bad archive raises `InputError` / `LimitExceeded` naming the member.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import platform as _platform
import posixpath
import re
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Literal

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.environment.reader import EnvironmentLocation, location_for_directory
from wheeldoc.image.blobs import (
    Counter,
    DirStore,
    LayerData,
    Limits,
    TarStore,
    open_layer,
)
from wheeldoc.image.tar import iter_members
from wheeldoc.image.tree import Node, Tree

__all__ = ["FileEntry", "HistoryEntry", "Image", "ImageConfig", "ImageFiles", "LayerInfo", "Limits",
           "find_python_environments", "open_image"]

Format = Literal["docker-save", "oci-layout", "oci-archive"]
_INDEX_TYPES = ("application/vnd.oci.image.index.v1+json",
                "application/vnd.docker.distribution.manifest.list.v2+json")
_ARCH = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64", "amd64": "amd64"}
_SITE = re.compile(r"^(?P<prefix>.*?)/lib(?:64)?/python(?P<ver>\d+\.\d+)t?/(?:site|dist)-packages$")
MAX_GLOB_RESULTS = 100_000

# Members cost memory (about 400 bytes each, listed and in the tree) however small the layer
# holding them: an image may always hold MEMBERS_FLOOR of them; beyond that, its layers read so
# far must bring one per MEMBER_BYTES compressed bytes (gzip / zstd layers) or one per
# MEMBER_TAR_BYTES bytes of uncompressed tar (a `docker save` layer.tar: the 512-byte header alone
# is half of that; installed wheels measure 4.6 KB to 141 KB of tar a member). On top of that,
# fixed caps: Limits.max_layer_members for one layer, Limits.max_members for the image.
MEMBERS_FLOOR = 100_000
MEMBER_BYTES = 16
MEMBER_TAR_BYTES = 1024


@dataclass(frozen=True)
class HistoryEntry:
    created_by: str
    empty_layer: bool = False
    created: str | None = None
    comment: str | None = None


@dataclass(frozen=True)
class ImageConfig:
    """The image configuration (what `docker inspect` shows under Config, plus history)."""

    env: tuple[str, ...] = ()  # "KEY=VALUE", in order
    entrypoint: tuple[str, ...] | None = None
    cmd: tuple[str, ...] | None = None
    working_dir: str = ""
    user: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    architecture: str = ""
    os: str = ""
    variant: str | None = None
    created: str | None = None
    history: tuple[HistoryEntry, ...] = ()
    diff_ids: tuple[str, ...] = ()
    digest: str | None = None  # of the config blob, when the manifest names it


@dataclass(frozen=True)
class LayerInfo:
    index: int
    digest: str | None  # the blob digest (compressed), when known
    diff_id: str | None
    media_type: str | None
    compression: str  # "gzip", "zstd", "none"
    compressed_size: int
    size: int  # uncompressed tar bytes
    members: int
    created_by: str | None  # the history entry that made it


@dataclass(frozen=True)
class FileEntry:
    path: str  # as asked (not resolved)
    type: str  # file, dir, symlink, hardlink targets show as file; char, block, fifo, sparse, other
    mode: int
    size: int
    layer: int  # the layer the content comes from (-1 for a folder only implied by its contents)
    link: str | None = None  # symbolic link target, as written


# -- the file view -------------------------------------------------------------------------

class ImageFiles:
    """Read-only access to the merged tree; implements `environment_fs.FileSystem`."""

    def __init__(self, image_path: str, tree: Tree, layers: list[LayerData]) -> None:
        self._where = image_path
        self._tree = tree
        self._layers = layers

    # FileSystem protocol
    def where(self, path: str) -> str:
        return f"{self._where}!{path}"

    def exists(self, path: str) -> bool:
        return self._tree.node(path) is not None

    def is_dir(self, path: str) -> bool:
        node = self._tree.node(path)
        return node is not None and node.type == "dir"

    def is_file(self, path: str) -> bool:
        node = self._tree.node(path)
        return node is not None and node.type == "file"

    def size(self, path: str) -> int:
        return self._file(path).size

    def realpath(self, path: str) -> str:
        return self._tree.resolve(path) or posixpath.normpath("/" + path)

    def listdir(self, path: str) -> list[str]:
        real = self._tree.resolve(path)
        if real is None or self._tree.nodes[real].type != "dir":
            return []
        return sorted(self._tree.children.get(real, ()))

    def read(self, path: str, max_bytes: int) -> bytes:
        node = self._file(path)
        if node.size > max_bytes:
            raise LimitExceeded(self.where(path), f"file is larger than the {max_bytes:,}-byte limit for it")
        return self._layers[node.layer].range.pread(node.offset, node.size)

    def head(self, path: str, n: int) -> bytes:
        node = self._file(path)
        return self._layers[node.layer].range.pread(node.offset, min(n, node.size))

    def open_buffer(self, path: str) -> AbstractContextManager[memoryview]:
        """The file as a read-only buffer: an mmap of the layer data (gzip layers: of their
        anonymous temporary copy); nothing is copied, whatever the size."""
        node = self._file(path)
        return self._layers[node.layer].range.map(node.offset, node.size)

    # more than the protocol
    @contextlib.contextmanager
    def open_file(self, path: str) -> Iterator[BinaryIO]:
        """The file copied into an anonymous temporary file (a real descriptor: mmap-able, or
        readable by a tool through /proc/self/fd); the copy is as large as the file, no larger."""
        node = self._file(path)
        r = self._layers[node.layer].range
        with tempfile.TemporaryFile(prefix="wheeldoc-member-") as out:
            pos = 0
            while pos < node.size:
                chunk = r.pread(node.offset + pos, min(1 << 20, node.size - pos))
                if not chunk:
                    raise InputError(self.where(path), "layer ended inside the file")
                out.write(chunk)
                pos += len(chunk)
            out.flush()
            out.seek(0)
            yield out

    def stat(self, path: str, *, follow: bool = True) -> FileEntry | None:
        node = self._tree.node(path, follow=follow)
        if node is None:
            return None
        return FileEntry(path, node.type, node.mode, node.size, node.layer, node.link)

    def readlink(self, path: str) -> str | None:
        node = self._tree.node(path, follow=False)
        return node.link if node is not None and node.type == "symlink" else None

    def glob(self, pattern: str) -> list[str]:
        """Paths matching a shell pattern (`*`, `?`, `[...]` within one path component), like
        `glob.glob` on the image root; symbolic links to folders are followed, inside the tree."""
        parts = [p for p in pattern.split("/") if p]
        found = ["/"]
        for i, part in enumerate(parts):
            nxt: list[str] = []
            for base in found:
                if not any(c in part for c in "*?["):
                    cand = [part] if self.exists(posixpath.join(base, part)) or (
                        i == len(parts) - 1 and self.stat(posixpath.join(base, part), follow=False)) else []
                else:
                    cand = [n for n in self.listdir(base) if fnmatch.fnmatchcase(n, part)
                            and (part.startswith(".") or not n.startswith("."))]
                nxt.extend(posixpath.join(base, n) for n in cand)
                if len(nxt) > MAX_GLOB_RESULTS:
                    raise LimitExceeded(self.where(pattern), f"more than {MAX_GLOB_RESULTS:,} matches")
            found = nxt
        return sorted(found) if parts else ["/"]

    def walk(self) -> Iterator[tuple[str, FileEntry]]:
        """Every path of the merged tree (links not followed), in no particular order."""
        for path, node in self._tree.nodes.items():
            yield path, FileEntry(path, node.type, node.mode, node.size, node.layer, node.link)

    def _file(self, path: str) -> Node:
        node = self._tree.node(path)
        if node is None:
            raise InputError(self.where(path), "no such file in the image")
        if node.type == "sparse":
            raise InputError(self.where(path), "sparse file: not supported")
        if node.type != "file":
            raise InputError(self.where(path), f"not a regular file ({node.type})")
        return node


# -- the image -----------------------------------------------------------------------------

class Image:
    """An opened image. Close it (or use `with`) to release its files."""

    def __init__(self, path: str, fmt: Format, ref: str | None, config: ImageConfig, layers: tuple[LayerInfo, ...],
                 files: ImageFiles, warnings: tuple[str, ...], closers: list) -> None:
        self.path = path
        self.format = fmt
        self.ref = ref
        self.config = config
        self.layers = layers
        self.files = files
        self.warnings = warnings
        self._closers = closers

    @property
    def env(self) -> dict[str, str]:
        """The final ENV of the image (later entries win)."""
        out: dict[str, str] = {}
        for item in self.config.env:
            k, _, v = item.partition("=")
            out[k] = v
        return out

    def close(self) -> None:
        for c in self._closers:
            c()
        self._closers.clear()

    def __enter__(self) -> Image:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_image(path: str | os.PathLike[str], *, ref: str | None = None, platform: str | None = None,
               limits: Limits | None = None, verify: bool = False) -> Image:
    """Open a `docker save` tarball, an OCI archive, or an OCI image layout directory.

    `ref` picks one image of an archive holding several (a RepoTag or an OCI ref.name);
    `platform` ("linux/arm64") picks from a multi-platform index (default: this machine's);
    `verify` checks every blob against its digest and every layer against its diff_id."""
    path = os.fspath(path)
    limits = limits or Limits()
    counter = Counter(limits)
    if os.path.isdir(path):
        store: DirStore | TarStore = DirStore(path)
        fmt: Format = "oci-layout"
    elif os.path.isfile(path):
        store = TarStore(path, limits, counter)
        fmt = "docker-save" if store.has("manifest.json") else "oci-archive"
    else:
        raise InputError(path, "no such file or folder")
    layers: list[LayerData] = []
    closers: list = [store.close]

    def close_layers() -> None:
        for lay in layers:
            if lay.range.f not in store.files:
                lay.range.f.close()

    closers.append(close_layers)
    try:
        if fmt == "docker-save":
            config_name, layer_refs, tag = _docker_manifest(store, ref, limits)
            config_digest = None
        else:
            config_name, layer_refs, tag, config_digest = _oci_manifest(store, ref, platform, limits)
        raw = store.read_small(config_name, limits.max_json_bytes)
        if verify and config_digest:
            _check_digest(raw, config_digest, store.where(config_name))
        config = _parse_config(raw, store.where(config_name), config_digest)
        if len(layer_refs) > limits.max_layers:
            raise LimitExceeded(path, f"{len(layer_refs)} layers (limit {limits.max_layers})")
        if config.diff_ids and len(config.diff_ids) != len(layer_refs):
            raise InputError(store.where(config_name), f"config lists {len(config.diff_ids)} diff_ids for "
                                                      f"{len(layer_refs)} layers")
        tree = Tree(limits)
        infos: list[LayerInfo] = []
        history = [h.created_by for h in config.history if not h.empty_layer]
        weight = 0  # members the layers read so far pay for (MEMBER_BYTES, MEMBER_TAR_BYTES)
        for i, (name, digest, media_type) in enumerate(layer_refs):
            where = store.where(name)
            diff_id = config.diff_ids[i] if i < len(config.diff_ids) else None
            data = open_layer(store.open(name), where, limits, counter, digest=digest, diff_id=diff_id,
                              verify=verify)
            layers.append(data)
            weight += (data.compressed_size // MEMBER_BYTES if data.compression != "none"
                       else data.size // MEMBER_TAR_BYTES)
            members = _layer_members(data, where, limits, counter.members, weight)
            counter.members += len(members)
            tree.apply_layer(i, members, where)
            infos.append(LayerInfo(i, digest, diff_id, media_type, data.compression, data.compressed_size,
                                   data.size, len(members), history[i] if i < len(history) else None))
        files = ImageFiles(path, tree, layers)
        return Image(path, fmt, tag, config, tuple(infos), files, tuple(tree.warnings), closers)
    except BaseException:
        for c in closers:
            c()
        raise


def _layer_members(data: LayerData, where: str, limits: Limits, before: int, weight: int) -> list:
    """The tar members of one layer, `before` members having been read from the layers below
    it, whose sizes (with this one's) pay for `weight` members. The headers are read through
    `pread`, so a refused layer costs what the members listed so far cost, and no more."""
    image_cap = min(limits.max_members, max(MEMBERS_FLOOR, weight))
    allowed = max(0, min(limits.max_layer_members, image_cap - before))
    try:
        return list(iter_members(data.range.headers(), where, max_members=allowed))
    except LimitExceeded as e:
        if allowed == limits.max_layer_members:
            why = (f"more than {allowed:,} members in one layer "
                   f"(limit max_layer_members {limits.max_layer_members:,})")
        elif image_cap == limits.max_members:
            why = f"more than {image_cap:,} members in the image (limit max_members {limits.max_members:,})"
        else:
            size = (f"{data.compressed_size:,} compressed bytes" if data.compression != "none"
                    else f"{data.size:,} bytes of uncompressed tar")
            why = (f"more than {image_cap:,} members in {size}" + (" and the layers below" if before else "")
                   + f" (limit: {MEMBERS_FLOOR:,} per image, or one per {MEMBER_BYTES} compressed "
                     f"or {MEMBER_TAR_BYTES:,} uncompressed layer bytes when more)")
        raise LimitExceeded(where, why, offset=e.offset) from None


# -- manifests -----------------------------------------------------------------------------

def _json(store, name: str, limits: Limits) -> Any:
    from wheeldoc.core.safeload import load_json

    raw = store.read_small(name, limits.max_json_bytes)
    return load_json(raw, store.where(name))


def _docker_manifest(store: TarStore, ref: str | None, limits: Limits):
    manifest = _json(store, "manifest.json", limits)
    where = store.where("manifest.json")
    if not isinstance(manifest, list) or not manifest or not all(isinstance(m, dict) for m in manifest):
        raise InputError(where, "expected a non-empty list of images")
    chosen = _choose([(m, tuple(m.get("RepoTags") or ())) for m in manifest], ref, where)
    config = chosen.get("Config")
    layers = chosen.get("Layers")
    if not isinstance(config, str) or not isinstance(layers, list) or not all(isinstance(x, str) for x in layers):
        raise InputError(where, "image entry needs a Config name and a list of Layers")
    tags = chosen.get("RepoTags") or []
    descriptors = chosen.get("LayerSources") if isinstance(chosen.get("LayerSources"), dict) else {}
    refs = []
    for name in layers:
        digest = None
        m = re.search(r"blobs/(sha256|sha512)/([0-9a-f]+)$", name)
        if m:
            digest = f"{m[1]}:{m[2]}"
        media = (descriptors.get(digest) or {}).get("mediaType") if digest else None
        refs.append((name, digest, media))
    return config, refs, (ref or (tags[0] if tags else None))


def _choose(candidates: list[tuple[dict, tuple[str, ...]]], ref: str | None, where: str) -> dict:
    if ref is not None:
        for item, names in candidates:
            if ref in names:
                return item
        raise InputError(where, f"no image named {ref!r} (it holds: {_names(candidates)})")
    if len(candidates) > 1:
        raise InputError(where, f"{len(candidates)} images in one archive; pick one with ref= "
                                f"({_names(candidates)})")
    return candidates[0][0]


def _names(candidates) -> str:
    return ", ".join(n for _, names in candidates for n in names) or "no names"


def _oci_manifest(store, ref: str | None, platform: str | None, limits: Limits):
    if not store.has("oci-layout") and not store.has("index.json"):
        raise InputError(store.where(""), "neither a docker save archive (manifest.json) nor an OCI image "
                                          "layout (oci-layout, index.json)")
    index = _json(store, "index.json", limits)
    where = store.where("index.json")
    entries = index.get("manifests") if isinstance(index, dict) else None
    if not isinstance(entries, list) or not entries:
        raise InputError(where, "index has no manifests")
    named = [(d, tuple(x for x in [(d.get("annotations") or {}).get("org.opencontainers.image.ref.name"),
                                   (d.get("annotations") or {}).get("io.containerd.image.name")] if x))
             for d in entries if isinstance(d, dict)]
    if ref is None and len(named) > 1 and all(isinstance(d.get("platform"), dict) for d, _ in named):
        desc = _pick_platform(index, platform, where)
    else:
        desc = _choose(named, ref, where) if ref is not None or len(named) > 1 else named[0][0]
    tag = ref or next((names[0] for d, names in named if d is desc and names), None)
    for _ in range(4):  # an index may point to a (multi-platform) index
        media = desc.get("mediaType")
        name = store.blob(desc.get("digest", ""))
        body = _json(store, name, limits)
        if media in _INDEX_TYPES or (isinstance(body, dict) and "manifests" in body and "layers" not in body):
            desc = _pick_platform(body, platform, store.where(name))
            continue
        if not isinstance(body, dict) or not isinstance(body.get("config"), dict) \
                or not isinstance(body.get("layers"), list):
            raise InputError(store.where(name), "image manifest needs a config and a list of layers")
        config_digest = body["config"].get("digest", "")
        layers = []
        for layer in body["layers"]:
            if not isinstance(layer, dict):
                raise InputError(store.where(name), "layer descriptor is not an object")
            blob = store.blob(layer.get("digest", ""))
            if not store.has(blob):
                raise InputError(store.where(blob), f"layer blob {layer.get('digest')} is not in the image "
                                                    f"(a foreign or non-distributable layer?)")
            layers.append((blob, layer.get("digest"), layer.get("mediaType")))
        return store.blob(config_digest), layers, tag, config_digest
    raise InputError(where, "index nests more than 4 levels deep")


def _pick_platform(index: Any, platform: str | None, where: str) -> dict:
    entries = index.get("manifests") if isinstance(index, dict) else None
    if not isinstance(entries, list) or not entries:
        raise InputError(where, "index has no manifests")
    want = platform or f"linux/{_ARCH.get(_platform.machine().lower(), _platform.machine().lower())}"
    os_, _, arch = want.partition("/")
    arch, _, variant = arch.partition("/")
    seen = []
    for d in entries:
        p = d.get("platform") if isinstance(d, dict) else None
        if not isinstance(p, dict):
            continue
        seen.append(f"{p.get('os')}/{p.get('architecture')}" + (f"/{p['variant']}" if p.get("variant") else ""))
        if p.get("os") == os_ and p.get("architecture") == arch and (not variant or p.get("variant") == variant):
            return d
    raise InputError(where, f"no {want} image in the index (it has: {', '.join(seen) or 'none'})")


def _check_digest(raw: bytes, digest: str, where: str) -> None:
    import hashlib

    alg, _, expected = digest.partition(":")
    if alg in ("sha256", "sha512") and hashlib.new(alg, raw).hexdigest() != expected:
        raise InputError(where, f"content does not match its digest {digest}")


def _parse_config(raw: bytes, where: str, digest: str | None) -> ImageConfig:
    from wheeldoc.core.safeload import load_json

    doc = load_json(raw, where, "image config")
    if not isinstance(doc, dict):
        raise InputError(where, "image config is not a JSON object")
    c = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    rootfs = doc.get("rootfs") if isinstance(doc.get("rootfs"), dict) else {}
    history = []
    for h in doc.get("history") or []:
        if isinstance(h, dict):
            history.append(HistoryEntry(_s(h.get("created_by")), bool(h.get("empty_layer")),
                                        h.get("created") if isinstance(h.get("created"), str) else None,
                                        h.get("comment") if isinstance(h.get("comment"), str) else None))
    labels = c.get("Labels") if isinstance(c.get("Labels"), dict) else {}
    return ImageConfig(
        env=tuple(e for e in c.get("Env") or () if isinstance(e, str)),
        entrypoint=_strs(c.get("Entrypoint")), cmd=_strs(c.get("Cmd")),
        working_dir=_s(c.get("WorkingDir")), user=_s(c.get("User")),
        labels={str(k): _s(v) for k, v in labels.items()},
        architecture=_s(doc.get("architecture")), os=_s(doc.get("os")),
        variant=doc.get("variant") if isinstance(doc.get("variant"), str) else None,
        created=doc.get("created") if isinstance(doc.get("created"), str) else None,
        history=tuple(history),
        diff_ids=tuple(d for d in rootfs.get("diff_ids") or () if isinstance(d, str)),
        digest=digest)


def _s(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _strs(v: Any) -> tuple[str, ...] | None:
    if isinstance(v, list):
        return tuple(x for x in v if isinstance(x, str))
    if isinstance(v, str):  # a shell-form string some tools write
        return (v,)
    return None


# -- Python environments -------------------------------------------------------------------

def find_python_environments(image: Image) -> tuple[EnvironmentLocation, ...]:
    """Every site-packages / dist-packages folder of the image holding installed distributions:
    system Pythons (`/usr/lib/python3*/`, `/usr/local/lib/python3*/`, Debian's
    `/usr/lib/python3/dist-packages`), virtual environments (a `pyvenv.cfg` at the prefix) and
    conda environments (a `conda-meta/` folder at the prefix)."""
    files = image.files
    found: dict[str, tuple[str, str | None]] = {}
    for path, entry in files.walk():
        if entry.type != "dir" or not path.endswith(("-packages",)):
            continue
        m = _SITE.match(path)
        if m:
            found.setdefault(path, (m["prefix"] or "/", m["ver"]))
        elif path == "/usr/lib/python3/dist-packages":
            found.setdefault(path, ("/usr", _debian_python(files)))
    out = []
    for sp in sorted(found):
        if not any(n.endswith((".dist-info", ".egg-info")) for n in files.listdir(sp)):
            continue
        prefix, version = found[sp]
        kind: Literal["system", "venv", "conda", "unknown"] = "system"
        if files.is_file(posixpath.join(prefix, "pyvenv.cfg")):
            kind = "venv"
        elif files.is_dir(posixpath.join(prefix, "conda-meta")):
            kind = "conda"
        loc = location_for_directory(sp, fs=files, machine=image.config.architecture or None, origin="image",
                                     prefix=prefix, kind=kind,
                                     python_version=None if kind == "venv" else version)
        out.append(loc)
    return tuple(out)


def _debian_python(files: ImageFiles) -> str | None:
    versions = sorted((tuple(int(x) for x in m[1].split(".")), m[1])
                      for n in files.listdir("/usr/bin") if (m := re.match(r"^python(\d+\.\d+)$", n)))
    return versions[-1][1] if versions else None
