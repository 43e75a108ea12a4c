"""Dynamic linking facts of one ELF file: needed libraries, search paths, dynamic symbols, versions.

A fast reader on top of `ElfFile`: the symbol table is read column-wise (`array` slices and
`bytes.translate`), never one Python object per field, so the 75k exported symbols of
`libtorch_cpu.so` come out faster than `nm -D --defined-only` prints them. Tables are found
through the section headers (SHT_DYNSYM, SHT_DYNAMIC, SHT_GNU_*) and, when those are
stripped, through PT_DYNAMIC and its DT_* addresses. Every offset and count is checked
against the buffer: a truncated or hostile file raises `InputError` with the offset.

`read_elf_member` reads big deflated wheel members while they inflate (`read_elf_stream`),
keeping only the ranges the dynamic tables can lie in, and caches the facts by the member's
RECORD sha256 once the whole member has been checked against it.
"""

from __future__ import annotations

import array
import base64
import hashlib
import mmap
import os
import struct
import sys
import threading
from dataclasses import dataclass
from functools import cached_property
from itertools import compress
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.binary.elffile import Buffer, ElfFile, Section, Segment
from wheeldoc.core.files import open_regular

if TYPE_CHECKING:
    from wheeldoc.core.cache import Cache
    from wheeldoc.binary.members import MemberSource

# Bump when the meaning or layout of `ElfInfo.to_json()` changes (cache keys include it).
PARSER_VERSION = "elf-1"

MAX_VERSION_ENTRIES = 1 << 15
MAX_SYMBOLS = 4_000_000  # libtorch_cuda.so holds ~100k; beyond this a file is hostile
# Names read out of the dynamic string table (symbols, DT_NEEDED/SONAME/RPATH/RUNPATH, version
# names), in bytes, at most NAME_BUDGET_FACTOR x the table's size + NAME_BUDGET_FLOOR: an honest
# table names each string about once, a hostile one points many entries at one long string.
NAME_BUDGET_FACTOR = 4
NAME_BUDGET_FLOOR = 1 << 20
STREAM_MIN = 4 << 20  # deflated wheel members at least this big are read as they inflate
STREAM_HEAD = 64 << 10  # bytes always kept from the start of a streamed file
STREAM_CAP = 128 << 20  # the most bytes kept for any one range of a streamed file

# Section types, dynamic tags, special section indices.
SHT_DYNAMIC, SHT_DYNSYM = 6, 11
SHT_GNU_VERDEF, SHT_GNU_VERNEED, SHT_GNU_VERSYM = 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF
DT_NULL, DT_NEEDED, DT_HASH, DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_SYMENT = 0, 1, 4, 5, 6, 10, 11
DT_SONAME, DT_RPATH, DT_RUNPATH = 14, 15, 29
DT_GNU_HASH, DT_VERSYM = 0x6FFFFEF5, 0x6FFFFFF0
DT_VERDEF, DT_VERDEFNUM, DT_VERNEED, DT_VERNEEDNUM = 0x6FFFFFFC, 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF
SHN_UNDEF = 0
VER_FLG_BASE, VER_FLG_WEAK = 1, 2
VERSYM_HIDDEN = 0x8000

BINDINGS = {0: "LOCAL", 1: "GLOBAL", 2: "WEAK", 10: "GNU_UNIQUE"}
TYPES = {0: "NOTYPE", 1: "OBJECT", 2: "FUNC", 3: "SECTION", 4: "FILE", 5: "COMMON", 6: "TLS", 10: "IFUNC"}
VISIBILITIES = ("DEFAULT", "INTERNAL", "HIDDEN", "PROTECTED")
MACHINES = {3: "i386", 8: "mips", 20: "ppc", 21: "ppc64", 22: "s390", 40: "arm", 62: "x86_64",
            183: "aarch64", 243: "riscv", 258: "loongarch"}
FILE_TYPES = {1: "REL", 2: "EXEC", 3: "DYN", 4: "CORE"}

# 0/1 lookup tables for `bytes.translate`: exported binding (GLOBAL, WEAK, GNU_UNIQUE) and
# exported visibility (DEFAULT, PROTECTED).
_EXPORT_BIND = bytes(1 if (i >> 4) in (1, 2, 10) else 0 for i in range(256))
_EXPORT_VIS = bytes(1 if (i & 3) in (0, 3) else 0 for i in range(256))
_NONZERO = bytes([0] + [1] * 255)
_ABOVE_ONE = bytes([0, 0] + [1] * 254)
_FLIP = bytes([1, 0] + [0] * 254)


@dataclass(frozen=True)
class SymbolVersion:
    """A symbol's version: `GLIBC_2.34` (required from `libc.so.6`) or `LIBX_2.0` (defined)."""

    name: str
    hidden: bool = False  # a definition reachable only by explicit version (`foo@V`, not `foo@@V`)
    library: str | None = None  # for references: the file the version is required from

    def __str__(self) -> str:
        return f"{'@' if self.hidden or self.library else '@@'}{self.name}"


