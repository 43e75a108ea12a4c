"""A content-addressed cache of parsed facts, safe to share between concurrent runs.

Entries live under `$WHEELDOC_CACHE_DIR`, else `$XDG_CACHE_HOME/wheeldoc`, else
`~/.cache/wheeldoc`. A key is (kind, sha256 of the content, parser version): for wheel
members the sha256 comes from the wheel's RECORD, so a warm run never hashes or inflates.
Values are JSON (never pickle), zlib-compressed behind a magic and a sha256 checksum of the
payload; an entry that fails the checksum or does not decode is deleted and reported as a
miss, so the caller rebuilds it. Writes go to a temporary file in the same directory and are
renamed into place (`os.replace`), so readers see either no entry or a whole one. The cache
is an optimization only: any error writing it is ignored.
"""

from __future__ import annotations

from wheeldoc.core.files import open_regular

import hashlib
import json
import os
import re
import tempfile
import zlib
from pathlib import Path
from typing import Any, Callable, TypeVar

T = TypeVar("T")

FORMAT = b"WDC1"  # bump when the entry layout changes
_HEADER = len(FORMAT) + 32
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_WORD = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
MAX_ENTRY = 1 << 30


def default_dir() -> Path:
    env = os.environ.get("WHEELDOC_CACHE_DIR")
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "wheeldoc"


class Cache:
    """get / put / get_or_build on JSON values, keyed by content hash and parser version."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_dir()
        self.hits = 0
        self.misses = 0
        self.rebuilt = 0  # corrupted entries found and discarded

    def path(self, kind: str, sha256: str, version: str) -> Path:
        """Where an entry lives: <root>/<kind>/<sha[:2]>/<sha>.<version>."""
        if not _WORD.match(kind) or not _WORD.match(version):
            raise ValueError(f"cache kind and version must be short plain words: {kind!r}, {version!r}")
        if not _SHA256.match(sha256):
            raise ValueError(f"not a sha256 hex digest: {sha256!r}")
        return self.root / kind / sha256[:2] / f"{sha256}.{version}"

    def get(self, kind: str, sha256: str, version: str) -> Any | None:
        """The cached value, or None on a miss (a corrupted entry is deleted and counts as one)."""
        path = self.path(kind, sha256, version)
        try:
            with open_regular(path) as f:
                raw = f.read(MAX_ENTRY + 1)
        except OSError:
            self.misses += 1
            return None
        value = _decode(raw)
        if value is _CORRUPT:
            self.rebuilt += 1
            self.misses += 1
            _unlink(path)
            return None
        self.hits += 1
        return value

    def put(self, kind: str, sha256: str, version: str, value: Any) -> bool:
        """Store a JSON-serializable value (not None); False when the cache could not be written."""
        if value is None:
            raise ValueError("None cannot be cached: get() returns None for a miss")
        path = self.path(kind, sha256, version)
        data = _encode(value)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        except OSError:
            return False
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
            return True
        except OSError:
            _unlink(Path(tmp))
            return False

    def discard(self, kind: str, sha256: str, version: str) -> None:
        """Drop an entry (a caller found its value unusable)."""
        _unlink(self.path(kind, sha256, version))

    def get_or_build(self, kind: str, sha256: str, version: str, build: Callable[[], T],
                     encode: Callable[[T], Any] = lambda v: v,
                     decode: Callable[[Any], T] = lambda v: v) -> T:
        """The cached value, or `build()` stored for next time. A value `decode` rejects
        (KeyError, TypeError, ValueError) counts as corrupt and is rebuilt."""
        hit = self.get(kind, sha256, version)
        if hit is not None:
            try:
                return decode(hit)
            except (KeyError, TypeError, ValueError, IndexError):
                self.rebuilt += 1
                self.discard(kind, sha256, version)
        value = build()
        self.put(kind, sha256, version, encode(value))
        return value


class _Corrupt:
    pass


_CORRUPT: Any = _Corrupt()


def _encode(value: Any) -> bytes:
    payload = zlib.compress(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode(), 1)
    return FORMAT + hashlib.sha256(payload).digest() + payload


def _decode(raw: bytes) -> Any:
    if len(raw) < _HEADER or len(raw) > MAX_ENTRY or not raw.startswith(FORMAT):
        return _CORRUPT
    payload = raw[_HEADER:]
    if hashlib.sha256(payload).digest() != raw[len(FORMAT): _HEADER]:
        return _CORRUPT
    try:
        d = zlib.decompressobj()
        text = d.decompress(payload, MAX_ENTRY)
        if d.unconsumed_tail or not d.eof:
            return _CORRUPT
        return json.loads(text)
    except (zlib.error, ValueError, RecursionError):
        return _CORRUPT


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def sha256_file(path: str | os.PathLike[str]) -> str:
    """The sha256 hex digest of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open_regular(path) as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
