"""A bounded tar header reader over a buffer (an mmap of a layer): ustar, GNU long names, pax.

Only headers are read; each member comes back with the offset and size of its data in the
buffer, so a file is later read (or mapped) in place. Every declared size is checked against
the buffer: a truncated archive, a bad checksum or a pax record that claims more than the
limits raise `InputError` / `LimitExceeded` naming the member and byte offset.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from wheeldoc.core.errors import InputError, LimitExceeded

BLOCK = 512
MAX_PAX_BYTES = 1024 * 1024
MAX_NAME_BYTES = 64 * 1024

TYPES = {b"0": "file", b"\0": "file", b"7": "file", b"1": "hardlink", b"2": "symlink", b"3": "char",
         b"4": "block", b"5": "dir", b"6": "fifo"}


@dataclass(frozen=True, slots=True)
class TarMember:
    name: str  # as the archive spells it (after pax / GNU long names), not normalised
    type: str  # file, dir, symlink, hardlink, char, block, fifo, sparse, other
    mode: int
    size: int  # bytes of data
    offset: int  # offset of the data in the buffer
    linkname: str
    index: int  # 0-based member number, for messages
    header_offset: int


def iter_members(buf, where: str, *, max_members: int, start_index: int = 0) -> Iterator[TarMember]:
    """The members of the tar archive held in `buf` (bytes, mmap or memoryview)."""
    n = len(buf)
    pos = 0
    index = start_index
    pax: dict[str, str] = {}
    long_name: str | None = None
    long_link: str | None = None
    while pos < n:
        if pos + BLOCK > n:
            if not any(bytes(buf[pos:n])):
                return
            raise InputError(where, f"truncated tar: a {n - pos}-byte partial header at the end", offset=pos)
        hdr = bytes(buf[pos:pos + BLOCK])
        if not any(hdr):
            return  # end-of-archive marker (the second zero block is optional in practice)
        _check_sum(hdr, where, pos, index)
        typeflag = hdr[156:157]
        size = _number(hdr[124:136], where, pos + 124, "size")
        if "size" in pax:
            size = _pax_int(pax, "size", where, pos)
        data = pos + BLOCK
        if size < 0 or data + size > n:
            raise InputError(where, f"truncated tar: member {index} declares {size:,} bytes but the archive "
                                    f"ends {max(n - data, 0):,} bytes later", offset=pos)
        next_pos = data + (size + BLOCK - 1) // BLOCK * BLOCK
        if typeflag in (b"x", b"g", b"X"):
            if size > MAX_PAX_BYTES:
                raise LimitExceeded(where, f"pax header of {size:,} bytes (limit {MAX_PAX_BYTES:,})", offset=pos)
            records = _pax_records(bytes(buf[data:data + size]), where, pos)
            if typeflag != b"g":  # global headers hold defaults no layer tool relies on
                pax.update(records)
            pos = next_pos
            continue
        if typeflag in (b"L", b"K"):
            if size > MAX_NAME_BYTES:
                raise LimitExceeded(where, f"GNU long name of {size:,} bytes (limit {MAX_NAME_BYTES:,})", offset=pos)
            text = bytes(buf[data:data + size]).split(b"\0", 1)[0].decode("utf-8", "surrogateescape")
            if typeflag == b"L":
                long_name = text
            else:
                long_link = text
            pos = next_pos
            continue
        if index - start_index >= max_members:
            raise LimitExceeded(where, f"more than {max_members:,} members", offset=pos)
        name = pax.get("path") or long_name or _name(hdr)
        link = pax.get("linkpath") or long_link or _cstr(hdr[157:257])
        kind = TYPES.get(typeflag, "other")
        if typeflag == b"S" or any(k.startswith("GNU.sparse") for k in pax):
            kind = "sparse"
        mode = _number(hdr[100:108], where, pos + 100, "mode") & 0o7777
        yield TarMember(name, kind, mode, size if kind in ("file", "sparse", "other") else 0, data, link, index, pos)
        index += 1
        pax, long_name, long_link = {}, None, None
        pos = next_pos


def _check_sum(hdr: bytes, where: str, pos: int, index: int) -> None:
    try:
        declared = _number(hdr[148:156], where, pos + 148, "checksum")
    except InputError:
        declared = -1
    actual = sum(hdr[:148]) + 8 * 32 + sum(hdr[156:])
    if declared != actual:
        raise InputError(where, f"not a tar archive or corrupt: header checksum mismatch at member {index}",
                         offset=pos)


def _number(field: bytes, where: str, offset: int, what: str) -> int:
    if field[:1] and field[0] & 0x80:  # GNU base-256
        value = int.from_bytes(field[1:], "big")
        return -value if field[0] & 0x40 else value
    text = field.split(b"\0", 1)[0].strip()
    if not text:
        return 0
    try:
        return int(text, 8)
    except ValueError:
        raise InputError(where, f"tar header {what} field {field!r} is not a number", offset=offset) from None


def _cstr(field: bytes) -> str:
    return field.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def _name(hdr: bytes) -> str:
    name = _cstr(hdr[0:100])
    if hdr[257:263] == b"ustar\0":  # POSIX ustar: a prefix field (GNU's "ustar  " has none)
        prefix = _cstr(hdr[345:500])
        if prefix:
            return f"{prefix}/{name}"
    return name


def _pax_records(data: bytes, where: str, pos: int) -> dict[str, str]:
    out: dict[str, str] = {}
    i = 0
    while i < len(data):
        if data[i] == 0:
            break
        sp = data.find(b" ", i, i + 24)
        try:
            length = int(data[i:sp]) if sp > i else -1
        except ValueError:
            length = -1
        if length <= 0 or i + length > len(data) or data[i + length - 1:i + length] != b"\n":
            raise InputError(where, "malformed pax extended header", offset=pos)
        key, eq, value = data[sp + 1:i + length - 1].partition(b"=")
        if not eq:
            raise InputError(where, "malformed pax record (no '=')", offset=pos)
        out[key.decode("utf-8", "replace")] = value.decode("utf-8", "surrogateescape")
        i += length
    return out


def _pax_int(pax: dict[str, str], key: str, where: str, pos: int) -> int:
    try:
        return int(pax[key])
    except ValueError:
        raise InputError(where, f"pax {key}={pax[key]!r} is not a number", offset=pos) from None
