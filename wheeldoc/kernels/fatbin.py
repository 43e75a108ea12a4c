"""CUDA fat binaries: every container and entry header of a `.so`, `.fatbin`, `.cubin` or `.ptx`.

Layout (shared/reference/cuda-binaries.md §1-3): ELF section `.nv_fatbin` (or
`__nv_relfatbin` when it is absent, as cuobjdump does) holds back-to-back containers
(16-byte header, magic 0xBA55ED50), each holding entries (a 64..120-byte header then the
payload). Listing reads headers only, through `struct` on a buffer (an mmap for files);
payloads are decompressed only by `entry_image`, with the declared size as a hard bound.
Every declared offset and size is checked, so a corrupt file raises `InputError` naming
the byte offset.
"""

from __future__ import annotations

import mmap
import os
import struct
TYPE_CHECKING = False  # typing (and the re it imports) stays out of `kernels --list`
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from wheeldoc.core.records import NamedTuple

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.kernels.cubin import is_cubin, parse_compat, compat_accelerator, read_cubin, CubinInfo
from wheeldoc.binary.elffile import Buffer, ElfFile, is_elf
from wheeldoc.core.files import open_regular

# The layout constants the short listing reader shares (defined there: it imports no reader).
from wheeldoc.kernels.listwalk import (
    CONTAINER, CONTAINER_READ, ENTRY, FATBIN_MAGIC, FLAG_ARCH_SPECIFIC, FLAG_FAMILY, FLAG_LZ4, FLAG_ZSTD,
    HEAD_READ, KIND_CONCAT, KINDS, MAX_ENTRIES, MAX_ENTRY_HEADER, OPTS_DESC,
)

SECTIONS = (".nv_fatbin", "__nv_relfatbin")
FLAG_64BIT = 0x1
FLAG_DEBUG = 0x2
FLAG_LINUX = 0x10
FLAG_OBFUSCATED = 0x10000  # NVVM/LTO-IR payloads: scrambled with the key at +0x30 (not decoded)
MAX_IMAGE = 1 << 30  # decompressed image bound (cuBLAS's largest is a few MB)
MAX_PTX_HEAD = 1 << 16  # bytes of a .ptx file searched for .version/.target
MAX_PADDING = 1 << 20  # zero bytes between two containers


class FatbinEntry(NamedTuple):
    """One image in a container, as its header declares it (nothing decompressed).

    A typed NamedTuple rather than a frozen dataclass: cuBLAS has 5,737 entries and a
    NamedTuple is built six times faster, which the listing race with cuobjdump feels."""

    container: int  # index of the container in the file
    index: int  # position of the entry in the file (0-based, all containers)
    offset: int  # file offset of the entry header
    kind: str  # "cubin" | "ptx" | "lto-ir" | "other"
    kind_code: int  # raw header kind (1 PTX, 2 ELF, 8 NVVM, ...)
    sm: int  # SM number without suffix: 80, 90, 120 (virtual arch for PTX)
    suffix: str  # "" | "a" | "f"
    code_version: tuple[int, int]  # (major, minor): PTX ISA for PTX, (1, ABI) for ELF
    flags: int
    header_size: int
    payload_offset: int  # file offset of the stored payload
    payload_size: int  # stored bytes (padded to 8)
    compressed_size: int | None  # exact compressed stream length, None when stored raw
    decompressed_size: int | None  # exact image size, None when stored raw
    compression: str | None  # "zstd" | "lz4" | "unknown" | None
    identifier: str | None
    options: str | None  # ptxas / nvvm options string (PTX and LTO-IR entries)
    compat_accelerator: bool | None  # sm_100+ ELF: accelerator bit copied from .nv.compat
    # Images inside a concatenated entry (kind 0x100, `fatbinary --concat`, CUDA 13.5) point
    # at it: their payload_offset/payload_size then locate the image inside the parent's
    # decompressed payload, and `offset` is where their 64-byte sub-header sits.
    parent: FatbinEntry | None = None

    @property
    def arch(self) -> str:
        """"sm_90a", "sm_120f", "sm_80" (for PTX: the virtual arch, sm_ spelling)."""
        return f"sm_{self.sm}{self.suffix}"

    @property
    def virtual_arch(self) -> str | None:
        return f"compute_{self.sm}{self.suffix}" if self.kind == "ptx" else None

    @property
    def cc(self) -> tuple[int, int]:
        return divmod(self.sm, 10)

    @property
    def ptx_isa(self) -> str | None:
        """PTX ISA version "9.0" for PTX entries, else None."""
        return f"{self.code_version[0]}.{self.code_version[1]}" if self.kind == "ptx" else None

    @property
    def debug(self) -> bool:
        return bool(self.flags & FLAG_DEBUG)

    @property
    def obfuscated(self) -> bool:
        return bool(self.flags & FLAG_OBFUSCATED)

    @property
    def size(self) -> int:
        """Size of the image once decompressed (the stored size when raw)."""
        return self.decompressed_size if self.decompressed_size is not None else self.payload_size