@dataclass(frozen=True)
class Symbol:
    """One entry of the dynamic symbol table (`.dynsym`)."""

    index: int
    name: str
    binding: str  # LOCAL, GLOBAL, WEAK, GNU_UNIQUE (others as "BIND<n>")
    type: str  # NOTYPE, OBJECT, FUNC, TLS, IFUNC, ...
    visibility: str  # DEFAULT, INTERNAL, HIDDEN, PROTECTED
    defined: bool
    version: SymbolVersion | None  # None: unversioned (or the base version)

    @property
    def exported(self) -> bool:
        """Visible to other objects: defined, non-local binding, default or protected visibility."""
        return (self.defined and self.binding in ("GLOBAL", "WEAK", "GNU_UNIQUE")
                and self.visibility in ("DEFAULT", "PROTECTED"))

    @property
    def weak(self) -> bool:
        return self.binding == "WEAK"

    def __str__(self) -> str:
        return self.name + (str(self.version) if self.version else "")


@dataclass(frozen=True)
class VersionDefinition:
    """An entry of `.gnu.version_d`: a version this library defines."""

    index: int
    name: str
    flags: int
    parents: tuple[str, ...] = ()

    @property
    def is_base(self) -> bool:
        """The base entry names the file itself (its soname); it is not a symbol version."""
        return bool(self.flags & VER_FLG_BASE)


@dataclass(frozen=True)
class VersionRequirement:
    """An entry of `.gnu.version_r`: version `name` required from the file `library`."""

    library: str
    name: str
    index: int
    flags: int

    @property
    def weak(self) -> bool:
        return bool(self.flags & VER_FLG_WEAK)


