"""A tiny ELF64 little-endian writer for hostile shapes: sections laid out in order, the section
header table last. Only what wheeldoc's readers look at is filled in; each generator below
builds one hostile shape from a few kilobytes of parameters."""

from __future__ import annotations

import struct
from dataclasses import dataclass

SHT_PROGBITS, SHT_STRTAB, SHT_DYNAMIC, SHT_DYNSYM = 1, 3, 6, 11
SHT_VERNEED, SHT_VERSYM = 0x6FFFFFFE, 0x6FFFFFFF
DT_NEEDED, DT_RUNPATH = 1, 29


@dataclass
class Sec:
    name: str
    type: int
    data: bytes
    link: int = 0
    info: int = 0
    entsize: int = 0
    size: int | None = None  # a declared size other than len(data) (sparse / lying)
    offset: int | None = None  # a declared offset other than where the data was written


def elf(sections: list[Sec], *, tail: int = 0) -> bytes:
    """The file; `tail` zero bytes are appended after the section header table."""
    names = b"\0" + b"".join(s.name.encode() + b"\0" for s in sections) + b".shstrtab\0"
    all_secs = [*sections, Sec(".shstrtab", SHT_STRTAB, names)]
    body = bytearray(64)
    offsets = []
    for s in all_secs:
        body += bytes(-len(body) % 8)
        offsets.append(len(body))
        body += s.data
    body += bytes(-len(body) % 8)
    shoff = len(body)
    shdrs = bytearray(64)  # the null section
    name_at = 1
    for s, off in zip(all_secs, offsets):
        off = off if s.offset is None else s.offset
        shdrs += struct.pack("<IIQQQQIIQQ", name_at, s.type, 2, off, off,
                             len(s.data) if s.size is None else s.size, s.link, s.info, 8, s.entsize)
        name_at += len(s.name) + 1
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    header = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 56, 0, 64,
                                 len(all_secs) + 1, len(all_secs))
    body[:64] = header
    return bytes(body + shdrs + bytes(tail))


def dynamic(entries: list[tuple[int, int]]) -> bytes:
    return b"".join(struct.pack("<qQ", t, v) for t, v in entries) + struct.pack("<qQ", 0, 0)


def shared_object(strtab: bytes, dyn: list[tuple[int, int]] = (), syms: list[int] = (),
                  extra: list[Sec] = ()) -> bytes:
    """A shared object whose .dynamic and .dynsym use `strtab` (section 1)."""
    secs = [Sec(".dynstr", SHT_STRTAB, strtab)]
    secs.append(Sec(".dynamic", SHT_DYNAMIC, dynamic(list(dyn)), link=1, entsize=16))
    if syms:
        table = bytes(24) + b"".join(struct.pack("<IBBHQQ", o, 0x12, 0, 1, 0, 0) for o in syms)
        secs.append(Sec(".dynsym", SHT_DYNSYM, table, link=1, entsize=24))
    return elf(secs + list(extra))


# -- fatbin pieces ---------------------------------------------------------------------------------
FATBIN_MAGIC = 0xBA55ED50


def container(fat_size: int, version: int = 1) -> bytes:
    return struct.pack("<IHHQ", FATBIN_MAGIC, version, 16, fat_size)


def entry(hsize: int = 64, psize: int = 0, sm: int = 90, kind: int = 2, extra: bytes = b"") -> bytes:
    """A cubin entry header (64 bytes, then `extra` up to `hsize`), payload not included."""
    head = struct.pack("<HHIQIIHHIIIQQQ", kind, 0x101, hsize, psize, 0, 0, 0, 0, sm, 0, 0, 0x11, 0, 0)
    return (head + extra).ljust(hsize, b"\0")
