"""The listing of one usual file, read straight into its lines: `kernels --list` on the short path.

`kernels --list` races `cuobjdump -lelf -lptx` (bench/bench_kernels.py); on cuBLASLt (2,638
containers, 5,666 entries) most of its time went to the walk of kernels/fatbin.py building a
record per entry that the listing then took apart again, and to importing the readers that
walk needs (fatbin, cubin, ELF records: `collections` and a namedtuple class each). Here one
loop turns each entry header straight into its line (JSON record or cuobjdump line), with
only `os` and `struct`.

It takes only the usual file: a host ELF (64-bit, little-endian) with a `.nv_fatbin` or
`__nv_relfatbin` section, or a bare fatbin, whose containers lie back to back and hold code.
Everything fatbin.py would report or read differently (a checked offset or size that does not
hold, a concatenated entry, zero padding between containers, a `.nv.compat` copy fatbin.py
refuses, a standalone cubin or PTX file, no GPU code, an unreadable file) makes `scan`
return None, and the caller reads the file through fatbin.py, which reports it. So every check
of `fatbin._walk_all` is made here too, and on a file both read, the lines are the same
(tests/kernels/test_listwalk.py holds them equal on every fixture and on broken copies).
"""

from __future__ import annotations

import os
import struct

from wheeldoc.core.files import open_fd

# The fatbin layout, defined here and imported by kernels/fatbin.py, so that this module imports
# no reader.
FATBIN_MAGIC = 0xBA55ED50
CONTAINER = struct.Struct("<IHHQ")  # magic, version, header_size, fat_size
ENTRY = struct.Struct("<HHIQIIHHIIIQQQ")  # the fixed 64-byte part of an entry header
OPTS_DESC = struct.Struct("<II")
KINDS = {1: "ptx", 2: "cubin", 8: "lto-ir", 0x100: "concat"}
KIND_CONCAT = 0x100
FLAG_LZ4 = 0x2000
FLAG_ZSTD = 0x8000
FLAG_ARCH_SPECIFIC = 0x100000  # `a`
FLAG_FAMILY = 0x200000  # `f`
MAX_ENTRY_HEADER = 1 << 16  # largest header seen is 120 bytes
MAX_ENTRIES = 1 << 16  # entries per file (cuBLAS, the largest measured, has 5,737); checked per entry
HEAD_READ = 128  # bytes read per entry header (headers seen: 64..120)
CONTAINER_READ = CONTAINER.size + HEAD_READ  # bytes read where a container starts
READ_AHEAD = 4096

ELF_MAGIC = b"\x7fELF"
EM_CUDA = 190
SHT_NOBITS = 8
MAX_SECTIONS = 1 << 16
SECTION = struct.Struct("<IIQQQQIIQQ")  # ELF64 section header
SECTIONS = (b".nv_fatbin", b"__nv_relfatbin")  # the first present is read, as cuobjdump does


class Scan:
    """One file's listing: what `command_list` prints of it. In JSON mode `lines` are the
    entries' records, `ids` the encoded identifiers and `mids` the records' middle parts (what
    `command_list._Records` holds); in text mode `lines` are cuobjdump's lines and
    `identifiers` what the lines name (what `fatbin.Lister` holds)."""

    __slots__ = ("format", "section", "lines", "ids", "mids", "identifiers", "containers",
                 "count", "few", "has_code")

    def __init__(self, format: str, section: str | None) -> None:
        self.format, self.section = format, section
        self.lines: list[str] = []
        self.ids: dict = {}
        self.mids: dict = {}
        self.identifiers: set[str] = set()
        self.containers = self.count = 0
        self.few = None  # (the records are rendered: no entry is kept)
        self.has_code = False

    def lines_of(self, format: str) -> list[str]:  # as Lister.lines (only "elf" and "fatbin" here)
        return self.lines


