"""One member view over a wheel, a directory, an installed distribution or a single file.

Nothing is ever extracted to a path taken from an archive. A wheel is mmapped; its central
directory is read with `zipfile`, each member on demand: a stored member is a view into the
archive, a deflated one is inflated (bounded by its declared size, CRC and RECORD sha256
checked while it streams) into an anonymous temporary file and mmapped; `stream()` hands the
inflated pieces to a reader that keeps only what it needs. Members that could
hurt a careless reader (path traversal, absolute names, symlinks, special files, duplicate
or overlapping entries, encryption, odd compression, zip-bomb ratios, sizes past the limits)
are listed in `rejected` with the reason and can never be opened.
"""

from __future__ import annotations

import base64
import binascii
import csv
import hashlib
import io
import mmap
import os
import re
import stat
import struct
import tempfile
import zipfile
import zlib
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.core.safeload import small_int
from wheeldoc.core.files import open_fd, open_regular


@dataclass(frozen=True)
class Limits:
    """Resource limits for reading archives (all sizes in bytes)."""

    max_member_size: int = 4 << 30  # the largest CUDA library wheels hold ~0.6 GB members
    max_ratio: int = 200  # inflated / compressed; real wheels stay under 60
    ratio_floor: int = 1 << 20  # members smaller than this are never judged by ratio
    max_members: int = 100_000  # zip members: torch's wheels hold ~12k, flashinfer-cubin's 16k
    max_files: int = 1_000_000  # files of a directory or an installed distribution
    max_text: int = 64 << 20  # METADATA, WHEEL, RECORD
    max_depth: int = 64  # directory walks


DEFAULT_LIMITS = Limits()
IN_MEMORY_MAX = 8 << 20  # inflate smaller members into memory, larger into a temporary file
# Pieces of 512 KiB stay in the CPU caches for the checks; larger ones cost page faults (each call's
# output is fresh memory: 4 MiB pieces fault ~25,000 times per 300 MB inflated). Measured on vLLM's
# 293 MB FA2 library with python-isal, CPU per inflation: 1 MiB 0.464 s, 768 KiB 0.43 s, 512 KiB
# 0.397 s, 256 KiB 0.395 s.
_IN_CHUNK, _OUT_CHUNK, _PENDING = 256 << 10, 512 << 10, 8
_DROP_EVERY = 16 << 20  # consumed compressed bytes given back to the kernel in steps of this


@dataclass(frozen=True)
class Member:
    """A file of the source, named by its path inside it (always `/`-separated)."""

    name: str
    size: int  # uncompressed bytes (as declared, for archive members)
    compressed_size: int  # bytes stored in the archive (== size outside archives)
    sha256: str | None  # hex digest from RECORD, when the source has one
    compression: str = "none"  # "stored", "deflated" (wheel members) or "none"
    link_target: str | None = None  # directories only: the member a symlink resolves to


@dataclass(frozen=True)
class RejectedMember:
    """A member that is listed but will never be read, and why."""

    name: str
    reason: str


@dataclass(frozen=True)
class DistMetadata:
    """The core metadata of a distribution (`*.dist-info/METADATA`)."""

    name: str
    version: str
    requires_dist: tuple[str, ...]
    requires_python: str | None


@dataclass(frozen=True)
class WheelInfo:
    """The wheel's identity: from its file name and its `*.dist-info/WHEEL` file."""

    name: str  # normalized (canonical) project name
    version: str
    build: str | None
    tags: tuple[str, ...]  # from the file name, e.g. "cp311-cp311-manylinux_2_28_x86_64"
    wheel_tags: tuple[str, ...]  # the `Tag:` lines of WHEEL
    wheel_version: str | None
    generator: str | None
    root_is_purelib: bool | None


class MemberData:
    """The bytes of one member, open until `close()` (or the end of a `with` block).

    `buf` supports the buffer protocol (bytes, memoryview or mmap). `sha256` is the digest
    when it was computed while reading (inflated members); `verified_sha256()` computes it
    otherwise. Either way a RECORD hash that disagrees raises `InputError`.
    """

    def __init__(self, source: str, name: str, buf: Any, *, sha256: str | None = None,
                 expected_sha256: str | None = None, close: Callable[[], None] | None = None,
                 fileno: int | None = None) -> None:
        self.source, self.name, self.buf = source, name, buf
        # the temporary file behind `buf` when the member was inflated to disk: readers that
        # want a few headers of a large member pread it instead of faulting the mmap in
        self.fileno = fileno
        self.sha256 = sha256
        self.expected_sha256 = expected_sha256
        self._close = close

    def __len__(self) -> int:
        return len(self.buf)

    def __enter__(self) -> MemberData:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def verified_sha256(self) -> str:
        if self.sha256 is None:
            self.sha256 = hashlib.sha256(self.buf).hexdigest()
            _check_record(self.source, self.name, self.sha256, self.expected_sha256)
        return self.sha256

    def close(self) -> None:
        buf, self.buf = self.buf, b""
        if isinstance(buf, memoryview):
            try:
                buf.release()
            except BufferError:  # a caller still holds a slice; the GC will release it
                pass
        if self._close is not None:
            self._close()
            self._close = None