class FatbinContainer(NamedTuple):
    """One container: its 16-byte header, then `fat_size` bytes of entries."""

    index: int
    offset: int  # file offset of the container header
    version: int
    header_size: int
    fat_size: int  # bytes of entries after the header
    entries: tuple[FatbinEntry, ...]

    @property
    def end(self) -> int:
        return self.offset + self.header_size + self.fat_size


class Fatbin(NamedTuple):
    """All GPU code found in one file (or one archive member)."""

    path: str
    member: str | None
    format: str  # "elf" (host ELF), "fatbin", "cubin" (standalone EM_CUDA ELF), "ptx", "none"
    section: str | None  # ".nv_fatbin" / "__nv_relfatbin" for host ELF files
    section_offset: int | None
    section_size: int | None
    other_sections: tuple[str, ...]  # fatbin sections present but not read (rel beside exec)
    containers: tuple[FatbinContainer, ...]

    @property
    def entries(self) -> tuple[FatbinEntry, ...]:
        return tuple(e for c in self.containers for e in c.entries)


# -- reading ----------------------------------------------------------------------------


def open_fatbin(path: str | os.PathLike, *, member: str | None = None,
                section: str | None = None, sink=None) -> Fatbin:
    """Read the GPU code headers of a file on disk (nothing decompressed).

    For a host ELF, `section` picks the fatbin section to read; by default `.nv_fatbin`, or
    `__nv_relfatbin` when there is no `.nv_fatbin` (what cuobjdump lists without `-all`).

    The ELF header and section table are read through an mmap; the fatbin headers through
    `os.pread`, because faulting them in through the mmap maps whole 64 KB blocks around
    each header (144 MB resident for cuBLAS instead of about 20 MB).

    With `sink` (a callable), each container goes to it as soon as it is read, and the Fatbin
    returned holds none: a listing of thousands of entries is rendered while they are read,
    not after holding them all (`kernels --list`, kernels/command_list.py).
    """
    path = os.fspath(path)
    try:
        with open_regular(path) as fh:
            if os.fstat(fh.fileno()).st_size == 0:
                raise InputError(path, "empty file", member=member)
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                return _read(mm, _Reader(mm, fh.fileno()), path, member, section, sink)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror or exc}", member=member) from None


def read_fatbin(buf: Buffer, path: str = "<buffer>", *, member: str | None = None,
                section: str | None = None, fd: int | None = None) -> Fatbin:
    """Detect the format of `buf` (bytes, mmap, ...) and read every container and entry header.
    With `fd` (the file `buf` maps), the fatbin headers are read with pread rather than by
    faulting the mapping in around each of them."""
    return _read(buf, _Reader(buf, fd), path, member, section)


class _Reader:
    """Bounded reads from a buffer, or with `os.pread` from a file descriptor."""

    __slots__ = ("buf", "fd", "size", "read", "fetch")

    def __init__(self, buf: Buffer, fd: int | None = None) -> None:
        self.buf, self.fd, self.size = buf, fd, len(buf)
        # read(offset, size): callers keep offset + size within the file.
        # fetch(offset, size): bytes from offset, at least `size` of them where the file has
        # them (with a file descriptor, READ_AHEAD bytes: the walk reads the next headers from them)
        if fd is not None:
            self.read = _window_reader(fd)
            pread = os.pread
            self.fetch = lambda offset, size: pread(fd, size if size > READ_AHEAD else READ_AHEAD,
                                                    offset)
        else:
            self.read = self.fetch = lambda offset, size: bytes(buf[offset:offset + size])


READ_AHEAD = 4096  # bytes read per pread: most entries are small (cuBLASLt: median 1.4 KB),
# so the next headers are often in the bytes already read (5,666 entries: ~1,900 preads, not 5,666)


def _window_reader(fd: int):
    """read(offset, size) with `os.pread`, served from the last READ_AHEAD bytes read when they
    hold the range (the same bytes a pread of exactly `size` would give)."""
    pread = os.pread
    win = [0, b""]

    def read(offset: int, size: int) -> bytes:
        start, data = win
        if start <= offset and offset + size <= start + len(data):
            return data[offset - start: offset - start + size]
        data = pread(fd, size if size > READ_AHEAD else READ_AHEAD, offset)
        win[0], win[1] = offset, data
        return data[:size] if len(data) > size else data

    return read