@dataclass(frozen=True)
class SymbolTable:
    """The dynamic symbol table, stored column-wise (one entry per `.dynsym` slot, 0 included).

    `info`/`other` hold st_info/st_other bytes; `shndx` and `versym` hold little-endian
    uint16 values (`versym` is empty when the file has no `.gnu.version`). Iterate or index
    to get `Symbol` objects; use `exported_names()` / `exports()` for the fast paths.
    """

    names: tuple[str, ...]
    info: bytes
    other: bytes
    shndx: bytes
    versym: bytes
    versions: tuple[tuple[int, str, str | None], ...]  # (index, version name, required-from file)

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, i: int) -> Symbol:
        if not 0 <= i < len(self.names):
            raise IndexError(i)
        info, shndx = self.info[i], int.from_bytes(self.shndx[2 * i: 2 * i + 2], "little")
        return Symbol(i, self.names[i], BINDINGS.get(info >> 4, f"BIND{info >> 4}"),
                      TYPES.get(info & 15, f"TYPE{info & 15}"), VISIBILITIES[self.other[i] & 3],
                      shndx != SHN_UNDEF, self._version(i))

    def __iter__(self) -> Iterator[Symbol]:
        """Every symbol but the null entry 0."""
        return (self[i] for i in range(1, len(self.names)))

    def defined(self) -> tuple[Symbol, ...]:
        return self._select(self._defined_mask())

    def undefined(self) -> tuple[Symbol, ...]:
        """The references this object needs resolved elsewhere (weak ones included)."""
        return self._undefined

    @cached_property
    def _undefined(self) -> tuple[Symbol, ...]:  # asked once per torch release in range mode
        return self._select(self._defined_mask().translate(_FLIP))

    def exported_names(self) -> frozenset[str]:
        """Names other objects can bind to (what `nm -D --defined-only` lists, less locals)."""
        return frozenset(compress(self.names, self._export_mask()))

    def exports(self) -> dict[str, tuple[SymbolVersion | None, ...]]:
        """Exported name -> the versions it is defined under (None: unversioned)."""
        mask = self._export_mask()
        if not self.versym or not self.versions:
            return dict.fromkeys(compress(self.names, mask), (None,))
        # versym index > 1 (or the hidden bit): a real version; the rest go in one C-level pass.
        versioned = _or(self.versym[0::2].translate(_ABOVE_ONE), self.versym[1::2].translate(_NONZERO))
        out: dict[str, tuple[SymbolVersion | None, ...]] = dict.fromkeys(
            compress(self.names, _and(mask, versioned.translate(_FLIP))), (None,))
        version = self._version
        for i in compress(range(len(self.names)), _and(mask, versioned)):
            name = self.names[i]
            out[name] = (out[name] if name in out else ()) + (version(i),)
        return out

    # -- internals -----------------------------------------------------------
    @cached_property
    def _version_map(self) -> dict[int, tuple[str, str | None]]:
        return {index: (name, library) for index, name, library in self.versions}

    def _version(self, i: int) -> SymbolVersion | None:
        if not self.versym:
            return None
        raw = int.from_bytes(self.versym[2 * i: 2 * i + 2], "little")
        entry = self._version_map.get(raw & 0x7FFF)
        if entry is None or (raw & 0x7FFF) < 2 and entry[1] is None:
            return None  # 0 = local, 1 = global/base: unversioned
        return SymbolVersion(entry[0], bool(raw & VERSYM_HIDDEN), entry[1])

    def _select(self, mask: bytes) -> tuple[Symbol, ...]:
        return tuple(self[i] for i in compress(range(1, len(self.names)), mask[1:]))

    def _defined_mask(self) -> bytes:
        lo, hi = self.shndx[0::2].translate(_NONZERO), self.shndx[1::2].translate(_NONZERO)
        return _or(lo, hi)

    def _export_mask(self) -> bytes:
        mask = _and(_and(self.info.translate(_EXPORT_BIND), self.other.translate(_EXPORT_VIS)),
                    self._defined_mask())
        return b"\0" + mask[1:] if mask else mask

    # -- serialization -------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        b64 = base64.b64encode
        return {"names": list(self.names), "info": b64(self.info).decode(),
                "other": b64(self.other).decode(), "shndx": b64(self.shndx).decode(),
                "versym": b64(self.versym).decode(), "versions": [list(v) for v in self.versions]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SymbolTable:
        b64 = base64.b64decode
        return cls(tuple(data["names"]), b64(data["info"]), b64(data["other"]), b64(data["shndx"]),
                   b64(data["versym"]), tuple((int(i), n, f) for i, n, f in data["versions"]))


@dataclass(frozen=True)
class ElfInfo:
    """What the dynamic loader needs from one ELF file."""

    path: str
    member: str | None
    machine: str  # x86_64, aarch64, ... ("EM<n>" when unknown)
    elf_class: int  # 32 or 64
    little_endian: bool
    file_type: str  # DYN, EXEC, REL, ...
    soname: str | None
    needed: tuple[str, ...]
    rpath: tuple[str, ...]  # DT_RPATH entries, `$ORIGIN` kept
    runpath: tuple[str, ...]  # DT_RUNPATH entries, `$ORIGIN` kept
    version_definitions: tuple[VersionDefinition, ...]
    version_requirements: tuple[VersionRequirement, ...]
    symbols: SymbolTable
    tables_from: str  # "sections", "segments" (section headers stripped) or "none" (static)

    @property
    def defined_versions(self) -> tuple[str, ...]:
        """The symbol versions this library defines (the base entry, its own name, left out)."""
        return tuple(v.name for v in self.version_definitions if not v.is_base)

    def to_json(self) -> dict[str, Any]:
        return {
            "parser": PARSER_VERSION, "path": self.path, "member": self.member,
            "machine": self.machine, "elf_class": self.elf_class,
            "little_endian": self.little_endian, "file_type": self.file_type,
            "soname": self.soname, "needed": list(self.needed), "rpath": list(self.rpath),
            "runpath": list(self.runpath),
            "version_definitions": [[v.index, v.name, v.flags, list(v.parents)]
                                    for v in self.version_definitions],
            "version_requirements": [[v.library, v.name, v.index, v.flags]
                                     for v in self.version_requirements],
            "symbols": self.symbols.to_json(), "tables_from": self.tables_from,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, path: str | None = None,
                  member: str | None = None) -> ElfInfo:
        if data.get("parser") != PARSER_VERSION:
            raise ValueError(f"cached ELF facts from parser {data.get('parser')!r}")
        return cls(
            path if path is not None else data["path"],
            member if member is not None else data["member"],
            data["machine"], data["elf_class"], data["little_endian"], data["file_type"],
            data["soname"], tuple(data["needed"]), tuple(data["rpath"]), tuple(data["runpath"]),
            tuple(VersionDefinition(i, n, f, tuple(p)) for i, n, f, p in data["version_definitions"]),
            tuple(VersionRequirement(lib, n, i, f) for lib, n, i, f in data["version_requirements"]),
            SymbolTable.from_json(data["symbols"]), data["tables_from"],
        )


# -- entry points --------------------------------------------------------------
def read_elf(buf: Buffer, path: str = "<buffer>", *, member: str | None = None) -> ElfInfo:
    """Read the dynamic-linking facts of the ELF image in `buf` (bytes, mmap, memoryview)."""
    return _Reader(ElfFile(buf, path, member)).read()


def read_elf_path(path: str | os.PathLike[str]) -> ElfInfo:
    """`read_elf` on a file, through a read-only mmap."""
    path = os.fspath(path)
    try:
        with open_regular(path) as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                raise InputError(path, "empty file: not an ELF file", offset=0)
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
                return read_elf(m, path)
    except OSError as e:
        raise InputError(path, f"cannot read: {e.strerror or e}") from None


def read_elf_member(source: MemberSource, name: str, *, cache: Cache | None = None) -> ElfInfo:
    """`read_elf` on one member of a wheel, directory or installed distribution.

    With a cache, facts are looked up by the RECORD sha256 (a warm run neither inflates nor
    hashes the member) and stored after an inflation that verified that digest; a large
    deflated member of a wheel is read as it inflates, up to its dynamic tables only, and its
    facts are keyed on the sha256 of its stored bytes; members read in place (stored, or on
    disk) are cheap to parse again and are not stored.
    """
    known = source.member(name)
    if known is None:
        raise InputError(source.path, "no such member", member=name)
    kept = getattr(source, "elf_facts", None)  # a source that keeps ELF facts, not bytes (the torch index)
    if kept is not None:
        info = kept(name)
        if info is not None:
            return info
    if cache is not None and known.sha256:
        info = _cached(cache, "elf", known.sha256, source.path, name)
        if info is not None:
            return info
    stream = getattr(source, "stream", None)
    stored = getattr(source, "stored_sha256", None)
    if stream is not None and stored is not None and known.compression == "deflated" and known.size >= STREAM_MIN:
        # Keyed on the stored (deflated) bytes: inflation stops once the dynamic tables are
        # parsed, and nothing inflated is hashed. A member read before (its hint: sizes and RECORD
        # digest, pointing at the key it had) is hashed first and, when the key matches, comes
        # from the cache; otherwise the stored bytes are hashed on a thread while the member
        # inflates, and a cached entry found once the key is known ends the inflation.
        hint = _hint(known) if cache is not None else None
        if hint is not None and isinstance(hinted := cache.get("elf-hint", hint, PARSER_VERSION), str):
            key = stored(name)
            info = _cached(cache, "elf-deflated", key, source.path, name) if key == hinted else None
            if info is not None:
                return info
        keyed = _StoredKey(stored, name, cache, source.path) if cache is not None else None
        try:
            with stream(name, check=False) as pieces:
                try:
                    info = read_elf_stream(keyed.watch(pieces) if keyed else pieces, known.size,
                                           source.path, member=name)
                except InputError:
                    info = None  # judged below on the whole file (its section headers may be fine)
        except _Known as hit:
            return hit.info
        key = keyed.key() if keyed is not None else None
        if info is not None:
            if key is not None:
                cache.put("elf-deflated", key, PARSER_VERSION, info.to_json())
                cache.put("elf-hint", hint, PARSER_VERSION, key)
            return info
    with source.open(name) as data:
        info = read_elf(data.buf, source.path, member=name)
        if cache is not None and data.sha256 is not None:  # digest checked while inflating
            cache.put("elf", data.sha256, PARSER_VERSION, info.to_json())
    return info


def was_read(cache: Cache, member: Any) -> bool:
    """Whether a member with these sizes and RECORD digest was read before (its stored bytes
    are then hashed first, and the facts most likely come from the cache)."""
    return cache.get("elf-hint", _hint(member), PARSER_VERSION) is not None


def _hint(member: Any) -> str:
    """A cheap name for a member's content (its sizes and RECORD digest): it only points at the
    stored-bytes key to check first; a member that claims them falsely hashes to another key."""
    text = f"{member.size}:{member.compressed_size}:{member.sha256 or ''}"
    return hashlib.sha256(text.encode()).hexdigest()


class _Known(Exception):
    """The member's facts were in the cache after all (raised through the inflation)."""

    def __init__(self, info: ElfInfo) -> None:
        super().__init__()
        self.info = info


class _StoredKey:
    """The sha256 of a member's stored bytes, hashed on a thread (hashlib and the reads release
    the GIL) while the member inflates; `watch` looks the key up in the cache as soon as it is
    known and raises `_Known` on a hit."""

    def __init__(self, stored: Callable[[str], str], name: str, cache: Cache, path: str) -> None:
        self.cache, self.path, self.name = cache, path, name
        self._key: str | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._hash, args=(stored,), name="wheeldoc-key", daemon=True)
        self._thread.start()

    def _hash(self, stored: Callable[[str], str]) -> None:
        from wheeldoc.core.priority import lower_this_thread

        lower_this_thread()  # the inflation beside it is what the answer waits for
        try:
            self._key = stored(self.name)
        except BaseException as e:  # noqa: BLE001 (re-raised by key())
            self._error = e

    def key(self) -> str:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._key is not None
        return self._key

    def watch(self, pieces: Iterable[tuple[int, Buffer]]) -> Iterator[tuple[int, Buffer]]:
        looked = False
        for piece in pieces:
            if not looked and not self._thread.is_alive():
                looked = True
                info = _cached(self.cache, "elf-deflated", self.key(), self.path, self.name)
                if info is not None:
                    raise _Known(info)
            yield piece