class MemberSource:
    """Files with names: the common view of wheels, directories and installed distributions."""

    path: str
    members: tuple[Member, ...]
    rejected: tuple[RejectedMember, ...]
    dist_info: str | None  # the `*.dist-info` directory (member prefix), when there is one

    def __init__(self) -> None:
        self._index: dict[str, Member] | None = None

    def member(self, name: str) -> Member | None:
        if self._index is None:
            self._index = {m.name: m for m in self.members}
        return self._index.get(name)

    def __iter__(self) -> Iterator[Member]:
        return iter(self.members)

    def shared_objects(self) -> tuple[Member, ...]:
        """Members named like shared libraries (`*.so`, `*.so.13`, `*.so.1.2`), by name only."""
        return tuple(m for m in self.members if _SONAME.search(m.name.rsplit("/", 1)[-1]))

    def open(self, name: str) -> MemberData:
        raise NotImplementedError

    def read_bytes(self, name: str, limit: int | None = None) -> bytes:
        m = self._require(name)
        limit = DEFAULT_LIMITS.max_text if limit is None else limit
        if m.size > limit:
            raise LimitExceeded(self.path, f"{m.size} bytes, more than the {limit} allowed here", member=name)
        with self.open(name) as data:
            return bytes(data.buf)

    def metadata(self) -> DistMetadata | None:
        if self.dist_info is None or self.member(f"{self.dist_info}/METADATA") is None:
            return None
        from wheeldoc.binary.wheelmeta import get, get_all, parse_headers

        headers = parse_headers(self._text(f"{self.dist_info}/METADATA"))
        name, version = get(headers, "Name"), get(headers, "Version")
        if not name or not version:
            raise InputError(self.path, "METADATA lacks Name or Version", member=f"{self.dist_info}/METADATA")
        return DistMetadata(name.strip(), version.strip(), tuple(r.strip() for r in get_all(headers, "Requires-Dist")),
                            _opt(get(headers, "Requires-Python")))

    def close(self) -> None:
        pass

    def __enter__(self) -> MemberSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers for the subclasses --------------------------------------------
    def _require(self, name: str) -> Member:
        m = self.member(name)
        if m is None:
            why = next((r.reason for r in self.rejected if r.name == name), None)
            raise InputError(self.path, f"member refused: {why}" if why else "no such member", member=name)
        return m

    def _text(self, name: str) -> str:
        return self.read_bytes(name).decode("utf-8", "replace")

    def _record(self, limits: Limits) -> dict[str, tuple[str | None, int | None]]:
        """RECORD rows: member name -> (sha256 hex or None, size or None)."""
        if self.dist_info is None or self.member(f"{self.dist_info}/RECORD") is None:
            return {}
        return parse_record(self.read_bytes(f"{self.dist_info}/RECORD", limits.max_text), self.path)


def raw_inflater() -> tuple[Any, tuple[type[Exception], ...]]:
    """A raw-deflate decompressor and the errors it raises: python-isal's when it is installed
    (`wheeldoc[fast]`: the same stream about 3x faster, which is most of a cold `abi` on a big
    wheel), else zlib's."""
    try:
        from isal import isal_zlib
    except ImportError:
        return zlib.decompressobj(-15), (zlib.error,)
    return isal_zlib.decompressobj(-15), (zlib.error, isal_zlib.error)


