"""Minimal, fast ELF reader: header and section table through `struct` on a buffer.

Works on bytes, mmap, memoryview, or any object whose slices are bytes. Every offset and
size the file declares is checked against the buffer, so a truncated or hostile file
raises `InputError` instead of reading past the end. Higher-level readers (dynamic
symbols, needed libraries, fatbin sections) build on `ElfFile.section`.
"""

from __future__ import annotations

import struct

from wheeldoc.core.errors import InputError, LimitExceeded

TYPE_CHECKING = False  # typing (and the re it imports) stays out of `kernels --list`
if TYPE_CHECKING:
    import mmap
    from typing import NamedTuple, Union

    Buffer = Union[bytes, bytearray, memoryview, mmap.mmap]
else:
    from wheeldoc.core.records import NamedTuple

    Buffer = "bytes | bytearray | memoryview | mmap.mmap"  # a type for checkers (annotations only)

ELF_MAGIC = b"\x7fELF"
MAX_SECTIONS = 1 << 16
MAX_SEGMENTS = 1 << 16


class Section(NamedTuple):
    index: int
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int

    SHT_NOBITS = 8

    @property
    def end(self) -> int:
        return self.offset + self.size


class Segment(NamedTuple):
    """One program header (PT_LOAD, PT_DYNAMIC, ...)."""

    type: int
    flags: int
    offset: int
    vaddr: int
    filesz: int
    memsz: int

    PT_LOAD = 1
    PT_DYNAMIC = 2


class ElfHeader(NamedTuple):
    is64: bool
    little: bool
    osabi: int
    abiversion: int
    type: int
    machine: int
    flags: int
    shoff: int
    shentsize: int
    shnum: int
    shstrndx: int
    phoff: int
    phentsize: int
    phnum: int


def is_elf(buf: Buffer) -> bool:
    return len(buf) >= 4 and bytes(buf[:4]) == ELF_MAGIC


