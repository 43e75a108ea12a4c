"""Fatbin containers a library keeps outside `.nv_fatbin`, in its data sections.

Some libraries load part of their GPU code themselves with `cuModuleLoadData` instead of
registering it through the CUDA runtime: cuFFT 12 keeps 23,983 containers in `.ldata` and
only a 672-byte `.nv_fatbin` (one sm_75 cubin); cuBLASLt keeps a few hundred beside its 2,782.
cuobjdump lists none of them. wheeldoc looks for them only where it matters (a library whose
`.nv_fatbin` has nothing for the target GPU): containers are found by their magic at 8-byte
alignment in `.rodata`, `.lrodata`, `.data`, `.ldata` and `.data.rel.ro`, each checked as a whole
container (header, every entry header) before it counts. Sections are scanned in chunks read
with `os.pread` for files on disk, so memory stays bounded.
"""

from __future__ import annotations

import mmap
import os
import struct
from typing import Iterator

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.binary.elffile import ElfFile
from wheeldoc.kernels.fatbin import FATBIN_MAGIC, FatbinContainer, walk_containers
from wheeldoc.core.files import open_regular

SECTIONS = (".rodata", ".lrodata", ".data", ".ldata", ".data.rel.ro")
CHUNK = 16 << 20
MAGIC = struct.pack("<I", FATBIN_MAGIC)
HEAD = struct.Struct("<IHHQ")
WALK_FACTOR = 4
WALK_FLOOR = 1 << 20


def _offsets(read, start: int, end: int) -> Iterator[int]:
    """8-aligned offsets of the container magic in [start, end)."""
    pos = start
    while pos < end:
        chunk = read(pos, min(CHUNK + len(MAGIC) - 1, end - pos))
        i = chunk.find(MAGIC)
        while 0 <= i < CHUNK:
            if (pos + i) % 8 == 0:
                yield pos + i
            i = chunk.find(MAGIC, i + 1)
        pos += CHUNK


class _Finder:
    """`next(lo, end)`: the first 8-aligned magic at or after `lo` whose four bytes lie before
    `end`, found by reading the buffer (or the file) in chunks, each chunk searched once."""

    def __init__(self, read) -> None:
        self.read = read
        self.hits: Iterator[int] | None = None
        self.span = (0, 0)  # [start, end) of the range the current iterator walks
        self.last = -1  # the last offset it yielded

    def next(self, lo: int, end: int) -> int | None:
        if self.hits is None or not self.span[0] <= lo <= self.span[1] or self.span[1] != end \
                or lo <= self.last:
            self.hits, self.span, self.last = _offsets(self.read, lo, end), (lo, end), lo - 1
        for at in self.hits:
            self.last = at
            if at >= lo:
                return at
        self.span = (end, end)
        return None


def scan(buf, path: str, member: str | None = None, fd: int | None = None,
         find=None) -> tuple[tuple[str, FatbinContainer], ...]:
    """(section, container) for every whole container found in the data sections of an ELF
    `buf`; with `fd`, section bytes are read with pread rather than through `buf`. `find(lo,
    end)` gives the next 8-aligned magic at or after `lo` (default: searching the section's
    bytes); wheeldoc.kernels.stream passes the hits it found while the member inflated."""
    elf = ElfFile(buf, path, member)
    if fd is not None:
        read = lambda at, n: os.pread(fd, n, at)  # noqa: E731
    else:
        read = lambda at, n: bytes(buf[at:at + n])  # noqa: E731
    if find is None:
        find = _Finder(read).next
    found: list[tuple[str, FatbinContainer]] = []
    for name in SECTIONS:
        sec = elf.section(name)
        if sec is None or sec.type == sec.SHT_NOBITS or sec.offset + sec.size > len(buf):
            continue
        end = sec.offset + sec.size
        # Candidates are walked at most WALK_FACTOR x the section's bytes in all: containers lie
        # back to back, so honest walks cover each byte once; hostile candidates that overlap
        # and fail at their end would cost candidates x section.
        budget = WALK_FACTOR * sec.size + WALK_FLOOR
        lo = sec.offset  # a found container's bytes hold no other container
        while (at := find(lo, end)) is not None:
            lo = at + 1
            head = read(at, HEAD.size)
            if len(head) < HEAD.size:
                continue
            _, version, hsize, fat_size = HEAD.unpack(head)
            if version != 1 or hsize != 16 or fat_size == 0 or at + 16 + fat_size > end:
                continue
            budget -= 16 + fat_size
            if budget < 0:
                raise LimitExceeded(path, f"candidate fatbin containers in {name} span more than "
                                    f"{WALK_FACTOR}x its {sec.size:,} bytes (limit WALK_FACTOR): "
                                    "overlapping containers", offset=at, member=member)
            try:
                (c,) = walk_containers(buf, at, at + 16 + fat_size, path, member)
            except (InputError, ValueError):
                continue  # four bytes that only look like a container
            found.append((name, c._replace(index=len(found))))
            lo = at + 16 + fat_size
    return tuple(found)


def scan_file(path: str) -> tuple[tuple[str, FatbinContainer], ...]:
    with open_regular(path) as fh:
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
            return scan(mm, path, fd=fh.fileno())