# -- wheels (zip archives) -------------------------------------------------------
class WheelArchive(MemberSource):
    """A wheel (or any zip archive) read in place."""

    def __init__(self, path: str | os.PathLike[str], limits: Limits = DEFAULT_LIMITS) -> None:
        super().__init__()
        self.path = os.fspath(path)
        self.limits = limits
        try:
            self._file = open_regular(self.path)
        except OSError as e:
            raise InputError(self.path, f"cannot read: {e.strerror or e}") from None
        try:
            size = os.fstat(self._file.fileno()).st_size
            if size == 0:
                raise InputError(self.path, "empty file: not a zip archive", offset=0)
            self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)
            self._all_infos = self._central_directory()
            self._infos: dict[str, zipfile.ZipInfo] = {}
            self._stored: dict[str, str] = {}
            self.members, self.rejected = self._classify()
            self.dist_info = _find_dist_info(self.members, Path(self.path).name)
            self._apply_record()
        except BaseException:
            self.close()
            raise

    def _central_directory(self) -> list[zipfile.ZipInfo]:
        declared = _declared_entries(self._map)  # refused from the end record, before parsing
        if declared is not None and declared > self.limits.max_members:
            raise LimitExceeded(self.path, f"{declared:,} members declared (limit {self.limits.max_members:,})")
        try:  # zipfile reads only the end records and the central directory
            with zipfile.ZipFile(self._file) as zf:
                infos = zf.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, struct.error, EOFError,
                OSError, NotImplementedError, UnicodeDecodeError, IndexError) as e:
            raise InputError(self.path, f"not a readable zip archive: {e}") from None
        if len(infos) > self.limits.max_members:
            raise LimitExceeded(self.path, f"{len(infos):,} members (limit {self.limits.max_members:,})")
        return infos

    def _classify(self) -> tuple[tuple[Member, ...], tuple[RejectedMember, ...]]:
        limits, size = self.limits, len(self._map)
        counts: dict[str, int] = {}
        for info in self._all_infos:
            counts[info.filename] = counts.get(info.filename, 0) + 1
        rejected: dict[int, str] = {}
        for n, info in enumerate(self._all_infos):
            why = _unsafe_name(info.filename) or _unsafe_entry(info, limits)
            if why is None and counts[info.filename] > 1:
                why = f"duplicate name ({counts[info.filename]} entries)"
            if why is None and info.header_offset + 30 + len(info.orig_filename) + info.compress_size > size:
                why = "data lies past the end of the archive"
            if why:
                rejected[n] = why
        # Overlapping entries (one byte range claimed by two members: the "better zip bomb").
        spans = sorted((info.header_offset, n) for n, info in enumerate(self._all_infos)
                       if not info.filename.endswith("/"))
        for (start, a), (next_start, b) in zip(spans, spans[1:]):
            ia = self._all_infos[a]
            if next_start < start + 30 + len(ia.orig_filename) + ia.compress_size:
                other = self._all_infos[b].filename
                rejected.setdefault(a, f"overlaps member {other!r} in the archive")
                rejected.setdefault(b, f"overlaps member {ia.filename!r} in the archive")
        members, refused = [], []
        for n, info in enumerate(self._all_infos):
            if n in rejected:
                refused.append(RejectedMember(info.filename, rejected[n]))
            elif not info.filename.endswith("/"):
                self._infos[info.filename] = info
                kind = "stored" if info.compress_type == zipfile.ZIP_STORED else "deflated"
                members.append(Member(info.filename, info.file_size, info.compress_size, None, kind))
        return tuple(members), tuple(refused)

    def _apply_record(self) -> None:
        record = self._record(self.limits)
        if record:
            self.members = tuple(
                Member(m.name, m.size, m.compressed_size, record.get(m.name, (None, None))[0], m.compression)
                for m in self.members)
            self._index = None

    def wheel_info(self) -> WheelInfo:
        """Name, version, build and tags from the file name, plus what WHEEL declares."""
        from packaging.utils import InvalidWheelFilename, parse_wheel_filename

        try:
            name, version, build, tags = parse_wheel_filename(Path(self.path).name)
        except (InvalidWheelFilename, ValueError) as e:
            raise InputError(self.path, f"not a valid wheel file name: {e}") from None
        fields: dict[str, list[str]] = {}
        if self.dist_info and self.member(f"{self.dist_info}/WHEEL"):
            from wheeldoc.binary.wheelmeta import parse_headers

            for key, value in parse_headers(self._text(f"{self.dist_info}/WHEEL")):
                fields.setdefault(key.lower(), []).append(str(value).strip())

        def first(key: str) -> str | None:
            return fields.get(key, [None])[0]

        purelib = first("root-is-purelib")
        return WheelInfo(
            str(name), str(version), "".join(map(str, build)) if build else None,
            tuple(sorted(str(t) for t in tags)), tuple(fields.get("tag", ())),
            first("wheel-version"), first("generator"),
            None if purelib is None else purelib.lower() == "true",
        )

    def open(self, name: str) -> MemberData:
        member = self._require(name)
        info = self._infos[name]
        start = self._data_start(info)
        raw = memoryview(self._map)[start: start + info.compress_size]
        if info.compress_type == zipfile.ZIP_STORED:
            return MemberData(self.path, name, raw, expected_sha256=member.sha256)
        try:
            return self._inflate(info, raw, member.sha256)
        finally:
            raw.release()

    def _data_start(self, info: zipfile.ZipInfo) -> int:
        at = info.header_offset
        if at + 30 > len(self._map) or self._map[at: at + 4] != b"PK\x03\x04":
            raise InputError(self.path, "no local file header where the central directory points",
                             offset=at, member=info.filename)
        name_len, extra_len = struct.unpack_from("<HH", self._map, at + 26)
        encoding = "utf-8" if info.flag_bits & 0x800 else "cp437"
        if self._map[at + 30: at + 30 + name_len] != info.orig_filename.encode(encoding, "replace"):
            raise InputError(self.path, "local header names another file than the central directory",
                             offset=at, member=info.filename)
        start = at + 30 + name_len + extra_len
        if start + info.compress_size > len(self._map):
            raise InputError(self.path, "member data lies past the end of the archive",
                             offset=start, member=info.filename)
        return start

    def _inflate(self, info: zipfile.ZipInfo, raw: memoryview, expected: str | None) -> MemberData:
        try:
            sink = _Sink(info.file_size > IN_MEMORY_MAX, keep=True, crc=expected is None)
        except OSError as e:
            raise InputError(self.path, f"cannot create a temporary file: {e.strerror or e}",
                             member=info.filename) from None
        try:
            for piece in self._pieces(info, raw):
                sink.write(piece)
            buf, crc, digest = sink.finish()
            self._verify(info, crc, digest, expected)
        except OSError as e:  # e.g. no space left for the temporary file
            sink.abort()
            raise InputError(self.path, f"cannot hold the inflated member ({info.file_size} bytes): "
                             f"{e.strerror or e}", member=info.filename) from None
        except BaseException:
            sink.abort()
            raise
        return MemberData(self.path, info.filename, buf, sha256=digest, expected_sha256=expected,
                          close=sink.abort,
                          fileno=sink.file.fileno() if sink.file is not None and buf else None)

    def _pieces(self, info: zipfile.ZipInfo, raw: memoryview) -> Iterator[bytes]:
        """The inflated bytes in order, never more than the declared size."""
        name, size = info.filename, info.file_size
        d, errors = raw_inflater()
        produced, pos = 0, 0
        base, dropped = self._data_start(info), 0  # archive offset of raw; bytes given back
        try:
            while not d.eof:
                if d.unconsumed_tail:
                    chunk = d.unconsumed_tail
                elif pos < len(raw):
                    chunk = raw[pos: pos + _IN_CHUNK]
                    pos += len(chunk)
                    if pos - dropped >= _DROP_EVERY + _IN_CHUNK:
                        self._drop(base + dropped, base + pos - _IN_CHUNK)
                        dropped = pos - _IN_CHUNK
                else:
                    chunk = b""  # every input byte given: drain what the inflater still holds
                out = d.decompress(chunk, _OUT_CHUNK)
                if not chunk and not out and not d.eof:
                    raise InputError(self.path, "deflate stream ends before its end marker (truncated)",
                                     member=name)
                produced += len(out)
                if produced > size:
                    raise LimitExceeded(self.path, f"inflates beyond its declared size of {size} bytes",
                                        member=name)
                if out:
                    yield out
        except errors as e:
            raise InputError(self.path, f"corrupt deflate data: {e}", member=name) from None
        if produced != size:
            raise InputError(self.path, f"inflates to {produced} bytes, {size} declared", member=name)

    def _drop(self, lo: int, hi: int) -> None:
        """Give back the archive pages in [lo, hi) that a large member's inflation has
        consumed (read-only file pages: the kernel reads them again if touched), so memory
        stays flat however large the member."""
        lo = (lo + mmap.PAGESIZE - 1) & ~(mmap.PAGESIZE - 1)
        hi &= ~(mmap.PAGESIZE - 1)
        if hi > lo:
            try:
                self._map.madvise(mmap.MADV_DONTNEED, lo, hi - lo)
            except (AttributeError, OSError, ValueError):
                pass

    def _verify(self, info: zipfile.ZipInfo, crc: int, digest: str, expected: str | None) -> None:
        """The RECORD sha256 when RECORD has one (it implies the CRC: the CRC-32 is then not
        computed), else the archive's CRC-32."""
        if expected is None and crc != info.CRC:
            raise InputError(self.path, f"CRC-32 {crc:08x} does not match the archive's {info.CRC:08x}",
                             member=info.filename)
        _check_record(self.path, info.filename, digest, expected)

    def stream(self, name: str, *, check: bool = True) -> MemberStream:
        """The member's bytes as they inflate, for readers that keep only what they need.

        Iterating yields `(offset, bytes)` pieces in order. CRC, size and RECORD sha256 are
        checked when the last piece has been produced (`finish()` runs that check for a reader
        that stopped right at the end); a reader that stops early gets no digest. With
        `check=False` nothing is hashed: for a reader that keys what it learns on
        `stored_sha256` and may stop early.
        """
        member = self._require(name)
        info = self._infos[name]
        start = self._data_start(info)
        raw = memoryview(self._map)[start: start + info.compress_size]
        if info.compress_type == zipfile.ZIP_STORED:
            pieces: Iterator[bytes] = (raw[i: i + _OUT_CHUNK] for i in range(0, len(raw), _OUT_CHUNK))
        else:
            pieces = self._pieces(info, raw)
        return MemberStream(self, info, pieces, raw, member.sha256, check=check)

    def stored_sha256(self, name: str) -> str:
        """sha256 of the member's bytes as the archive stores them (deflated): a content key for
        what is learnt from its inflated bytes (the stored bytes decide them), hashed without
        inflating, about half the bytes of the member."""
        self._require(name)
        known = self._stored.get(name)
        if known is not None:
            return known
        info = self._infos[name]
        start = self._data_start(info)
        h = hashlib.sha256()
        # Hashed in place through the map, a slice at a time, each slice's pages given back after it
        # (nothing copied: reading through the file cost a third more CPU, the copy into a buffer).
        at, end = start, start + info.compress_size
        with memoryview(self._map) as view:
            while at < end:
                stop = min(end, at + _DROP_EVERY)
                h.update(view[at:stop])
                self._drop(at, stop)
                at = stop
        self._stored[name] = h.hexdigest()  # the archive is mapped read-only: asked again, the same
        return self._stored[name]

    def close(self) -> None:
        m = getattr(self, "_map", None)
        if m is not None:
            try:
                m.close()
            except BufferError:  # a member view is still held; the GC closes the map later
                pass
        f = getattr(self, "_file", None)
        if f is not None:
            f.close()


