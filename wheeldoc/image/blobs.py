"""Where an image's blobs live, and layers as random-access uncompressed tar data.

- `DirStore`: an OCI image layout directory; blobs are `blobs/<alg>/<hex>`, named by digest
  only (a digest that is not `sha256:<64 hex>` / `sha512:<128 hex>` is refused), opened without
  following symbolic links and only inside the layout.
- `TarStore`: a `docker save` / OCI archive tarball (optionally gzip- or zstd-compressed as a
  whole); blobs are members, found through the archive's own index, never extracted.
- `LayerData`: one layer's uncompressed tar bytes, in place (an uncompressed blob: a file
  range) or spooled once into an anonymous temporary file (gzip / zstd), with the
  decompressed size, the total, and the expansion ratio bounded.
"""

from __future__ import annotations

import contextlib
import hashlib
import mmap
import os
import re
import stat
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.image.tar import iter_members
from wheeldoc.core.files import open_regular

CHUNK = 1 << 20
_DIGEST = re.compile(r"^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$")
GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


@dataclass(frozen=True)
class Limits:
    """Resource bounds for reading an image. Every one names itself in its error message."""

    max_layers: int = 512
    max_members: int = 1_000_000  # tar members over all layers (fewer when the layers are small: reader.py)
    max_layer_members: int = 200_000  # tar members of one layer, however large it is
    max_archive_members: int = 100_000  # members of a docker save / OCI archive itself (blobs, manifests)
    max_total_bytes: int = 256 << 30  # uncompressed bytes over all layers
    max_ratio: int = 200  # uncompressed / compressed bytes of one layer ...
    ratio_floor: int = 64 << 20  # ... checked once a layer has inflated past this
    max_path_depth: int = 256
    max_path_length: int = 4096
    max_json_bytes: int = 16 << 20  # manifest.json, index.json, manifests, config
    max_symlink_hops: int = 40