def scan(path: str, lib: str | None) -> Scan | None:
    """The listing of the file at `path`: JSON records when `lib` is given (the encoded path,
    as `command_list._Records` writes it), else cuobjdump's lines; None when the file is not
    the usual one (see the module docstring)."""
    try:
        fd = open_fd(path)
    except OSError:
        return None
    try:
        return _scan(fd, path, lib)
    except OSError:
        return None
    finally:
        os.close(fd)


def _scan(fd: int, path: str, lib: str | None) -> Scan | None:
    size = os.fstat(fd).st_size
    head = os.pread(fd, 64, 0)
    if size == 0 or len(head) < 4:
        return None
    if struct.unpack_from("<I", head)[0] == FATBIN_MAGIC:
        scan = Scan("fatbin", None)
        start, end = 0, size
    else:
        found = _elf_section(fd, head, size)
        if found is None:
            return None
        name, start, end = found
        scan = Scan("elf", name)
    if lib is None:
        ok = _walk_text(fd, start, end, scan, path)
    else:
        ok = _walk_json(fd, start, end, scan, lib)
    return scan if ok and scan.has_code else None


def _elf_section(fd: int, head: bytes, size: int):
    """(name, start, end) of the fatbin section `fatbin._host_elf` reads, as `ElfFile` finds
    it, for a 64-bit little-endian host ELF whose headers all hold; else None."""
    if len(head) < 64 or head[:4] != ELF_MAGIC or head[4] != 2 or head[5] != 1:
        return None  # not ELF, 32-bit or big-endian: fatbin.py
    if struct.unpack_from("<H", head, 18)[0] == EM_CUDA:
        return None  # a standalone cubin
    shoff, = struct.unpack_from("<Q", head, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 58)
    if (shoff == 0 or shentsize != SECTION.size or shnum == 0 or shnum > MAX_SECTIONS
            or shstrndx == 0xFFFF or not 0 < shstrndx < shnum
            or shoff + shnum * SECTION.size > size):
        return None
    table = os.pread(fd, shnum * SECTION.size, shoff)
    if len(table) != shnum * SECTION.size:
        return None
    raw = list(SECTION.iter_unpack(table))
    strtab = raw[shstrndx]
    if strtab[1] == SHT_NOBITS or strtab[4] + strtab[5] > size:
        return None
    names = os.pread(fd, strtab[5], strtab[4])
    if len(names) != strtab[5]:
        return None
    # ElfFile refuses names longer than 4x the table + 64 KiB in all (counted decoded, which is
    # never longer than the bytes): those files go to it
    left = 4 * len(names) + (1 << 16)
    if names and not names.endswith(b"\0"):
        names += b"\0"
    first: dict[bytes, tuple] = {}  # the first section of a name, as ElfFile.section gives it
    for s in raw:
        at = s[0]
        name = b"" if at >= len(names) else names[at:names.find(b"\0", at)]
        left -= len(name) + 1
        if name not in first:
            first[name] = s
    if left < 0:
        return None
    for want in SECTIONS:
        s = first.get(want)
        if s is not None:
            _, typ, _, _, off, length = s[:6]
            if typ == SHT_NOBITS or length == 0 or off + length > size:
                return None
            return want.decode(), off, off + length
    return None