class MemberStream:
    """A member read once, front to back (see `WheelArchive.stream`)."""

    def __init__(self, archive: WheelArchive, info: zipfile.ZipInfo, pieces: Iterator[bytes],
                 raw: memoryview, expected: str | None, *, check: bool = True) -> None:
        self.name, self.size = info.filename, info.file_size
        self.sha256: str | None = None  # set once the whole member went by and matched RECORD
        self.consumed = 0
        self._archive, self._info, self._pieces, self._raw = archive, info, pieces, raw
        self._expected = expected
        self._sink = _Sink(info.file_size > IN_MEMORY_MAX, keep=False, crc=expected is None) if check else None

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        for piece in self._pieces:
            if self._sink is not None:
                self._sink.write(piece)
            at = self.consumed
            self.consumed += len(piece)
            yield at, piece
        if self._sink is not None:
            self.finish()

    def finish(self) -> str:
        """Drain what is left, check CRC, size and RECORD sha256, and return the digest."""
        if self._sink is None:
            raise ValueError("a stream opened with check=False has no digest")
        if self.sha256 is None:
            for piece in self._pieces:
                self._sink.write(piece)
                self.consumed += len(piece)
            _, crc, digest = self._sink.finish()
            self._archive._verify(self._info, crc, digest, self._expected)
            self.sha256 = digest
        return self.sha256

    def close(self) -> None:
        if self._sink is not None:
            self._sink.abort()
        close = getattr(self._pieces, "close", None)
        if close is not None:
            close()
        try:
            self._raw.release()
        except BufferError:
            pass

    def __enter__(self) -> MemberStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Sink:
    """Where inflated bytes go (memory, an anonymous temporary file, or nowhere), with CRC-32
    and sha256 computed on a worker thread for large members (zlib, hashlib and file writes
    release the GIL, so the checks cost little wall time)."""

    def __init__(self, to_file: bool, keep: bool = True, crc: bool = True) -> None:
        self.crc, self.hash = 0, hashlib.sha256()
        self.keep, self.check_crc = keep, crc
        self.file = tempfile.TemporaryFile(prefix="wheeldoc-") if to_file and keep else None
        self.parts: list[bytes] = []
        self.pool: Any = None
        self.pending: deque[Any] = deque()
        self.map: mmap.mmap | None = None
        if to_file:  # large: check (and write) on a worker thread
            from concurrent.futures import ThreadPoolExecutor

            self.pool = ThreadPoolExecutor(1, thread_name_prefix="wheeldoc-inflate")

    def _consume(self, data: bytes) -> None:
        if self.check_crc:
            self.crc = zlib.crc32(data, self.crc)
        self.hash.update(data)
        if self.file is not None:
            self.file.write(data)
        elif self.keep:
            self.parts.append(data)

    def write(self, data: bytes) -> None:
        if self.pool is None:
            self._consume(data)
            return
        self.pending.append(self.pool.submit(self._consume, data))
        while len(self.pending) > _PENDING:
            self.pending.popleft().result()

    def finish(self) -> tuple[Any, int, str]:
        while self.pending:
            self.pending.popleft().result()
        if self.pool is not None:
            self.pool.shutdown()
            self.pool = None
        digest = self.hash.hexdigest()
        if self.file is None:
            return b"".join(self.parts), self.crc, digest
        self.file.flush()
        if self.file.tell() == 0:
            return b"", self.crc, digest
        self.map = mmap.mmap(self.file.fileno(), 0, access=mmap.ACCESS_READ)
        return self.map, self.crc, digest

    def abort(self) -> None:
        if self.pool is not None:
            for f in self.pending:
                f.cancel()
            self.pool.shutdown(wait=True)
            self.pool = None
        if self.map is not None:
            try:
                self.map.close()
            except BufferError:
                pass
            self.map = None
        if self.file is not None:
            self.file.close()
            self.file = None
        self.parts = []


