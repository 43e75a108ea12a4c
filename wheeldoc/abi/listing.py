"""A wheel's listing, cached by the digest of its central directory, so a warm run does not parse
a 13,000-member RECORD again.

`open_wheel(path, cache)` hashes the archive's end records and central directory (one read of
~1.5 MB for torch: every member's name, sizes and CRC-32, RECORD's included) with the file size.
On a hit it returns a `ListedWheel`: the members (with their RECORD sha256), the refused ones,
METADATA, the tags and `torch/version.py`, as the first full open (`WheelArchive`) found them;
the archive itself is opened only if a member has to be read (an ELF table missing from the
cache). Anything unusual (no end record, a central directory out of bounds, a cache error) falls
back to `WheelArchive`, which then does all the checking.
"""

from __future__ import annotations

import hashlib
import os
import struct
import threading
from typing import TYPE_CHECKING, Any, Callable

from wheeldoc.binary.members import DistMetadata, Member, MemberSource, RejectedMember, WheelArchive, WheelInfo
from wheeldoc.core.files import open_regular

if TYPE_CHECKING:
    from wheeldoc.core.cache import Cache

LISTING_VERSION = "listing-1"
SMALL_TEXTS = ("torch/version.py",)
MAX_CENTRAL_DIRECTORY = 256 << 20
_EOCD, _EOCD64, _LOCATOR64, _CENTRAL = b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07", b"PK\x01\x02"


def central_directory_digest(path: str) -> str | None:
    """sha256 of (file size, central directory, end records), or None when they cannot be found."""
    try:
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            tail_len = min(size, (1 << 16) + 22)
            f.seek(size - tail_len)
            tail = f.read(tail_len)
            at = tail.rfind(_EOCD)
            if at < 0 or at + 22 > len(tail):
                return None
            _, _, _, entries, cd_size, cd_offset = struct.unpack("<HHHHII", tail[at + 4: at + 20])
            if 0xFFFFFFFF in (cd_size, cd_offset) or entries == 0xFFFF:
                loc = tail.rfind(_LOCATOR64, 0, at)
                if loc < 0:
                    return None
                (eocd64_at,) = struct.unpack("<4xQ4x", tail[loc + 4: loc + 20])
                f.seek(eocd64_at)
                rec = f.read(56)
                if len(rec) < 56 or not rec.startswith(_EOCD64):
                    return None
                cd_size, cd_offset = struct.unpack("<QQ", rec[40:56])
            if cd_size > MAX_CENTRAL_DIRECTORY or cd_offset + cd_size > size:
                return None
            f.seek(cd_offset)
            cd = f.read(cd_size)
    except (OSError, struct.error):
        return None
    if cd and not cd.startswith(_CENTRAL):
        return None
    h = hashlib.sha256(struct.pack("<Q", size))
    h.update(cd)
    h.update(tail[at:])
    return h.hexdigest()


class ListedWheel(MemberSource):
    """A wheel known from its cached listing; the archive opens on the first member read."""

    def __init__(self, path: str, data: dict[str, Any]) -> None:
        super().__init__()
        self.path = path
        self.members = tuple(Member(n, s, c, h, k) for n, s, c, h, k in data["members"])
        self.rejected = tuple(RejectedMember(n, r) for n, r in data["rejected"])
        self.dist_info = data["dist_info"]
        meta = data["metadata"]
        self._metadata = DistMetadata(meta[0], meta[1], tuple(meta[2]), meta[3]) if meta else None
        info = data["wheel_info"]
        self._wheel_info = WheelInfo(info[0], info[1], info[2], tuple(info[3]), tuple(info[4]), info[5],
                                     info[6], info[7]) if info else None
        self._texts: dict[str, str] = data["texts"]
        self._archive: WheelArchive | None = None
        self._lock = threading.Lock()

    def archive(self) -> WheelArchive:
        with self._lock:  # the reader threads ask at once
            if self._archive is None:
                self._archive = WheelArchive(self.path)
            return self._archive

    def metadata(self) -> DistMetadata | None:
        return self._metadata

    def wheel_info(self) -> WheelInfo:
        return self._wheel_info if self._wheel_info is not None else self.archive().wheel_info()

    def read_bytes(self, name: str, limit: int | None = None) -> bytes:
        if name in self._texts:
            return self._texts[name].encode("utf-8", "surrogateescape")
        return self.archive().read_bytes(name, limit)

    def open(self, name: str):
        return self.archive().open(name)

    def stream(self, name: str, *, check: bool = True):
        return self.archive().stream(name, check=check)

    def stored_sha256(self, name: str) -> str:
        return self.archive().stored_sha256(name)

    def close(self) -> None:
        if self._archive is not None:
            self._archive.close()


def open_wheel(path: str, cache: Cache | None, *,
               on_open: Callable[[MemberSource], None] | None = None) -> MemberSource:
    """The wheel's member view: from the cached listing when its central directory is known.
    `on_open(view)` runs as soon as the view exists, before a first open stores the listing."""
    digest = central_directory_digest(path) if cache is not None else None
    if digest is not None and cache is not None:
        hit = cache.get("wheel-listing", digest, LISTING_VERSION)
        if hit is not None:
            try:
                listed = ListedWheel(path, hit)
            except (KeyError, TypeError, ValueError, IndexError):
                cache.discard("wheel-listing", digest, LISTING_VERSION)
            else:
                if on_open is not None:
                    on_open(listed)
                return listed
    archive = WheelArchive(path)
    if on_open is not None:
        on_open(archive)
    if digest is not None and cache is not None:
        try:
            cache.put("wheel-listing", digest, LISTING_VERSION, _listing(archive))
        except Exception:  # noqa: BLE001 (the cache is an optimization: a METADATA error shows later)
            pass
    return archive


def _listing(archive: WheelArchive) -> dict[str, Any]:
    from wheeldoc.core.errors import InputError

    try:
        meta = archive.metadata()
    except InputError:
        meta = None
    try:
        info = archive.wheel_info()
    except InputError:
        info = None
    texts = {}
    for name in SMALL_TEXTS:
        m = archive.member(name)
        if m is not None and m.size <= 1 << 20:
            texts[name] = archive.read_bytes(name).decode("utf-8", "surrogateescape")
    if meta is None and archive.dist_info is not None:
        raise ValueError("METADATA unreadable: not cached, so every run reports it")
    return {
        "members": [[m.name, m.size, m.compressed_size, m.sha256, m.compression] for m in archive.members],
        "rejected": [[r.name, r.reason] for r in archive.rejected],
        "dist_info": archive.dist_info,
        "metadata": [meta.name, meta.version, list(meta.requires_dist), meta.requires_python] if meta else None,
        "wheel_info": [info.name, info.version, info.build, list(info.tags), list(info.wheel_tags),
                       info.wheel_version, info.generator, info.root_is_purelib] if info else None,
        "texts": texts,
    }
