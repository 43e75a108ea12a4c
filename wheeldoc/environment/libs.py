"""The shared objects of installed distributions: what each needs, and whether it holds GPU code.

Headers only: `ElfFile` reads the section table of an mmap; the `.dynamic` section gives
DT_NEEDED / DT_SONAME / DT_RPATH / DT_RUNPATH, and the presence of `.nv_fatbin` or
`__nv_relfatbin` marks a library with GPU code. Nothing is loaded; a 1 GB libtorch_cuda.so
costs a few page reads.
"""

from __future__ import annotations

import posixpath
import re
import struct
from dataclasses import dataclass
from typing import Literal

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.binary.elffile import ElfFile, Section, is_elf
from wheeldoc.environment.fs import FileSystem

GPU_SECTIONS = (".nv_fatbin", "__nv_relfatbin")
MAX_DYNAMIC_ENTRIES = 1 << 16
MAX_DYN_STRING = 4096

DT_NULL, DT_NEEDED, DT_RPATH, DT_SONAME, DT_RUNPATH = 0, 1, 15, 14, 29

_TORCH_LIB = re.compile(r"^lib(torch|c10)(_[A-Za-z0-9_]+)?\.so(\.|$)")
_EXTENSION = re.compile(r"\.(cpython-[^/]*|abi3|pypy[^/]*)\.so$")
_SHARED = re.compile(r"(\.so(\.[0-9][0-9.]*)?|\.pyd)$")

LibraryKind = Literal["extension", "library"]


@dataclass(frozen=True)
class DynamicInfo:
    needed: tuple[str, ...] = ()
    soname: str | None = None
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    gpu_sections: tuple[str, ...] = ()


@dataclass(frozen=True)
class SharedLibrary:
    """One `.so` / `.pyd` an installed distribution provides."""

    path: str  # absolute
    distribution: str | None  # canonical name of the owner (from RECORD), None if none lists it
    kind: LibraryKind  # "extension": a Python extension module; "library": lib*.so, *.libs/ vendored
    size: int
    vendored: bool = False  # in an auditwheel `<name>.libs/` folder
    format: Literal["elf", "pe", "other"] = "elf"
    needed: tuple[str, ...] = ()
    soname: str | None = None
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    gpu_sections: tuple[str, ...] = ()  # ".nv_fatbin" / "__nv_relfatbin" when present

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)

    @property
    def torch_needed(self) -> tuple[str, ...]:
        """The libtorch* / libc10* names among DT_NEEDED."""
        return tuple(n for n in self.needed if _TORCH_LIB.match(n))

    @property
    def links_torch(self) -> bool:
        return bool(self.torch_needed)

    @property
    def has_gpu_code(self) -> bool:
        return bool(self.gpu_sections)


def is_shared_object(path: str) -> bool:
    return bool(_SHARED.search(path))


def library_kind(path: str) -> LibraryKind:
    base = posixpath.basename(path)
    if _EXTENSION.search(base) or base.endswith(".pyd"):
        return "extension"
    if base.startswith("lib") or ".so." in base or "/" in path and path.split("/")[-2].endswith(".libs"):
        return "library"
    return "extension"


def read_dynamic(buf, where: str) -> DynamicInfo:
    """DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH and GPU sections of one ELF image."""
    elf = ElfFile(buf, where)
    gpu = tuple(n for n in GPU_SECTIONS if elf.section(n) is not None)
    dyn = elf.section(".dynamic")
    if dyn is None or dyn.type == Section.SHT_NOBITS or not 0 < dyn.link < len(elf.sections):
        return DynamicInfo(gpu_sections=gpu)
    strtab = elf.sections[dyn.link]
    data = elf.section_data(dyn)
    strs = elf.section_data(strtab)
    fmt = ("<" if elf.header.little else ">") + ("qQ" if elf.header.is64 else "iI")
    step = struct.calcsize(fmt)
    needed: list[str] = []
    soname = None
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    # Names read: at most 4x .dynstr + 64 KiB in all (entries that all name one long string
    # would otherwise cost entries x its length).
    limit = 4 * len(strs) + (1 << 16)
    left = limit
    for i in range(min(len(data) // step, MAX_DYNAMIC_ENTRIES)):
        tag, val = struct.unpack_from(fmt, data, i * step)
        if tag == DT_NULL:
            break
        if tag in (DT_NEEDED, DT_SONAME, DT_RPATH, DT_RUNPATH):
            s = _cstr(strs, val, where, strtab.offset)
            left -= len(s) + 1
            if left < 0:
                raise LimitExceeded(where, f"names read from .dynstr exceed {limit:,} bytes (the limit: "
                                    "4x the table + 65,536): dynamic entries that all name one long "
                                    "string", offset=dyn.offset + i * step)
            if tag == DT_NEEDED:
                needed.append(s)
            elif tag == DT_SONAME:
                soname = s
            elif tag == DT_RPATH:
                rpath = tuple(p for p in s.split(":") if p)
            else:
                runpath = tuple(p for p in s.split(":") if p)
    return DynamicInfo(tuple(needed), soname, rpath, runpath, gpu)


def _cstr(table: memoryview, offset: int, where: str, base: int) -> str:
    if offset >= len(table):
        raise InputError(where, f"dynamic string offset {offset:#x} lies past .dynstr "
                                f"({len(table):#x} bytes)", offset=base)
    chunk = bytes(table[offset: offset + MAX_DYN_STRING])
    end = chunk.find(b"\0")
    return chunk[: end if end >= 0 else len(chunk)].decode("utf-8", "replace")


def scan_library(fs: FileSystem, path: str, distribution: str | None, *, vendored: bool = False) -> SharedLibrary:
    """Read one shared object's headers. Raises `InputError` for a corrupt ELF."""
    size = fs.size(path)
    kind = library_kind(path)
    with fs.open_buffer(path) as buf:
        if path.endswith(".pyd"):
            fmt = "pe" if bytes(buf[:2]) == b"MZ" else "other"
            return SharedLibrary(path, distribution, kind, size, vendored, fmt)
        if not is_elf(buf):
            raise InputError(fs.where(path), "not an ELF file (bad magic)", offset=0)
        info = read_dynamic(buf, fs.where(path))
    return SharedLibrary(path, distribution, kind, size, vendored, "elf", info.needed, info.soname,
                         info.rpath, info.runpath, info.gpu_sections)
