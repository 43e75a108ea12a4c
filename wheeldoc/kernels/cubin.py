"""Facts about one cubin (an EM_CUDA ELF image): ABI, e_flags, arch, and the toolkit that built it.

Reads only the ELF header, the section table and three small sections: `.nv.compat`
(accelerator bit, CUDA 13), `.note.nv.cuinfo` (toolkit as major*10+minor) and
`.note.nv.tkinfo` (tool name, version string, branch, options). Layouts are in
docs `shared/reference/cuda-binaries.md` §4.
"""

from __future__ import annotations

import struct

TYPE_CHECKING = False  # typing (and the re it imports) stays out of `kernels --list`
if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from wheeldoc.core.records import NamedTuple

from wheeldoc.core.errors import InputError
from wheeldoc.binary.elffile import Buffer, ElfFile

EM_CUDA = 190
SHT_CUDA_COMPAT = 0x70000086
NOTE_NAME = b"NVIDIA Corp\0"
NOTE_CUINFO = 1000
NOTE_TKINFO = 2000
COMPAT_ACCELERATOR = 9  # EICOMPAT_ATTR_CUDA_ACCELERATOR_TARGET
MAX_NOTE_SECTION = 1 << 20


class CubinInfo(NamedTuple):
    """What a cubin's ELF says about itself (never `f`: that lives only in the fatbin entry)."""

    elf_type: str  # "exec" (ET_EXEC), "rel" (ET_REL, from -rdc) or "other"
    osabi: int  # 51 (ABI 7) or 65 (ABI 8)
    abi_version: int  # EI_ABIVERSION: 7 or 8
    e_flags: int
    sm: int  # SM number from e_flags: 90, 121, ...
    accelerator: bool | None  # `a` target; None when the ELF cannot tell
    arch: str  # "sm_90", "sm_90a" (as cuobjdump names it)
    compat: tuple[tuple[int, int | bytes], ...]  # `.nv.compat` records (attribute, value)
    toolkit: str | None  # "13.0" from .note.nv.cuinfo
    cuinfo_sm: int | None
    tool: str | None  # "ptxas" or "nvlink" from .note.nv.tkinfo
    tool_version: str | None  # "Cuda compilation tools, release 13.0, V13.0.88"
    tool_branch: str | None  # "Build cuda_13.0.r13.0/compiler.36424714_0"
    tool_options: str | None  # "-arch sm_121a -m 64 "

    @property
    def suffix(self) -> str:
        """The target's suffix: "a" (arch-specific), "f" (family) or "". `a` comes from
        `.nv.compat` (CUDA 13) or e_flags (ABI 7, and ABI 8 from ptxas 12.x); `f` leaves no
        trace but the ptxas options in `.note.nv.tkinfo` (`-arch sm_100f`), which also name
        `a` where neither of the others can tell."""
        if self.accelerator:
            return "a"
        opt = options_arch(self.tool_options)
        if opt is not None and opt[0] == self.sm:
            if opt[1] == "f" or (opt[1] == "a" and self.accelerator is None):
                return opt[1]
        return ""

    @property
    def target(self) -> str:
        """"sm_100a", "sm_100f", "sm_100": the arch the cubin was built for, suffix included."""
        return f"sm_{self.sm}{self.suffix}"


_ARCH_OPTION = r"(?:^|\s)-(?:arch|-gpu-name)[= ]+sm_(\d+)([af]?)\b"  # compiled on first use


def options_arch(options: str | None) -> tuple[int, str] | None:
    """(100, "f") from ptxas options "-arch sm_100f -m 64 ", or None."""
    if not options:
        return None
    import re

    m = re.search(_ARCH_OPTION, options)
    return (int(m.group(1)), m.group(2)) if m else None


def parse_compat(blob: bytes) -> tuple[tuple[int, int | bytes], ...]:
    """Decode a `.nv.compat` TLV list: records `fmt attr value`, 4-byte aligned.

    fmt 1 = no value, 2 = byte value, 3 = u16 value, 4 = u16 length + bytes.
    Raises ValueError on a malformed list (the caller turns it into an InputError).
    """
    out: list[tuple[int, int | bytes]] = []
    pos, end = 0, len(blob)
    while pos + 4 <= end:
        fmt, attr = blob[pos], blob[pos + 1]
        if fmt == 1:
            out.append((attr, 0))
            pos += 4
        elif fmt == 2:
            out.append((attr, blob[pos + 2]))
            pos += 4
        elif fmt == 3:
            out.append((attr, struct.unpack_from("<H", blob, pos + 2)[0]))
            pos += 4
        elif fmt == 4:
            size = struct.unpack_from("<H", blob, pos + 2)[0]
            if pos + 4 + size > end:
                raise ValueError(f"compat record at {pos} runs past the end ({size} bytes)")
            out.append((attr, bytes(blob[pos + 4: pos + 4 + size])))
            pos += 4 + ((size + 3) & ~3)
        elif fmt == 0 and not any(blob[pos:]):
            break  # zero padding
        else:
            raise ValueError(f"unknown compat record format {fmt} at {pos}")
    return tuple(out)