def _read(buf: Buffer, reader: _Reader, path: str, member: str | None,
          section: str | None = None, sink=None) -> Fatbin:
    if len(buf) >= 4 and struct.unpack_from("<I", buf, 0)[0] == FATBIN_MAGIC:
        conts = _walk(reader, 0, len(buf), path, member, sink)
        return Fatbin(path, member, "fatbin", None, None, None, (), conts)
    if is_elf(buf):
        if is_cubin(buf):
            return _sunk(_standalone_cubin(buf, path, member), sink)
        return _host_elf(buf, reader, path, member, section, sink)
    head = bytes(buf[:MAX_PTX_HEAD])
    if b".version" in head and b".target" in head:
        return _sunk(_standalone_ptx(head, len(buf), path, member), sink)
    raise InputError(path, "not an ELF file, a fatbin or PTX text", offset=0, member=member)


def _sunk(fatbin: Fatbin, sink) -> Fatbin:
    """`fatbin`, its containers handed to `sink` instead when there is one."""
    if sink is None:
        return fatbin
    for c in fatbin.containers:
        sink(c)
    return fatbin._replace(containers=())


def _host_elf(buf: Buffer, reader: _Reader, path: str, member: str | None,
              section: str | None, sink=None) -> Fatbin:
    try:
        elf = ElfFile(buf, path)
    except InputError as exc:
        raise InputError(path, exc.message, offset=exc.offset, member=member) from None
    present = [(n, elf.section(n)) for n in SECTIONS if elf.section(n) is not None]
    if section is not None:
        present.sort(key=lambda p: p[0] != section)
        if not present or present[0][0] != section:
            sec = elf.section(section)
            if sec is None:
                return Fatbin(path, member, "none", None, None, None,
                              tuple(n for n, _ in present), ())
            present.insert(0, (section, sec))
    if not present:
        return Fatbin(path, member, "none", None, None, None, (), ())
    name, sec = present[0]
    others = tuple(n for n, _ in present[1:])
    if sec.type == sec.SHT_NOBITS or sec.size == 0:
        return Fatbin(path, member, "elf", name, sec.offset, 0, others, ())
    if sec.offset + sec.size > len(buf):
        raise InputError(path, f"section {name} at {sec.offset:#x}+{sec.size:#x} lies past the end "
                         f"of the file ({len(buf):#x} bytes): truncated ELF",
                         offset=sec.offset, member=member)
    conts = _walk(reader, sec.offset, sec.offset + sec.size, path, member, sink)
    return Fatbin(path, member, "elf", name, sec.offset, sec.size, others, conts)


def read_host_elf(buf: Buffer, path: str = "<buffer>", *, member: str | None = None) -> Fatbin:
    """The fatbin section of a host ELF held in `buf` (any object whose slices are bytes),
    read by slicing it: wheeldoc.kernels.stream hands a buffer holding only the bytes a
    member's headers need."""
    return _host_elf(buf, _Reader(buf), path, member, None)


def walk_containers(buf: Buffer, start: int, end: int, path: str = "<buffer>",
                    member: str | None = None) -> tuple[FatbinContainer, ...]:
    """Walk the containers lying back to back in `buf[start:end]` (offsets are absolute)."""
    if not 0 <= start <= end <= len(buf):
        raise ValueError(f"range {start}..{end} outside a {len(buf)}-byte buffer")
    return _walk(_Reader(buf), start, end, path, member)


_new_tuple = tuple.__new__  # a NamedTuple built without its generated __new__ (a frame less)


def _walk(reader: _Reader, start: int, end: int, path: str,
          member: str | None, sink=None) -> tuple[FatbinContainer, ...]:
    """`_walk_all`, with the cyclic garbage collector paused: the walk allocates a few objects
    per entry and none that can form a cycle, and the collections it would trigger (cuBLASLt:
    about 20) cost a sixth of the walk."""
    import gc

    if not gc.isenabled():
        return _walk_all(reader, start, end, path, member, sink)
    gc.disable()
    try:
        return _walk_all(reader, start, end, path, member, sink)
    finally:
        gc.enable()


