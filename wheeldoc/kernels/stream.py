"""The fatbin headers of a large wheel member, read while it inflates.

A `.so` member of a GPU wheel is hundreds of MB, nearly all of it entry payloads; the
headers `kernels` reads are a few hundred KB. `read_member` watches the inflated stream once,
front to back (`WheelArchive.stream`: CRC-32 and RECORD sha256 checked on the way, on a worker
thread), and keeps only:

- the ELF header, and the section header table with the 64 KiB before it (where linkers put
  the section name table): e_shoff is in the ELF header, so the range is known before it passes;
- for each fatbin container met, the bytes `fatbin._walk` reads of it, walked ahead on the
  stream: its header (a magic at an 8-aligned offset), each entry header, then the next
  container or the zero padding before it; the payloads go by;
- the 8-aligned offsets of the container magic everywhere but in the payloads of whole
  containers (what `embedded.scan` searches the data sections for).

Then the readers a file gets run on those bytes unchanged (`fatbin.read_host_elf`,
`embedded.scan`). A read of a byte that was not kept raises `Missing`, and the caller reads the
member the other way (inflated whole into a temporary file): the result is the one the whole
member gives, or none. Memory is bounded (MAX_KEPT bytes, MAX_HITS offsets): past that, `Missing`.
"""

from __future__ import annotations

import struct
from bisect import bisect_left, bisect_right
from typing import Callable, NamedTuple

from wheeldoc.kernels.fatbin import (ENTRY, FATBIN_MAGIC, HEAD_READ, MAX_ENTRY_HEADER, Fatbin,
                                     read_host_elf, zero_pieces)

MAGIC = struct.pack("<I", FATBIN_MAGIC)
CONTAINER_READ = 16 + HEAD_READ  # what fatbin._walk reads where a container may start
SECTION_TABLE_LEAD = 64 << 10  # bytes kept before the section table (the name table lies there)
MAX_KEPT = 64 << 20  # bytes of headers kept per member (cuBLASLt's 5,737 entries: under 1 MB)
MAX_HITS = 1 << 20  # magic offsets kept per member
_ELF64_LE = b"\x7fELF\x02\x01"
EM_CUDA = 190


class Missing(Exception):
    """A reader touched bytes the stream did not keep (or the stream kept too much)."""


class Kept:
    """The bytes of a member that the stream kept, at their offsets: slicing (or indexing) a
    kept range gives bytes, anything else raises `Missing`. `len()` is the member's size."""

    def __init__(self, size: int, pieces: list[tuple[int, bytes]]) -> None:
        self.size = size
        starts: list[int] = []
        parts: list[bytearray] = []
        for at, data in sorted(pieces, key=lambda p: p[0]):
            if not data:
                continue
            if parts and at <= starts[-1] + len(parts[-1]):
                over = starts[-1] + len(parts[-1]) - at  # the same stream: overlaps agree
                if len(data) > over:
                    parts[-1] += data[over:]
                continue
            starts.append(at)
            parts.append(bytearray(data))
        self.starts = starts
        self.parts = [bytes(p) for p in parts]

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, key):
        if isinstance(key, slice):
            start, stop, step = key.indices(self.size)
            if step != 1:
                raise Missing(start)
            if stop <= start:
                return b""
            return self._get(start, stop)
        if key < 0:
            key += self.size
        if not 0 <= key < self.size:
            raise IndexError("index out of range")
        return self._get(key, key + 1)[0]

    def _get(self, start: int, stop: int) -> bytes:
        i = bisect_right(self.starts, start) - 1
        if i < 0 or stop > self.starts[i] + len(self.parts[i]):
            raise Missing(start)
        at = self.starts[i]
        return self.parts[i][start - at: stop - at]


