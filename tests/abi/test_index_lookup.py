"""The torch index answers symbol questions without decoding names: `lookup.bin` (name hash ->
id) and `IndexedExports` must give exactly what the decoded names and `SymbolTable` give."""

from __future__ import annotations

import ast
import random
from pathlib import Path

import pytest

from wheeldoc.abi import preloads
from wheeldoc.abi.index import _catalog, load_entry, shipped_dir
from wheeldoc.abi.index_pack import LOOKUP, NameTable, abi_marks, pack_lookup, shared_names, unpack_symbols

FOLDER = str(shipped_dir())


def _entries(arch: str = "x86_64") -> list[Path]:
    return [shipped_dir() / f for k, f in sorted(_catalog(FOLDER).items(), key=lambda kv: kv[1]) if k.arch == arch]


def test_every_name_hashes_to_its_own_id_and_others_to_none():
    table, names = NameTable(FOLDER), shared_names(FOLDER)
    for i in range(0, len(names), 97):
        assert table.id_of(names[i]) == i
    position = {n: i for i, n in enumerate(names)}
    rng = random.Random(7)
    for _ in range(2000):
        probe = names[rng.randrange(len(names))] + rng.choice(["x", "E", "v", "@GLIBC", " "])
        assert table.id_of(probe) == position.get(probe)


@pytest.mark.slow
def test_the_shipped_lookup_is_what_pack_writes_from_the_names():
    assert (shipped_dir() / LOOKUP).read_bytes() == pack_lookup(list(shared_names(FOLDER)))


@pytest.mark.parametrize("arch, which", [("x86_64", -1), ("aarch64", -1),
                                         pytest.param("x86_64", 0, marks=pytest.mark.slow),
                                         pytest.param("x86_64", 20, marks=pytest.mark.slow)])
def test_indexed_exports_equal_the_symbol_table_they_stand_for(arch, which):
    for path in (_entries(arch)[which],):
        entry = load_entry(path)
        for member, lib in entry["elf"].items():
            symbols = unpack_symbols(entry, lib)
            table = symbols.table  # names decoded: the reference
            want = table.exports()
            got = symbols.exports()
            assert len(got) == len(want), member
            for name, versions in want.items():
                assert got.get(name) == versions, (member, name)
            assert got.get("not_a_symbol_" + member) is None
            assert sorted(got) == sorted(want)
            marks = [abi_marks(n) for n in want]
            assert symbols.cxx_marks() == (any(m[0] for m in marks), any(m[1] for m in marks)), member


def test_prefix_search_keeps_only_the_library_s_names():
    entry = load_entry(_entries()[-1])
    lib = next(v for k, v in entry["elf"].items() if k.endswith("libc10.so"))
    exports = unpack_symbols(entry, lib).exports()
    names = sorted(exports)
    prefix = "_ZN3c106detail"
    want = [n for n in names if n.startswith(prefix)][:50]
    assert want and exports.with_prefix(prefix, 50) == want


def _full_parse(text: str):
    return {n.name: n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)}


@pytest.mark.parametrize("arch", ["x86_64", "aarch64"])
def test_preloads_read_from_the_functions_alone_equal_a_whole_file_parse(arch, monkeypatch):
    for path in _entries(arch):
        text = load_entry(path)["texts"]["torch/__init__.py"]
        fast = preloads.read_preloads(text)
        with monkeypatch.context() as m:
            m.setattr(preloads, "_functions", _full_parse)
            assert preloads.read_preloads(text) == fast, path.name


def test_preloads_fall_back_to_the_whole_file_when_the_functions_alone_do_not_parse():
    text = ('def _load_global_deps():\n    """Doc\nwith a line at column 0\n    """\n'
            '    try:\n        ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)\n'
            '        _preload_cuda_deps("cuda_nvrtc", "libnvrtc.so.*[0-9]")\n'
            '    except OSError:\n        pass\n')
    got = preloads.read_preloads(text)
    assert got.read and [p.folder for p in got.after_global_deps] == ["cuda_nvrtc"]


@pytest.mark.parametrize("damage", ["truncated", "wrong magic", "wrong size"])
def test_a_damaged_lookup_table_makes_the_entries_unusable_not_a_traceback(tmp_path, monkeypatch, damage):
    import shutil

    from wheeldoc.abi import index

    folder = tmp_path / "torch_index"
    shutil.copytree(shipped_dir(), folder)
    data = (folder / LOOKUP).read_bytes()
    data = {"truncated": data[:1000], "wrong magic": b"XXXXX" + data[5:], "wrong size": data + b"\0" * 8}[damage]
    (folder / LOOKUP).write_bytes(data)
    monkeypatch.setattr(index, "shipped_dir", lambda: folder)
    monkeypatch.setattr(index, "local_dir", lambda: tmp_path / "no-local-index")
    key = next(iter(_catalog(FOLDER)))
    assert index.find(key) is None  # the entry is refused: abi then reads the real wheel