def _walk_all(reader: _Reader, start: int, end: int, path: str, member: str | None,
              sink=None) -> tuple[FatbinContainer, ...]:
    """Every container in [start, end) and its entries, in one loop (no call per container or
    entry on the common path: cuBLASLt has 2,638 containers and 5,666 entries, and this walk is
    most of what `kernels --list` does). The bytes come from `reader.fetch`, which gives at
    least the range asked for, from its offset: the walk reads a header in place from the last
    bytes fetched when they hold it, else fetches the same range `read` would (so
    wheeldoc.kernels.stream, which keeps only those ranges, can answer)."""
    fetch = reader.fetch
    cunpack, eunpack, oparse = CONTAINER.unpack_from, ENTRY.unpack_from, OPTS_DESC.unpack_from
    esize, kinds, new, head_read, concat = ENTRY.size, KINDS, _new_tuple, HEAD_READ, KIND_CONCAT
    entry_type, container_type = FatbinEntry, FatbinContainer
    compressed = FLAG_ZSTD | FLAG_LZ4 | 0x1000
    out: list[FatbinContainer] = []  # (none with a sink: each goes to it)
    cindex = 0
    wbase = wend = 0
    win = b""  # the last bytes fetched, from file offset wbase to wend
    index = 0  # entries so far, all containers
    pos = start
    while pos < end:
        left = end - pos
        want = CONTAINER_READ if left > CONTAINER_READ else left
        if not (wbase <= pos and pos + want <= wend):
            win = fetch(pos, want)
            wbase, wend = pos, pos + len(win)
        b = pos - wbase
        if want < CONTAINER.size or wend - pos < CONTAINER.size:
            if not any(win[b:b + want]):
                break  # trailing padding
            raise InputError(path, f"truncated fatbin container header ({end - pos} bytes left)",
                             offset=pos, member=member)
        magic, version, hsize, fat_size = cunpack(win, b)
        if magic != FATBIN_MAGIC:
            if not any(win[b:b + 8]):
                pos = _skip_zeros(reader, pos, end, path, member)  # padding between containers
                continue
            raise InputError(path, f"bad fatbin container magic {magic:#010x}", offset=pos,
                             member=member)
        if hsize < CONTAINER.size or hsize > left:
            raise InputError(path, f"fatbin container header size {hsize} is invalid",
                             offset=pos + 6, member=member)
        cend = pos + hsize + fat_size
        if cend > end:
            raise InputError(path, f"fatbin container declares {fat_size} bytes of entries but only "
                             f"{left - hsize} remain: truncated or corrupt",
                             offset=pos + 8, member=member)
        cpos = pos
        first_index = index
        entries: list[FatbinEntry] = []
        add = entries.append
        pos += hsize
        while pos < cend:
            left = cend - pos
            if pos + head_read > wend:  # (the walk only goes forward: wbase <= pos)
                want = head_read if left > head_read else left
                if pos + want > wend:
                    win = fetch(pos, want)
                    wbase, wend = pos, pos + len(win)
                if wend - pos < esize:
                    left = 0  # the file ends inside the header: truncated
            if left < esize:
                raise InputError(path, f"truncated fatbin entry header ({cend - pos} bytes left in "
                                 "the container)", offset=pos, member=member)
            b = pos - wbase
            (kind_code, _ever, ehsize, psize, csize, opts_off, minor, major, sm, ident_off,
             ident_len, flags, _key, dsize) = eunpack(win, b)
            if ehsize < esize or ehsize > left or ehsize > MAX_ENTRY_HEADER:
                raise _bad(path, member, f"header size {ehsize} (container has {left} bytes "
                           "left)", pos + 4)
            if psize > left - ehsize:
                raise _bad(path, member, f"payload size {psize} runs past the container end "
                           f"({left - ehsize} bytes left)", pos + 8)
            if pos + ehsize > wend:
                win = fetch(pos, ehsize)
                wbase, wend, b = pos, pos + len(win), 0
            if flags & compressed:
                compression = ("zstd" if flags & FLAG_ZSTD else "lz4" if flags & FLAG_LZ4
                               else "unknown")  # 0x1000: legacy, never seen
                if csize == 0 or csize > psize:
                    raise _bad(path, member, f"compressed size {csize} does not fit the stored "
                               f"{psize} bytes", pos + 16)
                csize_v, dsize_v = csize, dsize
            else:
                compression = csize_v = dsize_v = None
            identifier = None
            if ident_off:
                if ident_off < esize or ident_off + ident_len > ehsize:
                    raise _bad(path, member, f"identifier at {ident_off}+{ident_len} lies outside "
                               "the header", pos + 32)
                raw = win[b + ident_off:b + ident_off + ident_len].split(b"\0", 1)[0]
                identifier = raw.decode("utf-8", "replace")
            kind = kinds.get(kind_code, "other")
            options = accel = None
            if opts_off and kind_code != concat:
                if opts_off < esize or opts_off + 8 > ehsize:
                    raise _bad(path, member, f"options descriptor at {opts_off} lies outside the "
                               "header", pos + 20)
                boff, blen = oparse(win, b + opts_off)
                if boff or blen:  # (0, 0): an empty descriptor (cuFFT's self-loaded containers)
                    if boff < esize or boff + blen > ehsize:
                        raise _bad(path, member, f"options at {boff}+{blen} lie outside the "
                                   "header", pos + opts_off)
                    at = b + boff
                    if kind_code != 2:  # PTX, LTO-IR: the ptxas / nvvm options string
                        options = win[at:at + blen].split(b"\0", 1)[0].decode("utf-8", "replace")
                    elif blen and win[at] == 0:  # ELF: a zero, then the start of .nv.compat
                        if blen >= 3 and ehsize - boff >= 4 and win[at + 1] == 2 and win[at + 2] == 9:
                            accel = win[at + 3] != 0  # the usual first record: accelerator bit
                        else:
                            accel = _compat(win[at + 1:b + min(ehsize, boff + 1 + blen)],
                                            path, member, pos + boff)
            suffix = "a" if flags & FLAG_ARCH_SPECIFIC else "f" if flags & FLAG_FAMILY else ""
            entry = new(entry_type, (cindex, index, pos, kind, kind_code, sm, suffix,
                                     (major, minor), flags, ehsize, pos + ehsize, psize, csize_v,
                                     dsize_v, compression, identifier, options, accel, None))
            if kind_code == concat:
                entries.extend(_concat_members(win[b:b + ehsize], entry, index, path, member))
                index = first_index + len(entries)
            else:
                add(entry)
                index += 1
            pos += ehsize + psize
            if index > MAX_ENTRIES:  # refused as soon as it is known, not after the walk
                raise LimitExceeded(path, f"more than {MAX_ENTRIES:,} fatbin entries (limit "
                                    "MAX_ENTRIES)", offset=pos, member=member)
        container = new(container_type, (cindex, cpos, version, hsize, fat_size, tuple(entries)))
        if sink is None:
            out.append(container)
        else:
            sink(container)
        cindex += 1
    return tuple(out)


