"""The offline torch ABI index: what each torch build exports and needs, without its wheel.

An entry holds, for one torch wheel (release, local build, platform), everything the loader
model reads from that wheel: the listing of its shared objects and of the few text members the
model opens (`torch/__init__.py`, `torch/version.py`, METADATA, WHEEL), the ELF facts of every
shared object (soname, DT_NEEDED, RPATH/RUNPATH, version definitions and requirements, the
exported symbols with their versions), and the wheel's file name and sha256 (its provenance).
`IndexedWheel` serves an entry as a `MemberSource`, so `abi` runs the same model, with the same
explanations, as on the wheel itself.

Two stores are searched: the index shipped in `wheeldoc/data/torch_index/` (built by
scripts/torch_index/ from every torch wheel of the package index) and the user's local index
in the cache folder (`wheeldoc index add TORCH.whl…`), which wins on equal keys.
"""

from __future__ import annotations

import json
import os
import struct
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from wheeldoc.binary.elf import ElfInfo
from wheeldoc.binary.members import Member, MemberData, MemberSource, WheelInfo
from wheeldoc.core.errors import InputError

ENTRY_VERSION = 1


@dataclass(frozen=True)
class Key:
    """What an entry answers for: `torch==2.11.0+cu130` on linux aarch64."""

    version: str  # public version, `2.11.0`
    local: str | None  # `cu130`, `cpu`, or None for the package index's own build
    arch: str  # x86_64, aarch64

    @property
    def label(self) -> str:
        return f"torch {self.version}{'+' + self.local if self.local else ''} ({self.arch})"


def key_of(entry: dict[str, Any]) -> Key:
    version = entry["info"]["version"]
    public, _, local = version.partition("+")
    tags = entry["info"]["tags"]
    arch = "aarch64" if any(t.endswith("aarch64") for t in tags) else "x86_64"
    return Key(public, local or None, arch)


class IndexedWheel(MemberSource):
    """A torch wheel known only from its index entry: no archive is ever opened."""

    def __init__(self, entry: dict[str, Any], origin: str) -> None:
        super().__init__()
        self.entry = entry
        self.origin = origin  # "index" (shipped) or "local index" (the cache)
        self.path = entry["wheel"]["filename"]
        self.members = tuple(Member(n, s, s, h, "deflated") for n, s, h in entry["members"])
        self.rejected = ()
        self.dist_info = entry["dist_info"]
        self._texts: dict[str, str] = entry["texts"]
        self._elf: dict[str, Any] = entry["elf"]

    @property
    def sha256(self) -> str:
        return self.entry["wheel"]["sha256"]

    def wheel_info(self) -> WheelInfo:
        i = self.entry["info"]
        return WheelInfo(i["name"], i["version"], i["build"], tuple(i["tags"]), tuple(i["wheel_tags"]),
                         i["wheel_version"], i["generator"], i["root_is_purelib"])

    def read_bytes(self, name: str, limit: int | None = None) -> bytes:
        if name in self._texts:
            return self._texts[name].encode("utf-8", "surrogateescape")
        raise InputError(self.path, "not kept in the torch index", member=name)

    def open(self, name: str) -> MemberData:
        return MemberData(self.path, name, self.read_bytes(name))

    def elf_facts(self, name: str) -> ElfInfo | None:
        """The ELF facts the index keeps for this member (None: not a shared object it read)."""
        data = self._elf.get(name)
        if data is None:
            if name in self.entry.get("unreadable", {}):
                raise InputError(self.path, self.entry["unreadable"][name], member=name)
            return None
        from wheeldoc.abi.index_pack import unpack_symbols
        from wheeldoc.binary.elf import VersionDefinition, VersionRequirement

        d = data
        try:
            symbols = unpack_symbols(self.entry, d)
        except (KeyError, IndexError, TypeError, ValueError) as e:
            raise InputError(self.path, f"damaged torch index entry ({e.__class__.__name__})", member=name) from None
        return ElfInfo(self.path, name, d["machine"], d["elf_class"], d["little_endian"], d["file_type"],
                       d["soname"], tuple(d["needed"]), tuple(d["rpath"]), tuple(d["runpath"]),
                       tuple(VersionDefinition(i, n, f, tuple(p)) for i, n, f, p in d["version_definitions"]),
                       tuple(VersionRequirement(lib, n, i, f) for lib, n, i, f in d["version_requirements"]),
                       symbols, d["tables_from"])


# -- the stores -----------------------------------------------------------------------------------
def shipped_dir() -> Path:
    return Path(__file__).resolve().parents[1] / "data" / "torch_index"


def local_dir() -> Path:
    from wheeldoc.core.cache import default_dir

    return default_dir() / "torch-index"


@lru_cache(maxsize=None)
def _catalog(folder: str) -> dict[Key, str]:
    """Key -> entry file, from the folder's `catalog.json` (written with the entries)."""
    try:
        raw = json.loads(Path(folder, "catalog.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    out = {}
    for row in raw.get("entries", []) if isinstance(raw, dict) else []:
        try:
            out[Key(row["version"], row["local"], row["arch"])] = row["file"]
        except (KeyError, TypeError):
            continue
    return out


def stores() -> list[tuple[str, Path]]:
    out = [("local index", local_dir())]
    if os.environ.get("WHEELDOC_NO_TORCH_INDEX") != "1":
        out.append(("index", shipped_dir()))
    return out


def find(key: Key) -> IndexedWheel | None:
    for origin, folder in stores():
        name = _catalog(str(folder)).get(key)
        if name is not None:
            entry = load_entry(folder / name)
            if entry is not None:
                return IndexedWheel(entry, origin)
    return None


def releases(arch: str) -> list[Key]:
    """Every key the stores hold for this platform (local index first)."""
    seen: dict[Key, None] = {}
    for _, folder in stores():
        for key in _catalog(str(folder)):
            if key.arch == arch:
                seen.setdefault(key)
    return list(seen)


def load_entry(path: Path) -> dict[str, Any] | None:
    from wheeldoc.abi.index_pack import read_entry

    try:
        entry = read_entry(path)
    except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, struct.error, zlib.error):
        return None
    if entry.get("entry_version") != ENTRY_VERSION:
        return None
    return entry


# -- requirements -----------------------------------------------------------------------------------
def pinned_key(requirement: str, arch: str, *, index_options: bool) -> Key | None:
    """The entry a single pin names: `torch==2.11.0` is the package index's own build (unless index
    options point elsewhere), `torch==2.11.0+cu130` that local build wherever it comes from."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    try:
        req = Requirement(requirement)
    except InvalidRequirement:
        return None
    spec = list(req.specifier)
    if canonicalize_name(req.name) != "torch" or req.marker is not None or len(spec) != 1 \
            or spec[0].operator not in ("==", "===") or "*" in spec[0].version:
        return None
    try:
        v = Version(spec[0].version)
    except InvalidVersion:
        return None
    if v.local is None and index_options:
        return None
    return Key(v.public, v.local, arch)


def covered(requirement: str, arch: str) -> list[IndexedWheel]:
    """The package index's builds the stores hold whose release the range admits, newest first."""
    from packaging.requirements import Requirement
    from packaging.version import Version

    spec = Requirement(requirement).specifier
    keys = [k for k in releases(arch) if k.local is None and spec.contains(Version(k.version), prereleases=True)]
    keys.sort(key=lambda k: Version(k.version), reverse=True)
    return [w for w in (find(k) for k in keys) if w is not None]