def _cached(cache: Cache, kind: str, key: str, path: str, member: str) -> ElfInfo | None:
    """Facts stored under `key`; an entry that no longer parses is dropped (None)."""
    hit = cache.get(kind, key, PARSER_VERSION)
    if hit is None:
        return None
    try:
        return ElfInfo.from_json(hit, path=path, member=member)
    except (KeyError, TypeError, ValueError):
        cache.discard(kind, key, PARSER_VERSION)
        return None


def read_elf_stream(pieces: Iterable[tuple[int, Buffer]], size: int, path: str = "<stream>", *,
                    member: str | None = None) -> ElfInfo | None:
    """`read_elf` on a file seen once, front to back, as `(offset, bytes)` pieces.

    Only the byte ranges the dynamic tables can lie in are kept (the head, the first
    PT_LOAD, PT_DYNAMIC, then what the DT_* entries point at), and reading stops as soon as
    the tables parse: right after PT_DYNAMIC for the usual layout, at the end of the file when
    patchelf moved the string table there. Nothing close to the file's size is held in memory.
    Returns None when a range the tables need went by before it was known to be needed; the
    caller then reads the file whole. A corrupt file raises `InputError` as `read_elf` does.
    """
    if size <= 0:
        raise InputError(path, "empty file: not an ELF file", offset=0, member=member)
    return _Streamer(size, path, member).run(pieces)


class _Missing(Exception):
    """A streamed read touched bytes that were not kept."""

    def __init__(self, offset: int, size: int) -> None:
        super().__init__(offset, size)
        self.offset, self.size = offset, size


class _SparseElf(ElfFile):
    """An ElfFile over a partly captured image: any read outside the kept ranges raises
    `_Missing`; section headers are ignored (the tables are found through PT_DYNAMIC)."""

    def __init__(self, buf: Buffer, kept: _Ranges, path: str, member: str | None) -> None:
        self.kept = kept
        super().__init__(buf, path, member)

    def check_range(self, offset: int, size: int, what: str) -> None:
        super().check_range(offset, size, what)
        if size and not self.kept.covers(offset, offset + size):
            raise _Missing(offset, size)

    def _read_sections(self) -> tuple[Section, ...]:
        return ()