def _compat(blob: bytes, path: str, member: str | None, at: int) -> bool | None:
    """The accelerator bit of a `.nv.compat` copy whose first record is not the usual one."""
    try:
        return compat_accelerator(parse_compat(blob))
    except ValueError as exc:
        raise _bad(path, member, f"compat blob: {exc}", at) from None


def _skip_zeros(reader: _Reader, pos: int, end: int, path: str, member: str | None) -> int:
    """The offset of the first non-zero byte after the zero padding at `pos`, rounded down to
    8 bytes from `pos`; a run longer than MAX_PADDING bytes is refused (linkers pad containers
    to a few hundred bytes). Read in pieces of 256 bytes growing to 64 KiB (`zero_pieces`), so
    a reader that kept only the bytes around a short run (wheeldoc.kernels.stream) can answer."""
    for at, size in zero_pieces(pos, end):
        piece = reader.read(at, size)
        rest = piece.lstrip(b"\0")
        if rest:
            return pos + (at + len(piece) - len(rest) - pos) // 8 * 8
    if end - pos > MAX_PADDING:
        raise LimitExceeded(path, f"more than {MAX_PADDING:,} bytes of zero padding between fatbin "
                            "containers (limit MAX_PADDING)", offset=pos, member=member)
    return end


def zero_pieces(pos: int, end: int):
    """The (offset, size) pieces `_skip_zeros` reads from `pos`: 256 bytes, doubling to 64 KiB,
    never past `end`, and none after MAX_PADDING + 1 bytes (every byte of the refused run)."""
    at, size, stop = pos, 256, min(end, pos + MAX_PADDING + 1)
    while at < stop:
        n = min(size, stop - at)
        yield at, n
        at += n
        size = min(size * 2, 1 << 16)


