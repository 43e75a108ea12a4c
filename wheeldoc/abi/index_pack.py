"""The torch index's file format: one zlib-compressed file per entry, symbol names shared.

An entry file is `WDTI1` + zlib( u32 header length, header JSON, then the byte arrays the header
points at ). Each shared object's exported symbols are kept column-wise, as `SymbolTable` holds
them: sorted name ids (u32 deltas, so neighbouring releases compress alike), the st_info,
st_other and versym columns. Name ids point into a names table: the folder's shared
`names.bin` (zlib of the newline-joined sorted names of every shipped entry), or the entry's
own inline table (entries a user adds with `wheeldoc index add`).
"""

from __future__ import annotations

import json
import struct
import zlib
from array import array
from functools import lru_cache
from itertools import accumulate
from pathlib import Path
from typing import Any

MAGIC = b"WDTI1"
NAMES = "names.bin"
MAX_FILE = 64 << 20  # an entry or names table larger than this is not ours


def _u32(values: list[int]) -> bytes:
    a = array("I", values)
    if a.itemsize != 4:
        a = array("L", values)
    if struct.pack("=I", 1) != struct.pack("<I", 1):
        a.byteswap()
    return a.tobytes()


def _from_u32(raw: bytes) -> array:
    a = array("I")
    a.frombytes(raw)
    if struct.pack("=I", 1) != struct.pack("<I", 1):
        a.byteswap()
    return a


def pack_entry(entry: dict[str, Any], ids: dict[str, int] | None) -> bytes:
    """A raw entry (scripts/torch_index/extract.py) as an entry file. `ids` maps every name to its
    id in the shared table; None keeps the entry's names inline."""
    inline: list[str] = []
    if ids is None:
        inline = sorted({n for e in entry["elf"].values() for n in e["symbols"]["names"][1:]})
        ids = {n: i for i, n in enumerate(inline)}
    blobs: list[bytes] = []
    offset = 0

    def put(data: bytes) -> list[int]:
        nonlocal offset
        blobs.append(data)
        offset += len(data)
        return [offset - len(data), len(data)]

    import base64

    elf = {}
    for name, e in entry["elf"].items():
        s = e["symbols"]
        info, other, versym = (base64.b64decode(s[k]) for k in ("info", "other", "versym"))
        rows = sorted(range(1, len(s["names"])), key=lambda i: ids[s["names"][i]])
        sorted_ids = [ids[s["names"][i]] for i in rows]
        deltas = [b - a for a, b in zip([0] + sorted_ids, sorted_ids)]
        head = {k: v for k, v in e.items() if k != "symbols"}
        head["symbols"] = {
            "ids": put(_u32(deltas)),
            "info": put(bytes(info[i] for i in rows)),
            "other": put(bytes(other[i] for i in rows)),
            "versym": put(b"".join(versym[2 * i: 2 * i + 2] for i in rows) if versym else b""),
            "versions": s["versions"],
        }
        elf[name] = head
    header = {k: v for k, v in entry.items() if k != "elf"}
    header["elf"] = elf
    if inline:
        header["names"] = put(zlib.compress("\n".join(inline).encode("utf-8", "surrogateescape"), 9))
    raw = json.dumps(header, separators=(",", ":")).encode()
    return MAGIC + zlib.compress(struct.pack("<I", len(raw)) + raw + b"".join(blobs), 9)


def pack_names(names: list[str]) -> bytes:
    return MAGIC + zlib.compress("\n".join(names).encode("utf-8", "surrogateescape"), 9)


@lru_cache(maxsize=4)
def shared_names(folder: str) -> tuple[str, ...]:
    return _names(_unwrap(Path(folder, NAMES).read_bytes()))


def _names(raw: bytes) -> tuple[str, ...]:
    return tuple(raw.decode("utf-8", "surrogateescape").split("\n")) if raw else ()


def _unwrap(data: bytes) -> bytes:
    if len(data) > MAX_FILE or not data.startswith(MAGIC):
        raise ValueError("not a torch index file")
    d = zlib.decompressobj()
    out = d.decompress(data[len(MAGIC):], MAX_FILE * 8)
    if d.unconsumed_tail:
        raise ValueError("torch index file inflates past its limit")
    return out


def read_entry(path: Path) -> dict[str, Any]:
    """An entry file, with each shared object's symbols as the columns `unpack_symbols` reads."""
    body = _unwrap(path.read_bytes())
    (n,) = struct.unpack_from("<I", body, 0)
    header = json.loads(body[4: 4 + n])
    data = memoryview(body)[4 + n:]
    if "names" in header:
        off, size = header["names"]
        names = _names(zlib.decompress(data[off: off + size]))
    else:
        names = shared_names(str(path.parent))
    header["_data"], header["_names"] = data, names
    return header


def unpack_symbols(entry: dict[str, Any], lib: dict[str, Any]):
    """The shared object's `SymbolTable`: entry 0 (null) first, then the exported symbols."""
    from wheeldoc.binary.elf import SymbolTable

    s, data, names = lib["symbols"], entry["_data"], entry["_names"]
    col = lambda k: bytes(data[s[k][0]: s[k][0] + s[k][1]])  # noqa: E731
    ids = accumulate(_from_u32(col("ids")))
    table = (("",) + tuple(map(names.__getitem__, ids)))
    count = len(table)
    versym = col("versym")
    return SymbolTable(table, b"\0" + col("info"), b"\0" + col("other"), b"\0\0" + b"\1\0" * (count - 1),
                       (b"\0\0" + versym) if versym else b"",
                       tuple((int(i), v, f) for i, v, f in s["versions"]))
