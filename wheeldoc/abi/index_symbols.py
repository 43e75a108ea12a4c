"""A torch index entry's exported symbols, read like a `SymbolTable` without decoding names.

The loader model asks torch's libraries one question per reference: does this object export
`name` (at this version)? `IndexedExports.get` answers it from the name's id (`NameTable.id_of`,
a hash lookup) and the library's sorted ids; the names themselves are decoded only when something
iterates them (the nearest-relative explanation of a missing symbol).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterator, Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any

from wheeldoc.binary.elf import VERSYM_HIDDEN, SymbolTable, SymbolVersion

if TYPE_CHECKING:
    from wheeldoc.abi.index_pack import NameTable

Versions = tuple  # tuple[SymbolVersion | None, ...]


class IndexedSymbols:
    """Exported symbols only (the null entry first, as in `SymbolTable`), rows sorted by name id."""

    def __init__(self, table: NameTable, ids: array, info: bytes, other: bytes, versym: bytes,
                 versions: tuple[tuple[int, str, str | None], ...]) -> None:
        if len(info) != len(ids) or len(other) != len(ids) or (versym and len(versym) != 2 * len(ids)):
            raise ValueError("symbol columns of different lengths")
        self._table, self._ids, self._info, self._other, self._versym = table, ids, info, other, versym
        self.versions = versions

    # -- what the model reads ------------------------------------------------------------------
    @property
    def versym(self) -> bytes:
        return b"\0\0" + self._versym if self._versym else b""

    def exports(self) -> IndexedExports:
        return self._exports

    def exported_names(self) -> frozenset[str]:
        return frozenset(self._exports)

    def undefined(self) -> tuple:
        return ()

    def cxx_marks(self) -> tuple[bool, bool]:
        """(exports a name with a C++11 std::string, one with the pre-C++11 `Ss`)."""
        ids = self._ids
        return (not self._table.cxx11.isdisjoint(ids), not self._table.old_string.isdisjoint(ids))

    @cached_property
    def _exports(self) -> IndexedExports:
        return IndexedExports(self)

    # -- everything else: the full table, names decoded ----------------------------------------
    @cached_property
    def table(self) -> SymbolTable:
        n = len(self._ids)
        return SymbolTable(self.names, b"\0" + self._info, b"\0" + self._other, b"\0\0" + b"\1\0" * n,
                           self.versym, self.versions)

    @property
    def names(self) -> tuple[str, ...]:
        names = self._table.names
        return ("",) + tuple(map(names.__getitem__, self._ids))

    @property
    def info(self) -> bytes:
        return self.table.info

    @property
    def other(self) -> bytes:
        return self.table.other

    @property
    def shndx(self) -> bytes:
        return self.table.shndx

    def __len__(self) -> int:
        return len(self._ids) + 1

    def __getitem__(self, i: int) -> Any:
        return self.table[i]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.table)

    def defined(self) -> tuple:
        return self.table.defined()

    def to_json(self) -> dict[str, Any]:
        return self.table.to_json()


class IndexedExports(Mapping):
    """Exported name -> the versions it is defined under, as `SymbolTable.exports()` gives them."""

    def __init__(self, symbols: IndexedSymbols) -> None:
        self._s = symbols
        self._version_map = {index: (name, library) for index, name, library in symbols.versions}

    def _row(self, i: int) -> int | None:
        """The first row of name id `i` (rows of one name are adjacent: sorted by id)."""
        ids = self._s._ids
        row = bisect_left(ids, i)
        return row if row < len(ids) and ids[row] == i else None

    def get(self, name: str, default: Any = None) -> Any:
        i = self._s._table.id_of(name)
        row = None if i is None else self._row(i)
        if row is None:
            return default
        s = self._s
        if not s._versym or not s.versions:
            return (None,)
        ids, versym = s._ids, s._versym
        plain, versioned = False, []
        while row < len(ids) and ids[row] == i:
            raw = versym[2 * row] | versym[2 * row + 1] << 8
            if raw > 1:
                versioned.append(self._version(raw))
            else:
                plain = True
            row += 1
        return ((None,) if plain else ()) + tuple(versioned)

    def _version(self, raw: int) -> SymbolVersion | None:
        entry = self._version_map.get(raw & 0x7FFF)
        if entry is None or (raw & 0x7FFF) < 2 and entry[1] is None:
            return None
        return SymbolVersion(entry[0], bool(raw & VERSYM_HIDDEN), entry[1])

    def __getitem__(self, name: str) -> Versions:
        got = self.get(name)
        if got is None:
            raise KeyError(name)
        return got

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.sorted_names())

    def __len__(self) -> int:
        return len(dict.fromkeys(self._s._ids))

    def sorted_names(self) -> list[str]:
        """The exported names, sorted (ids follow the sorted names table)."""
        names = self._s._table.names
        return [names[i] for i in dict.fromkeys(self._s._ids)]

    def with_prefix(self, prefix: str, limit: int) -> list[str]:
        """The first exported names that start with `prefix` (sorted), at most `limit`."""
        return [name for i, name in self._s._table.with_prefix(prefix, 1 << 16)
                if self._row(i) is not None][:limit]