class Counter:
    """Running totals shared by all layers of one image."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.bytes = 0
        self.members = 0


# -- random-access byte ranges ---------------------------------------------------------------

class Range:
    """`size` bytes at `base` of an open file; the file is owned by whoever opened it."""

    def __init__(self, f: BinaryIO, base: int, size: int) -> None:
        self.f, self.base, self.size = f, base, size

    def pread(self, offset: int, n: int) -> bytes:
        n = max(0, min(n, self.size - offset))
        return os.pread(self.f.fileno(), n, self.base + offset) if n else b""

    @contextlib.contextmanager
    def map(self, offset: int = 0, n: int | None = None) -> Iterator[memoryview]:
        """`n` bytes at `offset` as a read-only buffer, mapped (never copied)."""
        n = self.size - offset if n is None else n
        if n <= 0:
            yield memoryview(b"")
            return
        start = self.base + offset
        aligned = start - start % mmap.ALLOCATIONGRANULARITY
        mm = mmap.mmap(self.f.fileno(), n + (start - aligned), prot=mmap.PROT_READ, offset=aligned)
        view = memoryview(mm)[start - aligned: start - aligned + n]
        try:
            yield view
        finally:
            view.release()
            with contextlib.suppress(BufferError):
                mm.close()

    def headers(self) -> PreadBuffer:
        """The range as a sliceable buffer read through `pread` (see `PreadBuffer`)."""
        return PreadBuffer(self)

    def chunks(self) -> Iterator[bytes]:
        pos = 0
        while pos < self.size:
            data = self.pread(pos, CHUNK)
            if not data:
                return
            pos += len(data)
            yield data


class PreadBuffer:
    """A `Range` that slices like bytes, read through `pread` a window at a time: what the tar
    header scan walks. A mapping would do, but every page of a mapping it touches counts as the
    process's own memory until it is unmapped (a layer of 200,000 empty members is 100 MB of
    headers); pages read through `pread` stay in the page cache, outside the process."""

    WINDOW = 16 << 10

    def __init__(self, r: Range) -> None:
        self._r = r
        self._at = 0
        self._win = b""

    def __len__(self) -> int:
        return self._r.size

    def __getitem__(self, s: slice) -> bytes:
        if not isinstance(s, slice):
            raise TypeError("PreadBuffer takes slices only")
        start, stop, _ = s.indices(self._r.size)
        if stop <= start:
            return b""
        if self._at <= start and stop <= self._at + len(self._win):
            return self._win[start - self._at:stop - self._at]
        if stop - start > self.WINDOW:
            return self._r.pread(start, stop - start)
        self._at, self._win = start, self._r.pread(start, self.WINDOW)
        return self._win[:stop - start]


# -- blob stores ---------------------------------------------------------------------------

class DirStore:
    """An OCI image layout directory."""

    def __init__(self, root: str) -> None:
        self.root = os.path.realpath(root)
        self.files: list[BinaryIO] = []

    def where(self, name: str) -> str:
        return os.path.join(self.root, name)

    def has(self, name: str) -> bool:
        return os.path.isfile(os.path.join(self.root, name))

    def read_small(self, name: str, limit: int) -> bytes:
        r = self.open(name)
        if r.size > limit:
            raise LimitExceeded(self.where(name), f"{r.size:,} bytes (limit {limit:,} for metadata)")
        return r.pread(0, r.size)

    def open(self, name: str) -> Range:
        parts = name.split("/")
        if name.startswith("/") or any(p in ("", ".", "..") for p in parts):
            raise InputError(self.root, f"refusing blob path {name!r}")
        path = os.path.join(self.root, *parts)
        parent = os.path.realpath(os.path.dirname(path))
        if parent != self.root and not parent.startswith(self.root + os.sep):
            raise InputError(path, "blob folder lies outside the image layout (symbolic link)")
        from wheeldoc.core.files import NotRegularFile, open_fd

        try:
            fd = open_fd(path, getattr(os, "O_NOFOLLOW", 0))  # non-blocking open: a FIFO never hangs
        except NotRegularFile as e:
            raise InputError(path, f"blob is {e.strerror}") from None
        except FileNotFoundError:
            raise InputError(path, "blob is missing from the image layout") from None
        except OSError as e:
            raise InputError(path, f"cannot open blob: {e.strerror or e} (a symbolic link is refused)") from None
        f = os.fdopen(fd, "rb")
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            f.close()
            raise InputError(path, "blob is not a regular file")
        self.files.append(f)
        return Range(f, 0, st.st_size)

    def blob(self, digest: str) -> str:
        if not _DIGEST.match(digest or ""):
            raise InputError(self.root, f"refusing malformed digest {digest!r}")
        alg, hexdigest = digest.split(":", 1)
        return f"blobs/{alg}/{hexdigest}"

    def close(self) -> None:
        for f in self.files:
            f.close()
        self.files.clear()


class TarStore:
    """A tarball of an image (docker save, or an OCI layout archived); members by name."""

    def __init__(self, path: str, limits: Limits, counter: Counter) -> None:
        self.path = path
        self.files: list[BinaryIO] = []
        f = open_regular(path)  # noqa: SIM115 - owned by the store, closed by close()
        self.files.append(f)
        size = os.fstat(f.fileno()).st_size
        head = os.pread(f.fileno(), 4, 0)
        whole = Range(f, 0, size)
        if head.startswith((GZIP_MAGIC, ZSTD_MAGIC)):
            whole = spool(whole, path, limits, counter, what="archive")
            self.files.append(whole.f)
        self.range = whole
        self.members: dict[str, tuple[str, int, int, str]] = {}  # name -> (type, offset, size, link)
        try:
            for m in iter_members(whole.headers(), path, max_members=limits.max_archive_members):
                name = _clean(m.name)
                if name:
                    self.members[name] = (m.type, m.offset, m.size, m.linkname)
        except LimitExceeded as e:
            raise LimitExceeded(path, f"{e.message} in the archive (limit max_archive_members "
                                      f"{limits.max_archive_members:,}: an image archive holds its blobs, "
                                      "manifests and configs)", offset=e.offset) from None

    def where(self, name: str) -> str:
        return f"{self.path}!{name}"

    def _resolve(self, name: str) -> tuple[str, int, int, str] | None:
        name = _clean(name)
        for _ in range(8):  # legacy docker save links duplicate layers: a/layer.tar -> ../b/layer.tar
            entry = self.members.get(name)
            if entry is None or entry[0] not in ("symlink", "hardlink"):
                return entry
            target = entry[3]
            name = _clean(target if entry[0] == "hardlink" or target.startswith("/")
                          else os.path.join(os.path.dirname(name), target))
        return None

    def has(self, name: str) -> bool:
        entry = self._resolve(name)
        return entry is not None and entry[0] == "file"

    def open(self, name: str) -> Range:
        entry = self._resolve(name)
        if entry is None or entry[0] != "file":
            raise InputError(self.path, f"member {name!r} is missing from the archive", member=name)
        return Range(self.range.f, self.range.base + entry[1], entry[2])

    def read_small(self, name: str, limit: int) -> bytes:
        r = self.open(name)
        if r.size > limit:
            raise LimitExceeded(self.path, f"{r.size:,} bytes (limit {limit:,} for metadata)", member=name)
        return r.pread(0, r.size)

    def blob(self, digest: str) -> str:
        if not _DIGEST.match(digest or ""):
            raise InputError(self.path, f"refusing malformed digest {digest!r}")
        alg, hexdigest = digest.split(":", 1)
        return f"blobs/{alg}/{hexdigest}"

    def close(self) -> None:
        for f in self.files:
            f.close()
        self.files.clear()


def _clean(name: str) -> str:
    parts: list[str] = []
    for p in name.split("/"):
        if p in ("", "."):
            continue
        if p == "..":
            if parts:
                parts.pop()
            continue
        parts.append(p)
    return "/".join(parts)


# -- layers --------------------------------------------------------------------------------

def compression_of(r: Range) -> str:
    head = r.pread(0, 4)
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    return "none"


def spool(r: Range, where: str, limits: Limits, counter: Counter, *, what: str = "layer",
          hasher: hashlib._Hash | None = None) -> Range:
    """Decompress a gzip / zstd range once into an anonymous temporary file, bounded."""
    out = tempfile.TemporaryFile(prefix="wheeldoc-layer-")  # noqa: SIM115 - returned inside the Range
    try:
        written = 0
        for consumed, data in _inflate(r, where):
            written += len(data)
            counter.bytes += len(data)
            if counter.bytes > limits.max_total_bytes:
                raise LimitExceeded(where, f"image inflates past {limits.max_total_bytes:,} bytes (max_total_bytes)")
            if written > limits.ratio_floor and written > limits.max_ratio * max(consumed, 1):
                raise LimitExceeded(where, f"{what} inflates {written // max(consumed, 1):,}x "
                                           f"({consumed:,} compressed bytes gave {written:,} so far; "
                                           f"max_ratio {limits.max_ratio}): a decompression bomb?")
            if hasher is not None:
                hasher.update(data)
            out.write(data)
        out.flush()
    except BaseException:
        out.close()
        raise
    return Range(out, 0, written)


def _inflate(r: Range, where: str) -> Iterator[tuple[int, bytes]]:
    """(compressed bytes consumed so far, decompressed chunk), output bounded per step."""
    kind = compression_of(r)
    if kind == "gzip":
        yield from _gunzip(r, where)
    elif kind == "zstd":
        yield from _unzstd(r, where)
    else:
        raise InputError(where, "not gzip or zstd data")


def _gunzip(r: Range, where: str) -> Iterator[tuple[int, bytes]]:
    d = zlib.decompressobj(wbits=31)
    started = False
    consumed = 0
    try:
        for chunk in r.chunks():
            consumed += len(chunk)
            data, more = chunk, True
            while data or more:
                started = started or bool(data)
                out = d.decompress(data, CHUNK)
                if out:
                    yield consumed, out
                more = len(out) == CHUNK  # zlib may hold more output for the same input
                if d.eof:  # the next of several concatenated gzip members, or the end
                    data, more = d.unused_data, False
                    d, started = zlib.decompressobj(wbits=31), False
                    if data and not data.startswith(GZIP_MAGIC[:len(data)]):
                        return  # trailing bytes after the last member are ignored, as gzip does
                else:
                    data = d.unconsumed_tail
    except zlib.error as e:
        raise InputError(where, f"corrupt gzip data: {e}", offset=consumed) from None
    if started and not d.eof:
        raise InputError(where, f"truncated gzip stream ({consumed:,} compressed bytes)", offset=consumed)


def check_zstd_frames(r: Range, where: str) -> None:
    """Walk the frame and block headers of a zstd stream (no decompression): the stream reader
    of python-zstandard ends quietly on a cut stream, so a truncated layer is caught here."""
    pos = 0
    while pos < r.size:
        head = r.pread(pos, 18)
        magic = int.from_bytes(head[:4], "little")
        if 0x184D2A50 <= magic <= 0x184D2A5F and len(head) >= 8:  # skippable frame
            pos += 8 + int.from_bytes(head[4:8], "little")
            continue
        if magic != 0xFD2FB528 or len(head) < 5:
            raise InputError(where, "corrupt zstd data: no frame header", offset=pos)
        fhd = head[4]
        fcs = (fhd >> 6) & 3
        single = (fhd >> 5) & 1
        pos += 5 + (0 if single else 1) + (0, 1, 2, 4)[fhd & 3] + ((1 if single else 0), 2, 4, 8)[fcs]
        while True:
            block = r.pread(pos, 3)
            if len(block) < 3:
                raise InputError(where, "truncated zstd stream (a frame has no last block)", offset=pos)
            b = int.from_bytes(block, "little")
            kind, size = (b >> 1) & 3, b >> 3
            if kind == 3:
                raise InputError(where, "corrupt zstd data: reserved block type", offset=pos)
            pos += 3 + (1 if kind == 1 else size)
            if pos > r.size:
                raise InputError(where, "truncated zstd stream (a block runs past the end)", offset=pos)
            if b & 1:
                break
        pos += 4 if fhd & 4 else 0
    if pos > r.size:
        raise InputError(where, "truncated zstd stream (checksum missing)", offset=r.size)


def _unzstd(r: Range, where: str) -> Iterator[tuple[int, bytes]]:
    from wheeldoc.core.optional import require

    zstandard = require("zstandard", "reading a zstd-compressed image layer", path=where, extra="image")

    check_zstd_frames(r, where)

    class _Reader:
        def __init__(self) -> None:
            self.pos = 0

        def read(self, n: int = -1) -> bytes:
            data = r.pread(self.pos, CHUNK if n < 0 else min(n, CHUNK))
            self.pos += len(data)
            return data

    src = _Reader()
    try:
        reader = zstandard.ZstdDecompressor(max_window_size=1 << 31).stream_reader(
            src, read_size=CHUNK, read_across_frames=True)
        while True:
            out = reader.read(CHUNK)
            if not out:
                break
            yield src.pos, out
    except zstandard.ZstdError as e:
        raise InputError(where, f"corrupt zstd data: {e}", offset=src.pos) from None


class LayerData:
    """One layer as uncompressed tar bytes with random access."""

    def __init__(self, r: Range, compression: str, compressed_size: int, digest: str | None,
                 diff_id: str | None) -> None:
        self.range = r
        self.compression = compression
        self.compressed_size = compressed_size
        self.digest = digest
        self.diff_id = diff_id

    @property
    def size(self) -> int:
        return self.range.size


def open_layer(r: Range, where: str, limits: Limits, counter: Counter, *, digest: str | None = None,
               diff_id: str | None = None, verify: bool = False) -> LayerData:
    kind = compression_of(r)
    if kind == "none":
        counter.bytes += r.size
        if counter.bytes > limits.max_total_bytes:
            raise LimitExceeded(where, f"image holds more than {limits.max_total_bytes:,} bytes (max_total_bytes)")
        if verify:
            _verify(r, digest, where, "blob")
            _verify(r, diff_id, where, "diff_id")
        return LayerData(r, kind, r.size, digest, diff_id)
    if verify:
        _verify(r, digest, where, "blob")
    hasher = hashlib.sha256() if verify and diff_id and diff_id.startswith("sha256:") else None
    data = spool(r, where, limits, counter, hasher=hasher)
    if hasher is not None and f"sha256:{hasher.hexdigest()}" != diff_id:
        data.f.close()
        raise InputError(where, f"uncompressed layer does not match its diff_id {diff_id}")
    return LayerData(data, kind, r.size, digest, diff_id)


def _verify(r: Range, digest: str | None, where: str, what: str) -> None:
    if not digest or ":" not in digest:
        return
    alg, expected = digest.split(":", 1)
    if alg not in ("sha256", "sha512"):
        return
    h = hashlib.new(alg)
    for chunk in r.chunks():
        h.update(chunk)
    if h.hexdigest() != expected:
        raise InputError(where, f"content does not match its {what} digest {digest}")