def _walk_text(fd: int, start: int, end: int, scan: Scan, path: str) -> bool:
    """cuobjdump's lines (`fatbin.Lister`) of the containers in [start, end); False where
    `fatbin._walk_all` would read or report anything differently."""
    base = path.rsplit("/", 1)[-1]
    stem = base[:base.rfind(".")] if "." in base else base  # fatbin._stem
    tails: dict = {}  # (kind code, sm, flags) -> (0 ELF / 1 PTX / None, "sm_90a.cubin")
    bases: dict = {}  # raw identifier -> "its stem." ("" for an empty one)
    lines, identifiers = scan.lines, scan.identifiers
    append = lines.append
    n_elf = n_ptx = 0
    for entry in _entries(fd, start, end, scan):
        if entry is None:
            return False
        if type(entry) is int:  # a new container
            continue
        kind_code, sm, flags, _major, _minor, _size, _index, raw = entry
        tail = tails.get((kind_code, sm, flags))
        if tail is None:
            kind = KINDS.get(kind_code, "other")
            suffix = "a" if flags & FLAG_ARCH_SPECIFIC else "f" if flags & FLAG_FAMILY else ""
            tail = tails[kind_code, sm, flags] = (
                0 if kind == "cubin" else 1 if kind == "ptx" else None,
                f"sm_{sm}{suffix}.{kind}")
        which = tail[0]
        if which is None:
            continue
        if which == 0:
            n_elf += 1
            n, label = n_elf, "ELF"
        else:
            n_ptx += 1
            n, label = n_ptx, "PTX"
        if raw is None:
            prefix = f"{stem}.{n}."
        else:
            prefix = bases.get(raw)
            if prefix is None:
                ident = raw.decode("utf-8", "replace")
                if ident:
                    identifiers.add(ident)
                    b = ident.rsplit("/", 1)[-1]
                    prefix = (b[:b.rfind(".")] if "." in b else b) + "."
                else:
                    prefix = ""
                bases[raw] = prefix
            if not prefix:
                prefix = f"{stem}.{n}."
        append(f"{label} file {n:4d}: {prefix}{tail[1]}")
    return True


def _walk_json(fd: int, start: int, end: int, scan: Scan, lib: str) -> bool:
    """The entries' JSON records (`command_list._Records`) of the containers in [start, end);
    False where `fatbin._walk_all` would read or report anything differently."""
    from wheeldoc.render.jsontext import encode_string

    mids, ids = scan.mids, scan.ids  # ids: raw identifier -> encoded (as _Records, by text)
    append = scan.lines.append
    head = f'{{"library": {lib}, "container": '
    cindex = -1
    prefix = ""
    for entry in _entries(fd, start, end, scan):
        if entry is None:
            return False
        if type(entry) is int:  # a new container
            cindex = entry
            prefix = f'{head}{cindex}, "index": '
            continue
        kind_code, sm, flags, major, minor, size, index, raw = entry
        key = (kind_code, sm, flags, major, minor)
        mid = mids.get(key)
        if mid is None:
            kind = KINDS.get(kind_code, "other")
            suffix = "a" if flags & FLAG_ARCH_SPECIFIC else "f" if flags & FLAG_FAMILY else ""
            isa = f'"{major}.{minor}"' if kind == "ptx" else "null"
            codec = ("null" if not flags & (FLAG_ZSTD | FLAG_LZ4 | 0x1000) else '"zstd"'
                     if flags & FLAG_ZSTD else '"lz4"' if flags & FLAG_LZ4 else '"unknown"')
            mid = mids[key] = (f', "kind": "{kind}", "arch": "sm_{sm}{suffix}", "ptx_isa": {isa}, '
                               f'"compression": {codec}, "size": ')
        if raw is None:
            append(f'{prefix}{index}{mid}{size}, "identifier": null, "concat": false}}')
            continue
        ident = ids.get(raw)
        if ident is None:
            ident = ids[raw] = encode_string(raw.decode("utf-8", "replace"))
        append(f'{prefix}{index}{mid}{size}, "identifier": {ident}, "concat": false}}')
    return True


