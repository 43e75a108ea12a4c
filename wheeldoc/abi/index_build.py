"""Read what the ABI model needs from one torch wheel into an index entry.

`wheeldoc index add` packs it into the local index; scripts/torch_index/extract.py writes it as
a raw entry (JSON, gzip) for scripts/torch_index/pack.py, which builds the shipped index. An entry holds the wheel's identity and provenance (file name, sha256, size), the listing of its
shared objects and of the few text members the model reads (with RECORD sha256 and sizes), the
ELF facts of every shared object (exported symbols only: the loader model checks the undefined
symbols of extension objects, never torch's), and those text members. Nothing is extracted to
disk: members are inflated one at a time through wheeldoc's own readers.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from pathlib import Path

from wheeldoc.abi.site import looks_like_library
from wheeldoc.binary.elf import ElfInfo, SymbolTable, read_elf_member
from wheeldoc.binary.members import WheelArchive
from wheeldoc.core.errors import InputError

TEXTS = ("torch/__init__.py", "torch/version.py", "torch/_utils_internal.py")
ENTRY_VERSION = 1


def exports_only(table: SymbolTable) -> SymbolTable:
    """The null entry and every exported symbol, with their versions: what `exports()` reads."""
    mask = table._export_mask()
    keep = [0] + [i for i in range(1, len(table.names)) if mask[i]]
    pick = lambda b, w: b"".join(b[w * i: w * i + w] for i in keep) if b else b""  # noqa: E731
    return SymbolTable(tuple(table.names[i] for i in keep), pick(table.info, 1), pick(table.other, 1),
                       pick(table.shndx, 2), pick(table.versym, 2), table.versions)


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def extract(wheel: str | Path) -> dict:
    wheel = Path(wheel)
    src = WheelArchive(str(wheel))
    info = src.wheel_info()
    dist = src.dist_info
    texts = [t for t in TEXTS if src.member(t) is not None]
    texts += [f"{dist}/{n}" for n in ("METADATA", "WHEEL") if src.member(f"{dist}/{n}") is not None]
    libs = [m for m in src.members if looks_like_library(m.name)]
    elf: dict[str, dict] = {}
    unreadable: dict[str, str] = {}
    for m in libs:
        try:
            e = read_elf_member(src, m.name)
        except InputError as err:
            unreadable[m.name] = err.message
            continue
        slim = ElfInfo(e.path, e.member, e.machine, e.elf_class, e.little_endian, e.file_type, e.soname,
                       e.needed, e.rpath, e.runpath, e.version_definitions, e.version_requirements,
                       exports_only(e.symbols), e.tables_from)
        d = slim.to_json()
        d.pop("path")
        elf[m.name] = d
    listed = {m.name for m in libs} | set(texts)
    return {
        "entry_version": ENTRY_VERSION,
        "wheel": {"filename": wheel.name, "sha256": file_sha256(wheel), "size": wheel.stat().st_size},
        "info": {"name": info.name, "version": info.version, "build": info.build, "tags": list(info.tags),
                 "wheel_tags": list(info.wheel_tags), "wheel_version": info.wheel_version,
                 "generator": info.generator, "root_is_purelib": info.root_is_purelib},
        "dist_info": dist,
        "members": [[m.name, m.size, m.sha256] for m in src.members if m.name in listed],
        "member_count": len(src.members),
        "texts": {t: src.read_bytes(t).decode("utf-8", "replace") for t in texts},
        "elf": elf,
        "unreadable": unreadable,
    }


def main(argv: list[str]) -> int:
    wheel, out = Path(argv[0]), Path(argv[1])
    entry = extract(wheel)
    tmp = out.with_suffix(".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=6) as f:
        json.dump(entry, f, separators=(",", ":"))
    tmp.replace(out)
    print(f"{wheel.name}: {len(entry['elf'])} shared objects, {sum(len(e['symbols']['names']) for e in entry['elf'].values())} "
          f"exported symbols, {out.stat().st_size} bytes")
    return 0