# -- directories, installed distributions, single files --------------------------
class DirectoryTree(MemberSource):
    """Every regular file under a directory. Symlinks are listed with the member they resolve
    to when that stays inside the tree, and refused when it does not."""

    def __init__(self, path: str | os.PathLike[str], limits: Limits = DEFAULT_LIMITS) -> None:
        super().__init__()
        self.path = os.fspath(path)
        self.root = os.path.realpath(self.path)
        if not os.path.isdir(self.root):
            raise InputError(self.path, "not a directory")
        self.limits = limits
        members: list[Member] = []
        rejected: list[RejectedMember] = []
        self._walk("", 0, members, rejected)
        self.members, self.rejected = tuple(members), tuple(rejected)
        self.dist_info = _find_dist_info(self.members, None)
        record = self._record(limits)
        if record:
            self.members = tuple(Member(m.name, m.size, m.size, record.get(m.name, (None, None))[0],
                                        link_target=m.link_target) for m in self.members)
            self._index = None

    def _walk(self, rel: str, depth: int, members: list[Member], rejected: list[RejectedMember]) -> None:
        if depth > self.limits.max_depth:
            rejected.append(RejectedMember(rel, f"deeper than {self.limits.max_depth} directories"))
            return
        try:
            entries = sorted(os.scandir(os.path.join(self.root, rel)), key=lambda e: e.name)
        except OSError as e:
            rejected.append(RejectedMember(rel or ".", f"cannot list: {e.strerror or e}"))
            return
        for entry in entries:
            name = f"{rel}/{entry.name}" if rel else entry.name
            if len(members) + len(rejected) >= self.limits.max_files:
                raise LimitExceeded(self.path, f"more than {self.limits.max_files} files")
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as e:
                rejected.append(RejectedMember(name, f"cannot stat: {e.strerror or e}"))
                continue
            if stat.S_ISDIR(st.st_mode):
                self._walk(name, depth + 1, members, rejected)
            elif stat.S_ISREG(st.st_mode):
                members.append(Member(name, st.st_size, st.st_size, None))
            elif stat.S_ISLNK(st.st_mode):
                try:
                    target = _inside(self.root, os.path.join(self.root, name))
                except OSError as e:  # a link realpath cannot read (/proc/1/cwd: permission denied)
                    rejected.append(RejectedMember(name, f"cannot resolve the symlink: {e.strerror or e}"))
                    continue
                try:
                    tst = os.stat(os.path.join(self.root, target)) if target is not None else None
                except OSError:
                    tst = None
                if target is None:
                    rejected.append(RejectedMember(name, "symlink leading outside the tree"))
                elif tst is None or not stat.S_ISREG(tst.st_mode):
                    rejected.append(RejectedMember(name, "symlink to a directory or a missing file"))
                else:
                    members.append(Member(name, tst.st_size, tst.st_size, None,
                                          link_target=target.replace(os.sep, "/")))
            else:
                rejected.append(RejectedMember(name, "not a regular file"))

    def open(self, name: str) -> MemberData:
        m = self._require(name)
        return _open_file(self.path, name, os.path.join(self.root, m.link_target or name), m.sha256)