class Collector:
    """Watches a member's bytes go by (`feed(offset, piece)` in order) and keeps what the
    fatbin and embedded readers will read. One walker follows a chain of containers at a time;
    a magic found by the search while none is walking starts one."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.kept: list[tuple[int, bytes]] = []
        self.kept_bytes = 0
        self.hits: list[int] = []  # 8-aligned magic offsets, ascending
        self.claims: list[tuple[int, int]] = []  # payload ranges not searched, ascending
        self._ci = 0  # first claim the search has not passed
        self.searched = 0  # start offsets below this were examined (unless claimed)
        self.overflow = False
        self._edge: tuple[int, bytes] | None = None  # an aligned offset whose magic spans pieces
        self._static: list[tuple[int, int]] = []  # ranges kept as they pass (the section table)
        # the walker: [start, stop, handler, parts, filled] of the bytes it waits for
        self._need: list | None = None
        self._walk_end = 0  # a new walker starts only at or after this
        self._cont = (False, 0)  # (payloads claimed, end) of the container being walked
        self._zeros: tuple[int, object] | None = None  # (start, pieces) of a zero run
        self._piece: tuple[int, bytes] = (0, b"")
        self._need_at(0, 64, self._elf_header)

    # -- the stream ------------------------------------------------------------------
    def feed(self, off: int, data: bytes) -> None:
        if self.overflow:
            return
        self._piece = (off, data)
        end = off + len(data)
        for lo, hi in self._static:
            if lo < end and hi > off:
                a, b = max(lo, off), min(hi, end)
                self._keep(a, data[a - off: b - off])
        if self._edge is not None:
            self._edge_check(data)
        while not self.overflow:
            self._walk(off, data, end)
            at = self._search(off, data, end)
            if at is None:
                break
            self._need_at(at, at + CONTAINER_READ, self._container)

    def finish(self) -> None:
        """The stream has ended: a walker waiting for bytes past the end gets what there was."""
        end = self.size
        if self._need is not None and self._need[4] >= end:
            self._walk(end, b"", end)

    def _keep(self, at: int, data: bytes) -> None:
        if data:
            self.kept.append((at, data))
            self.kept_bytes += len(data)
            if self.kept_bytes > MAX_KEPT:
                self.overflow = True

    # -- the walker ------------------------------------------------------------------
    def _need_at(self, start: int, stop: int, handler: Callable[[int, bytes], None],
                 at: int = 0, got: bytes = b"") -> None:
        """Wait for [start, stop) (clipped to the member), taking what `got` (bytes at `at`)
        already holds of it."""
        stop = max(start, min(stop, self.size))
        have = got[start - at: stop - at] if at <= start < at + len(got) else b""
        self._need = [start, stop, handler, [have] if have else [], start + len(have)]

    def _walk(self, off: int, data: bytes, end: int) -> None:
        while (need := self._need) is not None and not self.overflow:
            start, stop, handler, parts, filled = need
            if filled < stop:
                if filled < off:  # went by before it was known to be wanted
                    self._idle(filled)
                    return
                if filled >= end:
                    return
                b = min(stop, end)
                parts.append(data[filled - off: b - off])
                need[4] = filled = b
                if filled < stop:
                    return
            self._need = None
            got = parts[0] if len(parts) == 1 else b"".join(parts)
            self._keep(start, got)
            handler(start, got)

    def _idle(self, at: int) -> None:
        self._need = None
        self._walk_end = max(self._walk_end, at)

    def _elf_header(self, at: int, h: bytes) -> None:
        self._idle(0)
        if len(h) < 64 or h[:6] != _ELF64_LE:
            return
        shoff = struct.unpack_from("<Q", h, 0x28)[0]
        shentsize, shnum = struct.unpack_from("<HH", h, 0x3A)
        if shoff and shnum:
            lo, hi = max(0, shoff - SECTION_TABLE_LEAD), min(self.size, shoff + shnum * shentsize)
            if lo < hi:
                self._static.append((lo, hi))
                off, data = self._piece  # the part of it in this piece went by already
                a, b = max(lo, off), min(hi, off + len(data))
                if a < b:
                    self._keep(a, data[a - off: b - off])

    def _container(self, at: int, h: bytes) -> None:
        if len(h) < 16 or h[:4] != MAGIC:
            self._idle(at + len(h))
            return
        version, hsize, fat_size = struct.unpack_from("<HHQ", h, 4)
        cend = at + hsize + fat_size
        if hsize < 16 or cend > self.size:
            self._idle(at + len(h))
            return
        # payloads of a container `embedded.scan` accepts are not searched (it skips them)
        self._cont = (version == 1 and hsize == 16, cend)
        if at + hsize < cend:
            self._need_at(at + hsize, at + hsize + HEAD_READ, self._entry, at, h)
        else:
            self._after(cend)

    def _entry(self, at: int, h: bytes) -> None:
        cend = self._cont[1]
        if len(h) < ENTRY.size:
            self._idle(at + len(h))
            return
        hsize, psize = struct.unpack_from("<IQ", h, 4)
        if hsize < ENTRY.size or hsize > MAX_ENTRY_HEADER or hsize > cend - at or \
                psize > cend - at - hsize:
            self._idle(at + len(h))
            return
        if hsize > len(h):
            self._need_at(at, at + hsize, lambda a, g: self._payload(a, hsize, psize), at, h)
        else:
            self._payload(at, hsize, psize)

    def _payload(self, at: int, hsize: int, psize: int) -> None:
        claim, cend = self._cont
        p0, p1 = max(at + hsize, self.searched), at + hsize + psize
        if claim and p1 > p0:
            self.claims.append((p0, p1))
        if at + hsize + psize < cend:
            self._need_at(p1, p1 + HEAD_READ, self._entry)
        else:
            self._after(cend)

    def _after(self, at: int) -> None:
        if at >= self.size:
            self._idle(at)
        else:
            self._need_at(at, at + CONTAINER_READ, self._next)

    def _next(self, at: int, h: bytes) -> None:
        """What `_walk` meets after a container: another, zero padding, or the end of the chain."""
        if len(h) >= 16 and h[:4] == MAGIC:
            self._container(at, h)
        elif len(h) >= 8 and not any(h[:8]):
            pieces = zero_pieces(at, self.size)
            self._zeros = (at, pieces)
            a, n = next(pieces)
            self._need_at(a, a + n, self._zero_piece, at, h)
        else:
            self._idle(at + len(h))

    def _zero_piece(self, at: int, piece: bytes) -> None:
        start, pieces = self._zeros  # type: ignore[misc]
        rest = piece.lstrip(b"\0")
        if rest:
            q = start + (at + len(piece) - len(rest) - start) // 8 * 8
            self._need_at(q, q + CONTAINER_READ, self._after_zeros, at, piece)
            return
        nxt = next(pieces, None)  # type: ignore[call-overload]
        if nxt is None:
            self._idle(at + len(piece))
        else:
            self._need_at(nxt[0], nxt[0] + nxt[1], self._zero_piece)

    def _after_zeros(self, at: int, h: bytes) -> None:
        if len(h) >= 16 and h[:4] == MAGIC:
            self._container(at, h)
        else:
            self._idle(at + len(h))

    # -- the search ------------------------------------------------------------------
    def _search(self, off: int, data: bytes, end: int) -> int | None:
        """Record the 8-aligned magic offsets from `searched` to the end of the piece, payload
        claims skipped; return the first one that should start a walker."""
        p, claims, hits, n = self.searched, self.claims, self.hits, len(data)
        find = data.find
        while p < end:
            while self._ci < len(claims) and claims[self._ci][1] <= p:
                self._ci += 1
            if self._ci < len(claims) and claims[self._ci][0] <= p:
                p = claims[self._ci][1]
                continue
            stop = min(end, claims[self._ci][0]) if self._ci < len(claims) else end
            hi = min(stop - off + 3, n)
            i = find(MAGIC, p - off, hi)
            while i >= 0:
                at = off + i
                if not at & 7:
                    hits.append(at)
                    if len(hits) > MAX_HITS:
                        self.overflow = True
                        return None
                    if self._need is None and at >= self._walk_end:
                        self.searched = at + 1
                        return at
                i = find(MAGIC, i + 1, hi)
            p = stop
        self.searched = max(p, self.searched)
        q = (end - 3 + 7) & ~7  # an aligned offset whose four bytes run into the next piece
        if end - 3 <= q < end and q >= off and not self._claimed(q):
            self._edge = (q, data[q - off:])
        return None

    def _edge_check(self, data: bytes) -> None:
        q, have = self._edge  # type: ignore[misc]
        have += data[: 4 - len(have)]
        if len(have) < 4:
            self._edge = (q, have)
            return
        self._edge = None
        if have == MAGIC:
            self.hits.append(q)  # recorded only: a walker starting here could not see its bytes

    def _claimed(self, at: int) -> bool:
        i = bisect_right(self.claims, (at, 1 << 62)) - 1
        return i >= 0 and self.claims[i][0] <= at < self.claims[i][1]

    # -- after the stream ---------------------------------------------------------------
    def find(self, lo: int, end: int) -> int | None:
        """`embedded.scan`'s `find`: the first recorded magic at or after `lo` whose bytes lie
        before `end`, once every offset before it was searched (else `Missing`)."""
        hits = self.hits
        i = bisect_left(hits, lo)
        at = hits[i] if i < len(hits) and hits[i] + 4 <= end else None
        limit = at if at is not None else max(lo, end - 3)
        j = bisect_right(self.claims, (lo, 1 << 62)) - 1
        j = max(j, 0)
        while j < len(self.claims) and self.claims[j][0] < limit:
            if self.claims[j][1] > lo:
                raise Missing(lo)
            j += 1
        return at


class Streamed(NamedTuple):
    """What one pass over a member gave: its fatbin headers, its verified sha256, and the
    search of its data sections (`scan()`, which may raise `Missing`)."""

    fatbin: Fatbin
    sha256: str
    scan: Callable[[], tuple]


def is_host_elf_head(head: bytes) -> bool:
    """A 64-bit little-endian ELF that is not a cubin (EM_CUDA): the only kind streamed."""
    return (len(head) >= 20 and head[:6] == _ELF64_LE
            and struct.unpack_from("<H", head, 18)[0] != EM_CUDA)


def read_member(archive, name: str) -> Streamed | None:
    """The fatbin headers of a wheel member read while it inflates, or None when the member is
    not a host ELF (the caller reads it whole). Raises `Missing` when the readers needed a
    byte that was not kept, `InputError` when the member is corrupt (as opening it would)."""
    with archive.stream(name) as stream:
        col: Collector | None = None
        for at, piece in stream:
            if col is None:
                if not is_host_elf_head(bytes(piece[:20])):
                    return None
                col = Collector(stream.size)
            col.feed(at, bytes(piece))
        digest = stream.finish()
    if col is None:
        return None
    col.finish()
    if col.overflow:
        raise Missing(0)
    buf = Kept(col.size, col.kept)
    col.kept = []
    fb = read_host_elf(buf, archive.path, member=name)

    def scan() -> tuple:
        from wheeldoc.kernels.embedded import scan as scan_sections

        if col.overflow:
            raise Missing(0)
        return scan_sections(buf, archive.path, name, find=col.find)

    return Streamed(fb, digest, scan)