class _Ranges:
    """Sorted, merged [start, end) intervals."""

    def __init__(self) -> None:
        self.spans: list[list[int]] = []

    def add(self, start: int, end: int) -> None:
        spans = [sp for sp in self.spans if sp[1] < start or sp[0] > end]
        merged = [min([start] + [sp[0] for sp in self.spans if not (sp[1] < start or sp[0] > end)]),
                  max([end] + [sp[1] for sp in self.spans if not (sp[1] < start or sp[0] > end)])]
        self.spans = sorted(spans + [merged])

    def covers(self, start: int, end: int) -> bool:
        return any(a <= start and end <= b for a, b in self.spans)


class _Streamer:
    def __init__(self, size: int, path: str, member: str | None) -> None:
        self.size, self.path, self.member = size, path, member
        self.image = mmap.mmap(-1, size)  # zero pages cost nothing until written
        self.kept = _Ranges()
        self.wants: list[tuple[int, int]] = [(0, min(size, STREAM_HEAD))]
        self.start = self.pos = 0  # the current piece spans [start, pos)
        self.stage = "head"  # -> "dynamic" (segments known) -> "tables" (DT_* entries known)

    def run(self, pieces: Iterable[tuple[int, Buffer]]) -> ElfInfo | None:
        try:
            for at, piece in pieces:
                if at != self.pos or at + len(piece) > self.size:
                    raise InputError(self.path, f"piece at {at:#x} out of order", member=self.member)
                self.start, self.pos = at, at + len(piece)
                while True:  # what one piece reveals may be wanted from that same piece
                    self._keep(piece)
                    done = self._advance()
                    if done is not None:
                        return done or None
                    if not self._keep(piece, dry=True):
                        break
                self.wants = [w for w in self.wants if w[1] > self.pos]
            self.start = self.pos
            done = self._advance(final=True)
            return done or None
        finally:
            try:
                self.image.close()
            except BufferError:
                pass

    def _keep(self, piece: Buffer, dry: bool = False) -> bool:
        """Copy the wanted parts of the current piece; with dry, only say if any is left."""
        found = False
        view = memoryview(piece)
        for lo, hi in self.wants:
            lo, hi = max(lo, self.start), min(hi, self.pos)
            if lo < hi and not self.kept.covers(lo, hi):
                found = True
                if not dry:
                    self.image[lo:hi] = view[lo - self.start: hi - self.start]
                    self.kept.add(lo, hi)
        return found

    def _want(self, start: int, size: int) -> None:
        lo, hi = max(start, self.start, 0), min(start + min(size, STREAM_CAP), self.size)
        if lo < hi and (lo, hi) not in self.wants:
            self.wants.append((lo, hi))

    def _elf(self) -> _SparseElf:
        return _SparseElf(self.image, self.kept, self.path, self.member)

    def _advance(self, final: bool = False) -> ElfInfo | bool | None:
        """A result (ElfInfo), False (give up: read whole), or None (keep streaming)."""
        try:
            if self.stage == "head":
                if not self.kept.covers(0, min(16, self.size)):  # ElfFile reads e_ident directly
                    return False if final else None
                elf = self._elf()
                segs = elf.segments()
                loads = [sg for sg in segs if sg.type == Segment.PT_LOAD]
                dyn = next((sg for sg in segs if sg.type == Segment.PT_DYNAMIC), None)
                if loads:
                    self._want(loads[0].offset, loads[0].filesz)
                if dyn is not None:
                    self._want(dyn.offset, dyn.filesz)
                self.stage = "dynamic"
            if self.stage == "dynamic":
                elf = self._elf()
                view = _Reader(elf).dynamic_view()
                if view is not None:
                    _, first, offsets = view
                    ends = sorted(sg.offset + sg.filesz for sg in elf.segments() if sg.type == Segment.PT_LOAD)
                    for tag, off in offsets.items():
                        stop = next((e for e in ends if e > off), self.size)
                        self._want(off, first.get(DT_STRSZ, 0) if tag == DT_STRTAB else stop - off)
                self.stage = "tables"
            if not final and any(hi > self.pos for _, hi in self.wants):
                return None  # a wanted range is still ahead
            return _Reader(self._elf()).read()
        except _Missing as missing:
            gone = min(missing.offset + missing.size, self.start)  # the part that already went by
            if final or (missing.offset < gone and not self.kept.covers(missing.offset, gone)):
                return False  # went by unkept: read the file whole
            self._want(missing.offset, missing.size)
            return None



# -- the reader ----------------------------------------------------------------
def _and(a: bytes, b: bytes) -> bytes:
    n = len(a)
    return (int.from_bytes(a, "little") & int.from_bytes(b, "little")).to_bytes(n, "little")


def _or(a: bytes, b: bytes) -> bytes:
    n = len(a)
    return (int.from_bytes(a, "little") | int.from_bytes(b, "little")).to_bytes(n, "little")