def _concat_members(head: bytes, parent: FatbinEntry, first_index: int, path: str,
                    member: str | None) -> list[FatbinEntry]:
    """The images listed in a concatenated entry's header.

    At opts_desc_off: `{u32 count, u32 table_bytes}`, then `count` entry headers back to back
    (64 bytes, more with an options blob), whose header_size field holds the image's offset
    inside the parent's decompressed payload.
    """
    pos, hsize = parent.offset, parent.header_size
    desc = struct.unpack_from("<I", head, 0x14)[0]
    if desc < ENTRY.size or desc + 8 > hsize:
        raise _bad(path, member, f"concatenated entry table at {desc} lies outside the header",
                   pos + 0x14)
    count, table = OPTS_DESC.unpack_from(head, desc)
    tend = desc + table
    if tend > hsize or count * ENTRY.size + 8 > table:
        raise _bad(path, member, f"concatenated entry table of {count} images does not fit the "
                   "header", pos + desc)
    total = parent.decompressed_size if parent.compression else parent.payload_size
    out: list[FatbinEntry] = []
    sub = desc + 8
    for i in range(count):
        if sub + ENTRY.size > tend:
            raise _bad(path, member, f"concatenated image {i} header runs past the table",
                       pos + sub)
        (kind_code, _v, start, size, _c, opts_off, minor, major, sm, ident_off, ident_len, flags,
         _k, _d) = ENTRY.unpack_from(head, sub)
        sub_size = ENTRY.size
        if ident_off:
            sub_size = max(sub_size, ident_off + ident_len)
        if opts_off:
            if sub + opts_off + 8 > tend:
                raise _bad(path, member, f"concatenated image {i} options lie outside the table",
                           pos + sub + 0x14)
            boff, blen = OPTS_DESC.unpack_from(head, sub + opts_off)
            sub_size = max(sub_size, opts_off + 8, boff + blen + 1)
        sub_size = (sub_size + 7) & ~7
        if kind_code == KIND_CONCAT or sub + sub_size > tend or start + size > total:
            raise _bad(path, member, f"concatenated image {i} ({size} bytes at {start}) does not "
                       f"fit the {total}-byte payload or the table", pos + sub)
        kind = KINDS.get(kind_code, "other")
        options = accel = None
        if opts_off:
            options, accel = _options(head[sub:sub + sub_size], sub_size, opts_off, kind, pos + sub,
                                      path, member)
        suffix = "a" if flags & FLAG_ARCH_SPECIFIC else "f" if flags & FLAG_FAMILY else ""
        out.append(FatbinEntry(parent.container, first_index + i, pos + sub, kind, kind_code, sm,
                               suffix, (major, minor), flags, sub_size, start, size, None, None,
                               parent.compression, None, options, accel, parent))
        sub += sub_size
    if sub != tend:
        raise _bad(path, member, f"concatenated entry table holds {tend - sub} unread bytes",
                   pos + sub)
    return out


def _bad(path: str, member: str | None, msg: str, at: int) -> InputError:
    return InputError(path, f"corrupt fatbin entry: {msg}", offset=at, member=member)


def _options(head: bytes, hsize: int, opts_off: int, kind: str, pos: int, path: str,
             member: str | None):
    """The options blob: a string for PTX/LTO-IR, a `.nv.compat` copy for sm_100+ ELF."""
    if opts_off < ENTRY.size or opts_off + OPTS_DESC.size > hsize:
        raise _bad(path, member, f"options descriptor at {opts_off} lies outside the header",
                   pos + 20)
    boff, blen = OPTS_DESC.unpack_from(head, opts_off)
    if boff == 0 and blen == 0:  # an empty descriptor (cuFFT's self-loaded containers)
        return None, None
    if boff < ENTRY.size or boff + blen > hsize:
        raise _bad(path, member, f"options at {boff}+{blen} lie outside the header",
                   pos + opts_off)
    if kind != "cubin":
        return head[boff:boff + blen].split(b"\0", 1)[0].decode("utf-8", "replace"), None
    # ELF: one zero byte, then the first bytes of the cubin's .nv.compat section.
    if blen == 0 or head[boff] != 0:
        return None, None
    blob = head[boff + 1: min(hsize, boff + 1 + blen)]
    if blob[:2] == b"\x02\x09" and len(blob) >= 3:  # the usual first record: accelerator bit
        return None, bool(blob[2])
    try:
        return None, compat_accelerator(parse_compat(blob))
    except ValueError as exc:
        raise _bad(path, member, f"compat blob: {exc}", pos + boff) from None


# -- standalone cubin and PTX files -----------------------------------------------------

def _standalone_cubin(buf: Buffer, path: str, member: str | None) -> Fatbin:
    info = read_cubin(buf, path, member=member)
    entry = FatbinEntry(0, 0, 0, "cubin", 2, info.sm, info.suffix,
                        (1, info.abi_version), 0, 0, 0, len(buf), None, None, None, None, None,
                        info.accelerator)
    return Fatbin(path, member, "cubin", None, None, None, (),
                  (FatbinContainer(0, 0, 0, 0, len(buf), (entry,)),))


