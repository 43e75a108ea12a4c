"""The torch index's file format: one zlib-compressed file per entry, symbol names shared.

An entry file is `WDTI1` + zlib( u32 header length, header JSON, then the byte arrays the header
points at ). Each shared object's exported symbols are kept column-wise, as `SymbolTable` holds
them: sorted name ids (u32 deltas, so neighbouring releases compress alike), the st_info,
st_other and versym columns. Name ids point into a names table: the folder's shared
`names.bin` (zlib of the newline-joined sorted names of every shipped entry), or the entry's
own inline table (entries a user adds with `wheeldoc index add`).

Next to `names.bin`, `lookup.bin` (uncompressed, read in a few milliseconds) lets the model find
a name's id without decoding the 80 MB of names: the sorted 64-bit BLAKE2b hashes of every name
with the id each belongs to, and the ids of the names that tell the C++ ABI flavour. Names are
decoded only to explain a missing symbol (`NameTable`).
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import zlib
from array import array
from functools import lru_cache
from itertools import accumulate
from pathlib import Path
from typing import Any

MAGIC = b"WDTI1"
NAMES = "names.bin"
LOOKUP, LOOKUP_MAGIC = "lookup.bin", b"WDTL1"
CXX11 = "St7__cxx11"  # in a name: it takes or returns a C++11-ABI std::string (or list, ...)
OLD_STRING = re.compile(r"[0-9]Ss|RKSs|NSs")  # the pre-C++11 `std::string` (`Ss`) in a mangled name
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


def name_hash(name: str) -> int:
    return int.from_bytes(hashlib.blake2b(name.encode("utf-8", "surrogateescape"), digest_size=8).digest(), "little")


def abi_marks(name: str) -> tuple[bool, bool]:
    """(takes a C++11 std::string, takes a pre-C++11 one): what `abi` reads the flavour from."""
    return CXX11 in name, name.startswith("_Z") and OLD_STRING.search(name) is not None


def pack_lookup(names: list[str]) -> bytes:
    pairs = sorted((name_hash(n), i) for i, n in enumerate(names))
    if any(a[0] == b[0] for a, b in zip(pairs, pairs[1:])):
        raise ValueError("two names share a 64-bit hash: change the hash")
    marks = [abi_marks(n) for n in names]
    cxx11 = [i for i, m in enumerate(marks) if m[0]]
    old = [i for i, m in enumerate(marks) if m[1]]
    hashes = array("Q", (h for h, _ in pairs))
    if struct.pack("=Q", 1) != struct.pack("<Q", 1):
        hashes.byteswap()
    return (LOOKUP_MAGIC + struct.pack("<III", len(pairs), len(cxx11), len(old)) + hashes.tobytes()
            + _u32([i for _, i in pairs]) + _u32(cxx11) + _u32(old))


class NameTable:
    """The names an entry's ids point into: `id_of` by hash (shared table) or by a dict (an
    inline table), `names` decoded only when asked (explanations)."""

    def __init__(self, folder: str | None, inline: tuple[str, ...] | None = None) -> None:
        self.folder, self._names, self._ids = folder, inline, None
        self._memo: dict[str, int | None] = {}
        self._hashes: array | None = None
        self._hash_ids: array | None = None
        self._marks: tuple[frozenset[int], frozenset[int]] | None = None
        if inline is None:
            self._load_lookup()

    @property
    def cxx11(self) -> frozenset[int]:
        """Ids of the names that take a C++11 std::string (`abi_marks`)."""
        return self._abi_marks()[0]

    @property
    def old_string(self) -> frozenset[int]:
        return self._abi_marks()[1]

    def _abi_marks(self) -> tuple[frozenset[int], frozenset[int]]:
        if self._marks is None:
            marks = [abi_marks(n) for n in self.names]
            self._marks = (frozenset(i for i, m in enumerate(marks) if m[0]),
                           frozenset(i for i, m in enumerate(marks) if m[1]))
        return self._marks

    def _load_lookup(self) -> None:
        data = Path(self.folder, LOOKUP).read_bytes()  # type: ignore[arg-type]
        if len(data) > MAX_FILE or not data.startswith(LOOKUP_MAGIC) or len(data) < len(LOOKUP_MAGIC) + 12:
            raise ValueError("not a torch index lookup file")
        n, c, o = struct.unpack_from("<III", data, len(LOOKUP_MAGIC))
        at = len(LOOKUP_MAGIC) + 12
        if len(data) != at + 12 * n + 4 * (c + o):
            raise ValueError("torch index lookup file has the wrong size")
        hashes = array("Q")
        hashes.frombytes(data[at: at + 8 * n])
        if struct.pack("=Q", 1) != struct.pack("<Q", 1):
            hashes.byteswap()
        at += 8 * n
        self._hashes, self._hash_ids = hashes, _from_u32(data[at: at + 4 * n])
        at += 4 * n
        self._marks = (frozenset(_from_u32(data[at: at + 4 * c])),
                       frozenset(_from_u32(data[at + 4 * c: at + 4 * (c + o)])))

    @property
    def names(self) -> tuple[str, ...]:
        if self._names is None:
            self._names = shared_names(self.folder)  # type: ignore[arg-type]
        return self._names

    def id_of(self, name: str) -> int | None:
        if self._hashes is None:
            if self._ids is None:
                self._ids = {n: i for i, n in enumerate(self.names)}
            return self._ids.get(name)
        try:
            return self._memo[name]
        except KeyError:
            pass
        from bisect import bisect_left

        h = name_hash(name)
        at = bisect_left(self._hashes, h)
        found = self._hash_ids[at] if at < len(self._hashes) and self._hashes[at] == h else None  # type: ignore[index]
        if len(self._memo) < 1 << 20:
            self._memo[name] = found
        return found

    def with_prefix(self, prefix: str, limit: int) -> list[tuple[int, str]]:
        """(id, name) of the first names starting with `prefix`, at most `limit` (names are sorted)."""
        names = self.names
        return [(i, names[i]) for i in prefixed(names, prefix, limit)]


def prefixed(names, prefix: str, limit: int) -> range:
    """Positions of the first names (a sorted sequence) that start with `prefix`, at most `limit`."""
    from bisect import bisect_left

    start = end = bisect_left(names, prefix)
    while end < len(names) and end - start < limit and names[end].startswith(prefix):
        end += 1
    return range(start, end)


@lru_cache(maxsize=4)
def shared_table(folder: str) -> NameTable:
    return NameTable(folder)


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
        names = NameTable(None, _names(zlib.decompress(data[off: off + size])))
    else:
        names = shared_table(str(path.parent))
    header["_data"], header["_names"] = data, names
    return header


def unpack_symbols(entry: dict[str, Any], lib: dict[str, Any]):
    """The shared object's exported symbols (`IndexedSymbols`, read like a `SymbolTable`)."""
    from wheeldoc.abi.index_symbols import IndexedSymbols

    s, data = lib["symbols"], entry["_data"]
    col = lambda k: bytes(data[s[k][0]: s[k][0] + s[k][1]])  # noqa: E731
    ids = array("I", accumulate(_from_u32(col("ids"))))
    return IndexedSymbols(entry["_names"], ids, col("info"), col("other"), col("versym"),
                          tuple((int(i), v, f) for i, v, f in s["versions"]))