class _Reader:
    def __init__(self, elf: ElfFile) -> None:
        self.elf = elf
        self.h = elf.header
        self.end = "<" if self.h.little else ">"
        self.word = 8 if self.h.is64 else 4
        self.swap = self.h.little != (sys.byteorder == "little")  # file order != native order

    def fail(self, message: str, offset: int | None = None) -> InputError:
        return self.elf.fail(message, offset)

    def _charge(self, n: int, offset: int | None) -> None:
        """Spend `n` bytes of the name budget (see NAME_BUDGET_FACTOR)."""
        self.names_left -= n
        if self.names_left < 0:
            raise LimitExceeded(self.elf.path, f"names read from the dynamic string table exceed "
                                f"{self.names_budget:,} bytes (the limit: {NAME_BUDGET_FACTOR}x the "
                                f"table + {NAME_BUDGET_FLOOR:,}): entries that point again and again "
                                f"at long strings", offset=offset, member=self.elf.member)

    def slice(self, offset: int, size: int, what: str) -> bytes:
        self.elf.check_range(offset, size, what)
        return bytes(self.elf.buf[offset: offset + size])

    def read(self) -> ElfInfo:
        h = self.h
        tables = self._tables_from_sections()
        tables_from = "sections"
        if tables is None:
            tables, tables_from = self._tables_from_segments(), "segments"
            if tables is None:
                tables, tables_from = _Tables(), "none"
        strtab = self._strtab(tables)
        self.names_budget = self.names_left = NAME_BUDGET_FACTOR * len(strtab) + NAME_BUDGET_FLOOR
        if strtab and not strtab.endswith("\0"):
            strtab += "\0"  # an unterminated last string ends with the table: one find per name
        dyn = self._dynamic(tables, strtab)
        symbols = self._symbols(tables, strtab)
        verdefs = self._verdefs(tables, strtab)
        verneeds = self._verneeds(tables, strtab)
        versions = tuple((d.index, d.name, None) for d in verdefs)
        versions += tuple((r.index, r.name, r.library) for r in verneeds)
        names, info, other, shndx, versym = symbols
        if versym and len(versym) != 2 * len(names):
            raise self.fail(f"version table holds {len(versym) // 2} entries for {len(names)} "
                            "symbols", tables.versym_offset)
        return ElfInfo(
            self.elf.path, self.elf.member, MACHINES.get(h.machine, f"EM{h.machine}"),
            64 if h.is64 else 32, h.little, FILE_TYPES.get(h.type, f"ET{h.type}"),
            dyn["soname"], dyn["needed"], dyn["rpath"], dyn["runpath"], verdefs, verneeds,
            SymbolTable(names, info, other, shndx, versym, versions), tables_from,
        )

    # -- locating the tables -------------------------------------------------
    def _tables_from_sections(self) -> _Tables | None:
        secs = self.elf.sections
        by_type: dict[int, Section] = {}
        for s in secs:
            by_type.setdefault(s.type, s)
        dynsym, dynamic = by_type.get(SHT_DYNSYM), by_type.get(SHT_DYNAMIC)
        if dynsym is None and dynamic is None:
            return None
        t = _Tables()
        link = (dynsym or dynamic).link  # type: ignore[union-attr]
        if not 0 < link < len(secs):
            raise self.fail(f"dynamic string table index {link} out of range", self.h.shoff)
        t.strtab_offset, t.strtab_size = secs[link].offset, secs[link].size
        if dynamic is not None:
            t.dynamic_offset, t.dynamic_size = dynamic.offset, dynamic.size
        if dynsym is not None:
            t.symtab_offset, t.symtab_size = dynsym.offset, dynsym.size
            if dynsym.entsize not in (0, self._sym_size()):
                raise self.fail(f"dynamic symbol entry size {dynsym.entsize}", dynsym.offset)
        for typ, attr in ((SHT_GNU_VERSYM, "versym"), (SHT_GNU_VERDEF, "verdef"),
                          (SHT_GNU_VERNEED, "verneed")):
            s = by_type.get(typ)
            if s is not None:
                setattr(t, attr + "_offset", s.offset)
                setattr(t, attr + "_size", s.size)
                if typ != SHT_GNU_VERSYM:
                    setattr(t, attr + "_count", s.info)
        return t

    def _tables_from_segments(self) -> _Tables | None:
        view = self.dynamic_view()
        if view is None:
            return None
        t, first, offsets = view
        t.strtab_offset, t.strtab_size = offsets.get(DT_STRTAB), first.get(DT_STRSZ, 0)
        if t.strtab_offset is None:
            raise self.fail("dynamic segment has no DT_STRTAB", t.dynamic_offset)
        symtab = offsets.get(DT_SYMTAB)
        if symtab is not None:
            count = self._count_symbols(offsets.get(DT_HASH), offsets.get(DT_GNU_HASH))
            t.symtab_offset, t.symtab_size = symtab, count * self._sym_size()
        versym = offsets.get(DT_VERSYM)
        if versym is not None and symtab is not None:
            t.versym_offset, t.versym_size = versym, t.symtab_size // self._sym_size() * 2
        for tag, num, attr in ((DT_VERDEF, DT_VERDEFNUM, "verdef"), (DT_VERNEED, DT_VERNEEDNUM, "verneed")):
            off = offsets.get(tag)
            if off is not None:
                setattr(t, attr + "_offset", off)
                setattr(t, attr + "_size", len(self.elf.buf) - off)
                setattr(t, attr + "_count", first.get(num, 0))
        return t

    def dynamic_view(self) -> tuple[_Tables, dict[int, int], dict[int, int]] | None:
        """PT_DYNAMIC's entries (first value per tag) and the file offsets of the tables the
        address-valued tags point at; None without PT_DYNAMIC."""
        segs = self.elf.segments()
        dyn = next((s for s in segs if s.type == Segment.PT_DYNAMIC), None)
        if dyn is None:
            return None
        loads = [s for s in segs if s.type == Segment.PT_LOAD]
        t = _Tables()
        t.dynamic_offset, t.dynamic_size = dyn.offset, dyn.filesz
        first = {tag: val for tag, val in reversed(self._dynamic_entries(t))}
        offsets = {}
        for tag in (DT_STRTAB, DT_SYMTAB, DT_HASH, DT_GNU_HASH, DT_VERSYM, DT_VERDEF, DT_VERNEED):
            addr = first.get(tag)
            if addr is None:
                continue
            seg = next((s for s in loads if s.vaddr <= addr < s.vaddr + s.filesz), None)
            if seg is None:
                raise self.fail(f"dynamic tag {tag:#x} points at address {addr:#x} outside the file",
                                dyn.offset)
            offsets[tag] = seg.offset + (addr - seg.vaddr)
        return t, first, offsets

    def _count_symbols(self, hash_off: int | None, gnu_off: int | None) -> int:
        """Symbol count without section headers: DT_HASH's nchain, else walk DT_GNU_HASH."""
        if hash_off is not None:
            return self.elf.unpack("II", hash_off)[1]
        if gnu_off is None:
            raise self.fail("no DT_HASH or DT_GNU_HASH to size the dynamic symbol table")
        nbuckets, symoffset, bloom_size, _shift = self.elf.unpack("IIII", gnu_off)
        buckets_off = gnu_off + 16 + bloom_size * self.word
        self.elf.check_range(buckets_off, nbuckets * 4, "GNU hash buckets")
        buckets = array.array("I", self.slice(buckets_off, nbuckets * 4, "GNU hash buckets"))
        if self.swap:
            buckets.byteswap()
        last = max(buckets, default=0)
        if last < symoffset:
            return symoffset
        # Walk the last bucket's chain to its end marker, in growing blocks (chains are short),
        # never further than the file allows.
        at = buckets_off + nbuckets * 4 + (last - symoffset) * 4
        index, block = last, 64
        while True:
            words = min(block, (len(self.elf.buf) - at) // 4)
            if words <= 0:
                raise self.fail("GNU hash chain has no end marker", at)
            chain = array.array("I", self.slice(at, words * 4, "GNU hash chain"))
            if self.swap:
                chain.byteswap()
            for n, value in enumerate(chain):
                if value & 1:
                    return index + n + 1
            index, at, block = index + words, at + words * 4, min(block * 2, 1 << 18)

    # -- reading the tables --------------------------------------------------
    def _sym_size(self) -> int:
        return 24 if self.h.is64 else 16

    def _strtab(self, t: _Tables) -> str:
        if t.strtab_offset is None:
            return ""
        raw = self.slice(t.strtab_offset, t.strtab_size, "dynamic string table")
        return raw.decode("latin-1")  # byte offsets == char offsets; see _text for UTF-8

    def _dynamic_entries(self, t: _Tables) -> list[tuple[int, int]]:
        if t.dynamic_offset is None:
            return []
        fmt = "qQ" if self.h.is64 else "iI"
        size = 2 * self.word
        raw = self.slice(t.dynamic_offset, t.dynamic_size - t.dynamic_size % size, "dynamic section")
        out = []
        for tag, val in struct.iter_unpack(self.end + fmt, raw):
            if tag == DT_NULL:
                break
            out.append((tag, val))
        return out

    def _dynamic(self, t: _Tables, strtab: str) -> dict[str, Any]:
        needed: list[str] = []
        soname = None
        rpath: list[str] = []
        runpath: list[str] = []
        for tag, val in self._dynamic_entries(t):
            if tag in (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH):
                text = self._string(strtab, val, t)
                if tag == DT_NEEDED:
                    needed.append(text)
                elif tag == DT_SONAME:
                    soname = text
                else:
                    (rpath if tag == DT_RPATH else runpath).extend(p for p in text.split(":") if p)
        return {"needed": tuple(needed), "soname": soname, "rpath": tuple(rpath),
                "runpath": tuple(runpath)}

    def _string(self, strtab: str, offset: int, t: _Tables) -> str:
        if offset >= len(strtab):
            raise self.fail(f"string offset {offset:#x} past the dynamic string table "
                            f"({len(strtab):#x} bytes)", t.strtab_offset)
        end = strtab.find("\0", offset)
        end = end if end >= 0 else len(strtab)
        self._charge(end - offset + 1, t.strtab_offset)
        return _text(strtab[offset: end])

    def _symbols(self, t: _Tables, strtab: str) -> tuple[tuple[str, ...], bytes, bytes, bytes, bytes]:
        if t.symtab_offset is None or t.symtab_size == 0:
            return (), b"", b"", b"", b""
        size = self._sym_size()
        count = t.symtab_size // size
        if count > MAX_SYMBOLS:
            raise LimitExceeded(self.elf.path, f"{count} dynamic symbols declared (limit {MAX_SYMBOLS})",
                                offset=t.symtab_offset, member=self.elf.member)
        data = self.slice(t.symtab_offset, count * size, "dynamic symbol table")
        words = array.array("I", data)
        halves = array.array("H", data)
        if self.swap:
            words.byteswap()
            halves.byteswap()
        st_name = words[0::size // 4]
        if self.h.is64:  # name I, info B, other B, shndx H, value Q, size Q
            info, other, shndx = data[4::24], data[5::24], halves[3::12]
        else:  # name I, value I, size I, info B, other B, shndx H
            info, other, shndx = data[12::16], data[13::16], halves[7::8]
        if st_name and max(st_name) >= len(strtab):
            bad = next(i for i, o in enumerate(st_name) if o >= len(strtab))
            raise self.fail(f"symbol {bad} names string offset {st_name[bad]:#x}, past the dynamic "
                            f"string table ({len(strtab):#x} bytes)", t.symtab_offset + bad * size)
        find = strtab.find  # strtab ends with a NUL (see read): find() never gives -1
        names = []
        append = names.append
        left = self.names_left
        for o in st_name:  # each find costs the length it finds: the budget bounds the time too
            e = find("\0", o)
            left -= e - o + 1
            if left < 0:
                self.names_left = left
                self._charge(0, t.strtab_offset)
            append(strtab[o:e])
        self.names_left = left
        if not strtab.isascii():
            names = [n if n.isascii() else _text(n) for n in names]
        versym = b""
        if t.versym_offset is not None:
            raw = self.slice(t.versym_offset, t.versym_size - t.versym_size % 2, "symbol version table")
            versym = raw if self.h.little else _swap16(raw)
        return tuple(names), info, other, _little16(shndx), versym

    def _verdefs(self, t: _Tables, strtab: str) -> tuple[VersionDefinition, ...]:
        if t.verdef_offset is None:
            return ()
        out = []
        off, end = t.verdef_offset, t.verdef_offset + t.verdef_size
        count = self._bounded_count(t.verdef_count, t.verdef_size, 20, t.verdef_offset, "version definitions")
        visits = self._visits(t.verdef_size, 8, t.verdef_offset, "version definition names")
        for _ in range(count):
            if off + 20 > end:
                raise self.fail("version definition past its section", off)
            _ver, flags, ndx, cnt, _hash, aux, nxt = self.elf.unpack("HHHHIII", off)
            names = []
            aoff = off + aux
            for _ in range(min(cnt, MAX_VERSION_ENTRIES)):
                if not off <= aoff <= end - 8:
                    raise self.fail("version definition name past its section", aoff)
                name, anext = self.elf.unpack("II", aoff)
                visits()
                names.append(self._string(strtab, name, t))
                if anext == 0:
                    break
                aoff += anext
            if names:
                out.append(VersionDefinition(ndx, names[0], flags, tuple(names[1:])))
            if nxt == 0:
                break
            off += nxt
        return tuple(out)

    def _verneeds(self, t: _Tables, strtab: str) -> tuple[VersionRequirement, ...]:
        if t.verneed_offset is None:
            return ()
        out = []
        off, end = t.verneed_offset, t.verneed_offset + t.verneed_size
        count = self._bounded_count(t.verneed_count, t.verneed_size, 16, t.verneed_offset, "version needs")
        visits = self._visits(t.verneed_size, 16, t.verneed_offset, "version need entries")
        for _ in range(count):
            if off + 16 > end:
                raise self.fail("version requirement past its section", off)
            _ver, cnt, file, aux, nxt = self.elf.unpack("HHIII", off)
            library = self._string(strtab, file, t)
            aoff = off + aux
            for _ in range(min(cnt, MAX_VERSION_ENTRIES)):
                if not off <= aoff <= end - 16:
                    raise self.fail("version requirement entry past its section", aoff)
                _hash, flags, other, name, anext = self.elf.unpack("IHHII", aoff)
                visits()
                out.append(VersionRequirement(library, self._string(strtab, name, t), other, flags))
                if anext == 0:
                    break
                aoff += anext
            if nxt == 0:
                break
            off += nxt
        return tuple(out)

    def _visits(self, size: int, entry: int, offset: int | None, what: str):
        """A counter that refuses more entries than the section can hold side by side: records
        whose chains all run through the same entries would otherwise cost records x entries."""
        limit = max(size, 0) // entry + 1
        seen = 0

        def visit() -> None:
            nonlocal seen
            seen += 1
            if seen > limit:
                raise LimitExceeded(self.elf.path, f"more {what} visited than {size} bytes hold "
                                    f"({limit:,}; limit: one visit per {entry} bytes): chains that "
                                    f"share their entries", offset=offset, member=self.elf.member)

        return visit

    def _bounded_count(self, declared: int, size: int, entry: int, offset: int, what: str) -> int:
        if declared > min(MAX_VERSION_ENTRIES, max(size, 0) // entry):
            raise self.fail(f"{declared} {what} declared in {size} bytes", offset)
        return declared


class _Tables:
    """File offsets and sizes of the dynamic tables, however they were found."""

    strtab_offset: int | None = None
    strtab_size = 0
    dynamic_offset: int | None = None
    dynamic_size = 0
    symtab_offset: int | None = None
    symtab_size = 0
    versym_offset: int | None = None
    versym_size = 0
    verdef_offset: int | None = None
    verdef_size = 0
    verdef_count = 0
    verneed_offset: int | None = None
    verneed_size = 0
    verneed_count = 0


def _little16(values: array.array) -> bytes:
    """Native uint16 values as little-endian bytes."""
    if sys.byteorder != "little":
        values = array.array("H", values)
        values.byteswap()
    return values.tobytes()


def _swap16(raw: bytes) -> bytes:
    arr = array.array("H", raw)
    arr.byteswap()
    return arr.tobytes()


def _text(latin1: str) -> str:
    """A name read as latin-1 (to keep byte offsets), decoded as the UTF-8 it really is."""
    if latin1.isascii():
        return latin1
    return latin1.encode("latin-1").decode("utf-8", "backslashreplace")