def compat_accelerator(records: tuple[tuple[int, int | bytes], ...]) -> bool | None:
    for attr, value in records:
        if attr == COMPAT_ACCELERATOR and isinstance(value, int):
            return bool(value)
    return None


def is_cubin(buf: Buffer) -> bool:
    """True for a 64-bit little-endian ELF whose e_machine is EM_CUDA."""
    return (len(buf) >= 20 and bytes(buf[:4]) == b"\x7fELF" and buf[5] == 1
            and struct.unpack_from("<H", buf, 18)[0] == EM_CUDA)


def read_cubin(buf: Buffer, path: str = "<buffer>", *, member: str | None = None,
               offset: int = 0) -> CubinInfo:
    """Read a cubin held in `buf`. `offset` is where `buf` starts in the file named by errors."""
    try:
        return _read(buf, path)
    except InputError as exc:
        at = None if exc.offset is None else offset + exc.offset
        raise InputError(path, f"cubin: {exc.message}", offset=at, member=member) from None


def _read(buf: Buffer, path: str) -> CubinInfo:
    elf = ElfFile(buf, path)
    h = elf.header
    if h.machine != EM_CUDA:
        raise elf.fail(f"e_machine {h.machine} is not EM_CUDA ({EM_CUDA})", 18)
    sm = (h.flags >> 8) & 0xFF if h.abiversion >= 8 else h.flags & 0xFF
    compat: tuple[tuple[int, int | bytes], ...] = ()
    # CUDA_COMPAT_INFO by type; older producers (nvasm 12.9 in flashinfer-cubin) write a
    # PROGBITS section of that name
    sec = next((s for s in elf.sections if s.type == SHT_CUDA_COMPAT), None) or \
        elf.section(".nv.compat")
    if sec is not None:
        try:
            compat = parse_compat(bytes(_small(elf, sec)))
        except ValueError as exc:
            raise elf.fail(f".nv.compat: {exc}", sec.offset) from None
    accel = compat_accelerator(compat)
    if accel is None:
        accel = _accelerator_from_flags(h.abiversion, h.flags)
    cuinfo = _note(elf, ".note.nv.cuinfo", NOTE_CUINFO)
    toolkit = cuinfo_sm = None
    if cuinfo is not None and len(cuinfo) >= 6:
        _ver, cuinfo_sm, tk = struct.unpack_from("<HHH", cuinfo, 0)
        toolkit = f"{tk // 10}.{tk % 10}"
    tool = tool_version = tool_branch = tool_options = None
    tk_desc = _note(elf, ".note.nv.tkinfo", NOTE_TKINFO)
    if tk_desc is not None and len(tk_desc) >= 24:
        offs = struct.unpack_from("<6I", tk_desc, 0)
        strings = tk_desc[24:]
        tool, tool_version, tool_branch, tool_options = (_cstr(strings, o) for o in offs[2:6])
    elf_type = {1: "rel", 2: "exec"}.get(h.type, "other")
    arch = f"sm_{sm}" + ("a" if accel else "")
    return CubinInfo(elf_type, h.osabi, h.abiversion, h.flags, sm, accel, arch, compat,
                     toolkit, cuinfo_sm, tool, tool_version, tool_branch, tool_options)


def _accelerator_from_flags(abiversion: int, flags: int) -> bool | None:
    """ABI 7: EF_CUDA_ACCELERATORS (0x800). ABI 8: bit 0x8 of the low byte, set by the 12.x
    producers (ptxas 0x0a, nvasm 0x0c); CUDA 13 keeps `a` in .nv.compat only, so an unset
    bit cannot tell (None)."""
    if abiversion < 8:
        return bool(flags & 0x800)
    return True if flags & 0x8 else None


def _small(elf: ElfFile, sec) -> memoryview:
    if sec.size > MAX_NOTE_SECTION:
        raise elf.fail(f"section {sec.name!r} declares {sec.size} bytes", sec.offset)
    return elf.section_data(sec)


def _note(elf: ElfFile, name: str, want_type: int) -> bytes | None:
    """The desc of the first `NVIDIA Corp` note of `want_type` in section `name`."""
    sec = elf.section(name)
    if sec is None:
        return None
    data = bytes(_small(elf, sec))
    pos = 0
    while pos + 12 <= len(data):
        namesz, descsz, ntype = struct.unpack_from("<III", data, pos)
        name_end = pos + 12 + ((namesz + 3) & ~3)
        desc_end = name_end + descsz
        if desc_end > len(data):
            raise elf.fail(f"note in {name} runs past the section end", sec.offset + pos)
        if ntype == want_type and data[pos + 12: pos + 12 + namesz] == NOTE_NAME:
            return data[name_end:desc_end]
        pos = name_end + ((descsz + 3) & ~3)
    return None


def _cstr(table: bytes, offset: int) -> str | None:
    if offset <= 0 or offset >= len(table):
        return None
    end = table.find(b"\0", offset)
    return table[offset: end if end >= 0 else len(table)].decode("utf-8", "replace")