class InstalledDistribution(MemberSource):
    """An installed distribution: the files its `*.dist-info/RECORD` lists, under site-packages."""

    def __init__(self, dist_info: str | os.PathLike[str], limits: Limits = DEFAULT_LIMITS) -> None:
        super().__init__()
        dist_info = os.fspath(dist_info)
        self.path = dist_info
        self.root = os.path.realpath(os.path.dirname(os.path.abspath(dist_info)))
        self.dist_info = os.path.basename(os.path.normpath(dist_info))
        self.limits = limits
        record_path = os.path.join(self.root, self.dist_info, "RECORD")
        if not os.path.isfile(record_path):
            raise InputError(self.path, "installed distribution has no RECORD")
        with _open_file(self.path, f"{self.dist_info}/RECORD", record_path, None) as data:
            if len(data) > limits.max_text:
                raise LimitExceeded(self.path, "RECORD larger than the limit", member="RECORD")
            rows = parse_record(bytes(data.buf), self.path)
        members, rejected = [], []
        for name, (digest, _size) in rows.items():
            try:
                target = _inside(self.root, os.path.join(self.root, name))
            except OSError as e:
                rejected.append(RejectedMember(name, f"cannot resolve: {e.strerror or e}"))
                continue
            if target is None:
                rejected.append(RejectedMember(name, "outside site-packages (or a symlink leading there)"))
                continue
            try:
                st = os.stat(os.path.join(self.root, target))
            except OSError:
                rejected.append(RejectedMember(name, "listed in RECORD but missing"))
                continue
            if not stat.S_ISREG(st.st_mode):
                rejected.append(RejectedMember(name, "not a regular file"))
                continue
            link = target if target != os.path.normpath(name) else None
            members.append(Member(os.path.normpath(name).replace(os.sep, "/"), st.st_size, st.st_size,
                                  digest, link_target=link))
            if len(members) > limits.max_files:
                raise LimitExceeded(self.path, f"more than {limits.max_files} files")
        self.members, self.rejected = tuple(members), tuple(rejected)

    def open(self, name: str) -> MemberData:
        m = self._require(name)
        return _open_file(self.path, name, os.path.join(self.root, m.link_target or name), m.sha256)