def _standalone_ptx(head: bytes, size: int, path: str, member: str | None) -> Fatbin:
    import re

    ver = re.search(rb"^[ \t]*\.version[ \t]+(\d+)\.(\d+)", head, re.M)
    tgt = re.search(rb"^[ \t]*\.target[ \t]+sm_(\d+)([af]?)\b", head, re.M)
    if ver is None or tgt is None:
        raise InputError(path, "PTX text without `.version X.Y` and `.target sm_XY` directives",
                         offset=0, member=member)
    entry = FatbinEntry(0, 0, 0, "ptx", 1, int(tgt.group(1)), tgt.group(2).decode(),
                        (int(ver.group(1)), int(ver.group(2))), 0, 0, 0, size, None, None, None,
                        None, None, None)
    return Fatbin(path, member, "ptx", None, None, None, (),
                  (FatbinContainer(0, 0, 0, 0, size, (entry,)),))


# -- payloads (on request) --------------------------------------------------------------


def entry_image(source: Buffer | str | os.PathLike, entry: FatbinEntry, path: str | None = None,
                *, member: str | None = None, max_size: int = MAX_IMAGE) -> bytes:
    """The image of `entry` (cubin ELF, PTX text with its NUL, ...), decompressed if needed.

    `source` is the buffer the entry was read from, or the path of that file.
    """
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source) if path is None else path
        try:
            with open_regular(source) as fh:
                size = os.fstat(fh.fileno()).st_size
                return _image(_Reader(_Sized(size), fh.fileno()), entry, path, member, max_size)
        except OSError as exc:
            raise InputError(path, f"cannot read: {exc.strerror or exc}", member=member) from None
    return _image(_Reader(source), entry, path or "<buffer>", member, max_size)


class _Sized:
    """Stands in for a buffer when reading through a file descriptor (only len() is used)."""

    def __init__(self, size: int) -> None:
        self.size = size

    def __len__(self) -> int:
        return self.size


def _image(reader: _Reader, entry: FatbinEntry, path: str, member: str | None,
           max_size: int) -> bytes:
    if entry.parent is not None:
        whole = _image(reader, entry.parent, path, member, max_size)
        return whole[entry.payload_offset:entry.payload_offset + entry.payload_size]
    start, stored = entry.payload_offset, entry.payload_size
    if start + stored > reader.size:
        raise InputError(path, "entry payload lies past the end of the file", offset=start,
                         member=member)
    if entry.obfuscated:
        raise InputError(path, f"the {entry.kind} payload is obfuscated (flag 0x10000); wheeldoc "
                         "does not decode it", offset=entry.offset + 0x28, member=member)
    if entry.compression is None:
        if stored > max_size:
            raise LimitExceeded(path, f"image of {stored} bytes exceeds the {max_size}-byte limit",
                                offset=entry.offset, member=member)
        return reader.read(start, stored)
    want = entry.decompressed_size or 0
    if want <= 0:
        raise InputError(path, "compressed entry declares a decompressed size of 0",
                         offset=entry.offset + 0x38, member=member)
    if want > max_size:
        raise LimitExceeded(path, f"entry declares a {want}-byte image (limit {max_size})",
                            offset=entry.offset + 0x38, member=member)
    data = reader.read(start, entry.compressed_size or 0)
    codec = {"zstd": "zstandard", "lz4": "lz4.block"}.get(entry.compression or "")
    if codec is not None:  # before the try below: a missing codec is not a corrupt entry
        from wheeldoc.core.optional import require

        require(codec, f"decompressing a {entry.compression}-compressed {entry.kind} entry", path=path,
                extra="kernels", offset=entry.payload_offset, member=member)
    try:
        if entry.compression == "zstd":
            import zstandard

            declared = zstandard.frame_content_size(data)
            if declared > want:
                raise ValueError(f"zstd frame declares {declared} bytes, header {want}")
            out = zstandard.ZstdDecompressor().decompress(data, max_output_size=want)
        elif entry.compression == "lz4":
            import lz4.block

            out = lz4.block.decompress(data, uncompressed_size=want)
        else:
            raise ValueError(f"unsupported compression flags {entry.flags:#x}")
    except Exception as exc:  # zstd.ZstdError, lz4's LZ4BlockError, ValueError
        raise InputError(path, f"cannot decompress {entry.compression} entry: {exc}",
                         offset=entry.payload_offset, member=member) from None
    if len(out) != want:
        raise InputError(path, f"decompressed {len(out)} bytes, header declares {want}",
                         offset=entry.offset + 0x38, member=member)
    return out