class ElfFile:
    """Header and section table of one ELF image held in `buf`."""

    def __init__(self, buf: Buffer, path: str = "<buffer>", member: str | None = None) -> None:
        self.buf = buf
        self.path = path
        self.member = member
        self.header = self._read_header()
        self.sections: tuple[Section, ...] = self._read_sections()
        self._by_name = {s.name: s for s in reversed(self.sections)}

    # -- helpers -------------------------------------------------------------
    def fail(self, message: str, offset: int | None = None) -> InputError:
        return InputError(self.path, message, offset=offset, member=self.member)

    def check_range(self, offset: int, size: int, what: str) -> None:
        if offset < 0 or size < 0 or offset + size > len(self.buf):
            raise self.fail(
                f"{what} at {offset:#x}+{size:#x} lies past the end of the file "
                f"({len(self.buf):#x} bytes): truncated or corrupt ELF",
                offset,
            )

    def unpack(self, fmt: str, offset: int) -> tuple:
        end = "<" if self.header_little else ">"
        size = struct.calcsize(end + fmt)
        self.check_range(offset, size, "structure")
        # a slice, not unpack_from: the buffer may be one that only slices (a member's kept
        # bytes, wheeldoc.kernels.stream), not one with the buffer protocol
        return struct.unpack(end + fmt, self.buf[offset: offset + size])

    # -- header and sections -------------------------------------------------
    def _read_header(self) -> ElfHeader:
        buf = self.buf
        if len(buf) < 16 or bytes(buf[:4]) != ELF_MAGIC:
            raise self.fail("not an ELF file (bad magic)", 0)
        ei_class, ei_data = buf[4], buf[5]
        if ei_class not in (1, 2) or ei_data not in (1, 2):
            raise self.fail(f"unknown ELF class/data encoding {ei_class}/{ei_data}", 4)
        self.header_little = ei_data == 1
        is64 = ei_class == 2
        if is64:
            fields = self.unpack("HHIQQQIHHHHHH", 16)
        else:
            fields = self.unpack("HHIIIIIHHHHHH", 16)
        (e_type, e_machine, _ver, _entry, phoff, shoff, flags, _ehsize,
         phentsize, phnum, shentsize, shnum, shstrndx) = fields
        return ElfHeader(is64, ei_data == 1, buf[7], buf[8], e_type, e_machine, flags,
                         shoff, shentsize, shnum, shstrndx, phoff, phentsize, phnum)

    def _read_sections(self) -> tuple[Section, ...]:
        h = self.header
        if h.shoff == 0:
            return ()
        fmt = "IIQQQQIIQQ" if h.is64 else "IIIIIIIIII"
        expected = struct.calcsize("<" + fmt)
        if h.shentsize != expected:
            raise self.fail(f"section header size {h.shentsize} (expected {expected})", 0x3A)
        shnum, shstrndx = h.shnum, h.shstrndx
        if shnum == 0:  # extended numbering: real count in section 0's sh_size
            shnum = self.unpack(fmt, h.shoff)[5]
        if shstrndx == 0xFFFF:
            shstrndx = self.unpack(fmt, h.shoff)[6]
        if shnum > MAX_SECTIONS:
            raise self.fail(f"{shnum} sections declared (limit {MAX_SECTIONS})", 0x3C)
        self.check_range(h.shoff, shnum * expected, "section header table")
        raw = [self.unpack(fmt, h.shoff + i * expected) for i in range(shnum)]
        names = b""
        if 0 < shstrndx < shnum:
            s = raw[shstrndx]
            if s[1] != Section.SHT_NOBITS:
                self.check_range(s[4], s[5], "section name table")
                names = bytes(self.buf[s[4]: s[4] + s[5]])
        out = []
        # Section names: at most 4x the name table (+ 64 KiB) in all, so sections that all point
        # at one long unterminated name cost no more than reading the table a few times.
        left = 4 * len(names) + (1 << 16)
        if names and not names.endswith(b"\0"):
            names += b"\0"
        for i, (name, typ, flags, addr, off, size, link, info, _align, entsize) in enumerate(raw):
            text = _cstr(names, name)
            left -= len(text) + 1
            if left < 0:
                raise LimitExceeded(self.path, f"section names exceed {4 * len(names) + (1 << 16):,} bytes "
                                    "(4x the section name table + 65,536: the limit on names read): "
                                    "sections that share one long name", offset=h.shoff, member=self.member)
            out.append(Section(i, text, typ, flags, addr, off, size, link, info, entsize))
        return tuple(out)

    def segments(self) -> tuple[Segment, ...]:
        """The program headers (bounds-checked; empty when the file has none)."""
        h = self.header
        if h.phoff == 0 or h.phnum == 0:
            return ()
        fmt = "IIQQQQQQ" if h.is64 else "IIIIIIII"
        expected = struct.calcsize("<" + fmt)
        if h.phentsize != expected:
            raise self.fail(f"program header size {h.phentsize} (expected {expected})", 0x36 if h.is64 else 0x2A)
        if h.phnum > MAX_SEGMENTS:
            raise self.fail(f"{h.phnum} program headers declared (limit {MAX_SEGMENTS})", 0x38)
        self.check_range(h.phoff, h.phnum * expected, "program header table")
        out = []
        for i in range(h.phnum):
            f = self.unpack(fmt, h.phoff + i * expected)
            if h.is64:  # type, flags, offset, vaddr, paddr, filesz, memsz, align
                out.append(Segment(f[0], f[1], f[2], f[3], f[5], f[6]))
            else:  # type, offset, vaddr, paddr, filesz, memsz, flags, align
                out.append(Segment(f[0], f[6], f[1], f[2], f[4], f[5]))
        return tuple(out)

    def section(self, name: str) -> Section | None:
        return self._by_name.get(name)

    def section_data(self, section: Section) -> memoryview:
        """The bytes of a section (empty for NOBITS), bounds-checked."""
        if section.type == Section.SHT_NOBITS:
            return memoryview(b"")
        self.check_range(section.offset, section.size, f"section {section.name!r}")
        return memoryview(self.buf)[section.offset: section.offset + section.size]


def _cstr(table: bytes, offset: int) -> str:
    if offset >= len(table):
        return ""
    end = table.find(b"\0", offset)
    return table[offset: end if end >= 0 else len(table)].decode("utf-8", "replace")