class SingleFile(MemberSource):
    """One file (a lone `.so`) as a source with a single member named after it."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__()
        self.path = os.fspath(path)
        try:
            st = os.stat(self.path)
        except OSError as e:
            raise InputError(self.path, f"cannot read: {e.strerror or e}") from None
        if not stat.S_ISREG(st.st_mode):
            raise InputError(self.path, "not a regular file")
        self.members = (Member(os.path.basename(self.path), st.st_size, st.st_size, None),)
        self.rejected = ()
        self.dist_info = None

    def open(self, name: str) -> MemberData:
        self._require(name)
        return _open_file(self.path, name, self.path, None)


def open_source(path: str | os.PathLike[str], limits: Limits = DEFAULT_LIMITS) -> MemberSource:
    """A wheel (`.whl`/`.zip`), an installed `*.dist-info`, a directory, or one file."""
    p = os.fspath(path)
    if os.path.isdir(p):
        if p.rstrip("/").endswith(".dist-info"):
            return InstalledDistribution(p, limits)
        return DirectoryTree(p, limits)
    if p.endswith((".whl", ".zip")):
        return WheelArchive(p, limits)
    return SingleFile(p)


def find_distributions(site_packages: str | os.PathLike[str],
                       limits: Limits = DEFAULT_LIMITS) -> tuple[InstalledDistribution, ...]:
    """Every distribution installed in a site-packages directory (those with a RECORD)."""
    root = os.fspath(site_packages)
    try:
        names = sorted(e.name for e in os.scandir(root) if e.name.endswith(".dist-info") and e.is_dir())
    except OSError as e:
        raise InputError(root, f"cannot list: {e.strerror or e}") from None
    return tuple(InstalledDistribution(os.path.join(root, n), limits) for n in names
                 if os.path.isfile(os.path.join(root, n, "RECORD")))


def find_distribution(site_packages: str | os.PathLike[str], project: str,
                      limits: Limits = DEFAULT_LIMITS) -> InstalledDistribution | None:
    """The installed distribution of `project` (name compared in canonical form)."""
    from packaging.utils import canonicalize_name

    want = canonicalize_name(project)
    root = os.fspath(site_packages)
    try:
        names = sorted(e.name for e in os.scandir(root) if e.name.endswith(".dist-info"))
    except OSError as e:
        raise InputError(root, f"cannot list: {e.strerror or e}") from None
    for n in names:
        if canonicalize_name(n[: -len(".dist-info")].rsplit("-", 1)[0]) == want:
            return InstalledDistribution(os.path.join(root, n), limits)
    return None


# -- RECORD ----------------------------------------------------------------------
def parse_record(raw: bytes, path: str) -> dict[str, tuple[str | None, int | None]]:
    """RECORD rows as member name -> (sha256 hex digest or None, size or None)."""
    out: dict[str, tuple[str | None, int | None]] = {}
    text = raw.decode("utf-8", "replace")
    try:
        for row in csv.reader(io.StringIO(text, newline="")):
            if not row or not row[0]:
                continue
            digest = _record_sha256(row[1]) if len(row) > 1 else None
            size = small_int(row[2]) if len(row) > 2 else None
            out[row[0]] = (digest, size)
    except csv.Error as e:
        raise InputError(path, f"unreadable RECORD: {e}", member="RECORD") from None
    return out


def record_digest(sha256_hex: str) -> str:
    """The RECORD spelling (`sha256=` + urlsafe base64, unpadded) of a hex digest."""
    return "sha256=" + base64.urlsafe_b64encode(bytes.fromhex(sha256_hex)).rstrip(b"=").decode()


_URLSAFE_43 = re.compile(r"[A-Za-z0-9_-]{43}")


def _record_sha256(field: str) -> str | None:
    # The alphabet is checked here, not by `a2b_base64(strict_mode=True)`: that keyword is 3.11+.
    algo, _, value = field.partition("=")
    if algo != "sha256" or not _URLSAFE_43.fullmatch(value):
        return None
    try:
        digest = base64.urlsafe_b64decode(value + "=")
    except (binascii.Error, ValueError):
        return None
    return digest.hex() if len(digest) == 32 else None


def _declared_entries(buf) -> int | None:
    """The member count the end of central directory record declares (its zip64 form when the
    classic field is saturated); None when the record cannot be found."""
    n = len(buf)
    tail = bytes(buf[max(0, n - (1 << 16) - 22):])
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + 22 > len(tail):
        return None
    total = struct.unpack_from("<H", tail, at + 10)[0]
    if total != 0xFFFF:
        return total
    loc = at - 20  # the zip64 end of central directory locator sits just before
    if loc < 0 or tail[loc:loc + 4] != b"PK\x06\x07":
        return None
    rec = struct.unpack_from("<Q", tail, loc + 8)[0]
    if rec + 56 > n or bytes(buf[rec:rec + 4]) != b"PK\x06\x06":
        return None
    return struct.unpack_from("<Q", bytes(buf[rec + 32:rec + 40]))[0]


def _check_record(path: str, name: str, digest: str, expected: str | None) -> None:
    if expected is not None and digest != expected:
        raise InputError(path, f"content sha256 {digest[:16]}... does not match RECORD's "
                               f"{expected[:16]}...", member=name)


# -- helpers ---------------------------------------------------------------------
_DRIVE = re.compile(r"^[A-Za-z]:")
_SONAME = re.compile(r"\.so(\.\d+)*$")


def _unsafe_name(name: str) -> str | None:
    if name and name[0] not in "/\\" and ".." not in name and ":" not in name[:2] and "\0" not in name:
        return None  # the common case, decided without a regex
    if not name or "\0" in name:
        return "empty or NUL-containing name"
    if name.startswith(("/", "\\")) or _DRIVE.match(name):
        return "absolute path"
    if ".." in re.split(r"[/\\]", name):
        return "path traversal ('..')"
    return None


def _unsafe_entry(info: zipfile.ZipInfo, limits: Limits) -> str | None:
    mode = info.external_attr >> 16
    kind = stat.S_IFMT(mode)
    if kind == stat.S_IFLNK:
        return "symlink entry"
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        return "special file entry (device, FIFO or socket)"
    if info.flag_bits & 0x1:
        return "encrypted"
    if info.filename.endswith("/"):
        return None
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return f"unsupported compression method {info.compress_type}"
    if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
        return "stored member whose sizes disagree"
    if info.file_size > limits.max_member_size:
        return f"declares {info.file_size} bytes (limit {limits.max_member_size})"
    if info.file_size > limits.ratio_floor and info.file_size > limits.max_ratio * max(info.compress_size, 1):
        ratio = info.file_size / max(info.compress_size, 1)
        return f"compression ratio {ratio:.0f}:1 (limit {limits.max_ratio}:1): zip bomb"
    return None


def _find_dist_info(members: tuple[Member, ...], filename: str | None) -> str | None:
    dirs = sorted({m.name.split("/", 1)[0] for m in members
                   if m.name.count("/") == 1 and m.name.split("/", 1)[0].endswith(".dist-info")})
    if len(dirs) <= 1 or filename is None:
        return dirs[0] if dirs else None
    from packaging.utils import canonicalize_name

    want = canonicalize_name(filename.split("-", 1)[0])
    return next((d for d in dirs if canonicalize_name(d.split("-", 1)[0]) == want), dirs[0])


def _inside(root: str, path: str) -> str | None:
    """`path` (symlinks resolved) relative to `root`, or None when it leaves `root`."""
    real = os.path.realpath(path)
    if real != root and not real.startswith(root + os.sep):
        return None
    return os.path.relpath(real, root)


def _open_file(source: str, name: str, path: str, expected: str | None) -> MemberData:
    try:
        fd = open_fd(path, getattr(os, "O_NOFOLLOW", 0))  # a FIFO is refused, never opened blocking
    except OSError as e:
        raise InputError(source, f"cannot open: {e.strerror or e}", member=name) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(source, "not a regular file", member=name)
        if st.st_size == 0:
            return MemberData(source, name, b"", expected_sha256=expected)
        m = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)

    def close() -> None:
        try:
            m.close()
        except BufferError:
            pass

    return MemberData(source, name, m, expected_sha256=expected, close=close)


def _opt(value: Any) -> str | None:
    return None if value is None else str(value).strip()