def entry_cubin_info(source: Buffer | str | os.PathLike, entry: FatbinEntry,
                     path: str | None = None, *, member: str | None = None) -> CubinInfo:
    """Toolkit, ABI and e_flags of a cubin entry (decompresses it when stored compressed)."""
    if entry.kind != "cubin":
        raise ValueError(f"entry {entry.index} is {entry.kind}, not a cubin")
    if path is None:
        path = os.fspath(source) if isinstance(source, (str, os.PathLike)) else "<buffer>"
    image = entry_image(source, entry, path, member=member)
    return read_cubin(image, path, member=member, offset=entry.payload_offset)


def container_bytes(source: Buffer | str | os.PathLike, container: FatbinContainer) -> bytes:
    """The raw bytes of one container (header + entries), e.g. for cuModuleLoadData."""
    if isinstance(source, (str, os.PathLike)):
        with open_regular(source) as fh:
            fh.seek(container.offset)
            return fh.read(container.end - container.offset)
    return bytes(source[container.offset:container.end])


# -- cuobjdump-style listing ------------------------------------------------------------


def listing(fatbin: Fatbin, name: str | None = None) -> list[str]:
    """The lines `cuobjdump -lelf -lptx FILE` prints, built from headers only.

    cuobjdump numbers ELF and PTX entries separately in file order and names them
    `<stem>.<n>.<arch>.<cubin|ptx>`, the stem being the file name less its last extension. An
    entry with an identifier is named `<identifier stem>.<arch>.<ext>` instead (no number), and
    so is a standalone cubin. One known difference: cuobjdump names an `f` cubin after its ELF,
    which cannot record `f` (`sm_120` where the header says `sm_120f`); this listing keeps the
    header's `sm_120f`. cuobjdump lists nothing for PTX text files and LTO-IR entries.
    """
    lister = Lister(_stem(name if name is not None else (fatbin.member or fatbin.path)))
    for c in fatbin.containers:
        lister(c)
    return lister.lines(fatbin.format)


class Lister:
    """`listing`, container by container: call it on each container (it can be the `sink` of
    `open_fatbin`), then take `lines(format)`. Also says whether any entry is code cuobjdump
    lists (`has_code`) and which identifiers the lines name (`identifiers`)."""

    __slots__ = ("stem", "out", "n_elf", "n_ptx", "first", "identifiers")

    def __init__(self, stem: str) -> None:
        self.stem = stem  # the name's stem (`Lister.of(name)`)
        self.out: list[str] = []
        self.n_elf = self.n_ptx = 0
        self.first: FatbinContainer | None = None
        self.identifiers: set[str] = set()

    def __call__(self, container: FatbinContainer) -> None:
        if self.first is None:
            self.first = container
        append, stem, n_elf, n_ptx = self.out.append, self.stem, self.n_elf, self.n_ptx
        for e in container.entries:
            kind = e.kind
            if kind == "cubin":
                n_elf += 1
                n, label, ext = n_elf, "ELF", "cubin"
            elif kind == "ptx":
                n_ptx += 1
                n, label, ext = n_ptx, "PTX", "ptx"
            else:
                continue
            ident = e.identifier
            if ident:
                self.identifiers.add(ident)
                base = f"{_stem(ident)}."
            else:
                base = f"{stem}.{n}."
            append(f"{label} file {n:4d}: {base}sm_{e.sm}{e.suffix}.{ext}")  # e.arch
        self.n_elf, self.n_ptx = n_elf, n_ptx

    @classmethod
    def of(cls, name: str) -> Lister:
        """The lister of a file or member named `name` (its stem names the entries)."""
        return cls(_stem(name))

    @property
    def has_code(self) -> bool:
        return bool(self.n_elf or self.n_ptx)

    def lines(self, format: str) -> list[str]:
        """cuobjdump lists nothing for a PTX file, and names a standalone cubin by its stem."""
        if format == "ptx":
            return []
        if format == "cubin" and self.first is not None:
            return [f"ELF file    1: {self.stem}.{self.first.entries[0].arch}.cubin"]
        return self.out


def _stem(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    return base[:base.rfind(".")] if "." in base else base


def listing_text(blocks: list[tuple[str, list[str]]]) -> str:
    """cuobjdump's lines; with several libraries, each block under a `# library` line."""
    if len(blocks) == 1:
        return "\n".join(blocks[0][1]) + "\n" if blocks[0][1] else ""
    out = []
    for i, (name, lines) in enumerate(blocks):
        out.append(("\n" if i else "") + f"# {name}\n")
        out.extend(line + "\n" for line in lines)
    return "".join(out)