def _entries(fd: int, start: int, end: int, scan: Scan):
    """Each container's index as it starts, then each of its entries as (kind code, sm, flags,
    PTX major, minor, size, index, raw identifier or None); a None (and no more) where
    `fatbin._walk_all` would raise, or read something this listing does not (see the module
    docstring). Counts the entries and the containers holding code into `scan`.

    The reads and checks are `_walk_all`'s, in its order: bytes come `READ_AHEAD` at a time
    from `os.pread`, and a header is read in place when the last bytes read hold it."""
    pread, cunpack, eunpack, oparse = os.pread, CONTAINER.unpack_from, ENTRY.unpack_from, \
        OPTS_DESC.unpack_from
    esize, head_read, concat = ENTRY.size, HEAD_READ, KIND_CONCAT
    compressed = FLAG_ZSTD | FLAG_LZ4 | 0x1000
    cindex = index = 0
    wbase = wend = 0
    win = b""
    pos = start
    while pos < end:
        left = end - pos
        want = CONTAINER_READ if left > CONTAINER_READ else left
        if not (wbase <= pos and pos + want <= wend):
            win = pread(fd, want if want > READ_AHEAD else READ_AHEAD, pos)
            wbase, wend = pos, pos + len(win)
        b = pos - wbase
        if want < CONTAINER.size or wend - pos < CONTAINER.size:
            if not any(win[b:b + want]):
                break  # trailing padding
            yield None
            return
        magic, _version, hsize, fat_size = cunpack(win, b)
        if magic != FATBIN_MAGIC or hsize < CONTAINER.size or hsize > left:
            yield None  # (zero padding between containers included: fatbin.py skips it)
            return
        cend = pos + hsize + fat_size
        if cend > end:
            yield None
            return
        yield cindex
        code = False
        pos += hsize
        while pos < cend:
            left = cend - pos
            if pos + head_read > wend:
                want = head_read if left > head_read else left
                if pos + want > wend:
                    win = pread(fd, want if want > READ_AHEAD else READ_AHEAD, pos)
                    wbase, wend = pos, pos + len(win)
                if wend - pos < esize:
                    left = 0
            if left < esize:
                yield None
                return
            b = pos - wbase
            (kind_code, _ever, ehsize, psize, csize, opts_off, minor, major, sm, ident_off,
             ident_len, flags, _key, dsize) = eunpack(win, b)
            if ehsize < esize or ehsize > left or ehsize > MAX_ENTRY_HEADER or psize > left - ehsize:
                yield None
                return
            if pos + ehsize > wend:
                win = pread(fd, ehsize if ehsize > READ_AHEAD else READ_AHEAD, pos)
                wbase, wend, b = pos, pos + len(win), 0
            if flags & compressed:
                if csize == 0 or csize > psize:
                    yield None
                    return
                size = dsize
            else:
                size = psize
            raw = None
            if ident_off:
                if ident_off < esize or ident_off + ident_len > ehsize:
                    yield None
                    return
                raw = win[b + ident_off:b + ident_off + ident_len].split(b"\0", 1)[0]
            if kind_code == concat:
                yield None
                return
            if opts_off:
                if opts_off < esize or opts_off + 8 > ehsize:
                    yield None
                    return
                boff, blen = oparse(win, b + opts_off)
                if boff or blen:
                    if boff < esize or boff + blen > ehsize:
                        yield None
                        return
                    at = b + boff
                    if kind_code == 2 and blen and win[at] == 0 and not (
                            blen >= 3 and ehsize - boff >= 4 and win[at + 1] == 2
                            and win[at + 2] == 9) and not _compat_ok(
                            win[at + 1:b + min(ehsize, boff + 1 + blen)]):
                        yield None  # a `.nv.compat` copy fatbin.py refuses
                        return
            if kind_code == 1 or kind_code == 2:
                code = True
            yield kind_code, sm, flags, major, minor, size, index, raw
            index += 1
            pos += ehsize + psize
            if index > MAX_ENTRIES:
                yield None
                return
        if code:
            scan.containers += 1
        cindex += 1
    scan.count = index
    scan.has_code = scan.containers > 0


def _compat_ok(blob: bytes) -> bool:
    """Whether `cubin.parse_compat` reads this `.nv.compat` copy (a cubin's options blob whose
    first record is not the usual accelerator bit) without raising; a listing needs no record."""
    pos, end = 0, len(blob)
    while pos + 4 <= end:
        fmt = blob[pos]
        if fmt == 1 or fmt == 2 or fmt == 3:
            pos += 4
        elif fmt == 4:
            size = blob[pos + 2] | blob[pos + 3] << 8
            if pos + 4 + size > end:
                return False
            pos += 4 + ((size + 3) & ~3)
        elif fmt == 0 and not any(blob[pos:]):
            break
        else:
            return False
    return True
