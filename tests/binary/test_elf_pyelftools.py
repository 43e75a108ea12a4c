"""wheeldoc's fast ELF reader against pyelftools, on real libraries of this machine.

pyelftools is a test dependency only (the dev group): wheeldoc reads ELF itself (column-wise,
through mmap), and pyelftools, a reader written independently from the ELF specification, is
the oracle here. Every fact the loader model uses is compared entry by entry: machine, class,
type, SONAME, DT_NEEDED, DT_RPATH / DT_RUNPATH, every `.dynsym` entry (name, binding, type,
visibility, defined or not, version with its hidden bit or the file it is required from), the
version definitions and the version requirements.

The libraries: the system's C and C++ runtimes, the interpreter's shared libpython (its RUNPATH),
and the compiled extension modules installed in
this test environment (from their wheels on PyPI: zstandard, lz4, tomli's mypyc build, PyYAML,
the Dockerfile parser, cuobjdump), so several toolchains and linkers are covered.
"""

from __future__ import annotations

import glob
import os
import sysconfig
from pathlib import Path

import pytest

from wheeldoc.binary.elf import ElfInfo, SymbolVersion, read_elf_path

elftools = pytest.importorskip("elftools", reason="pyelftools (dev dependency group) is the oracle")
from elftools.elf.elffile import ELFFile  # noqa: E402

SYSTEM = ["libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libz.so.1", "libcrypto.so.3"]
SYSTEM_DIRS = ["/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu",
               "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64"]
SITE_PATTERNS = ["zstandard/backend_c*.so", "lz4/block/_block*.so", "*__mypyc*.so", "yaml/_yaml*.so",
                 "dockerfile*.so", "nvidia/cu13/bin/cuobjdump", "_cffi_backend*.so"]


def _libraries() -> list[str]:
    found: dict[str, str] = {}
    for name in SYSTEM:
        for d in SYSTEM_DIRS:
            p = os.path.join(d, name)
            if os.path.isfile(p):
                found.setdefault(name, os.path.realpath(p))
                break
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    for name in (sysconfig.get_config_var("LDLIBRARY") or "", "libpython3.so"):  # RUNPATH when shared
        p = os.path.join(libdir, name)
        if name.endswith(".so") or ".so." in name:
            if os.path.isfile(p):
                found.setdefault(name, os.path.realpath(p))
    for p in sorted(glob.glob("/usr/lib/x86_64-linux-gnu/cryptsetup/*.so"))[:1]:  # RUNPATH
        found.setdefault(os.path.basename(p), p)
    site = sysconfig.get_paths()["purelib"]
    for pattern in SITE_PATTERNS:
        for p in sorted(glob.glob(os.path.join(site, pattern)))[:1]:
            found.setdefault(os.path.relpath(p, site), p)
    return sorted(set(found.values()))


LIBRARIES = _libraries()

EM = {"EM_X86_64": "x86_64", "EM_AARCH64": "aarch64", "EM_386": "i386", "EM_ARM": "arm",
      "EM_PPC64": "ppc64", "EM_S390": "s390"}
BIND = {"STB_LOCAL": "LOCAL", "STB_GLOBAL": "GLOBAL", "STB_WEAK": "WEAK", "STB_LOOS": "GNU_UNIQUE",
        "STB_GNU_UNIQUE": "GNU_UNIQUE"}
TYPE = {"STT_NOTYPE": "NOTYPE", "STT_OBJECT": "OBJECT", "STT_FUNC": "FUNC", "STT_SECTION": "SECTION",
        "STT_FILE": "FILE", "STT_COMMON": "COMMON", "STT_TLS": "TLS", "STT_LOOS": "IFUNC",
        "STT_GNU_IFUNC": "IFUNC"}


def oracle(path: str) -> dict:
    """The same facts as `ours`, read by pyelftools."""
    with open(path, "rb") as f:
        elf = ELFFile(f)
        out: dict = {"machine": EM.get(elf["e_machine"], elf["e_machine"]), "class": elf.elfclass,
                     "little": elf.little_endian, "type": elf["e_type"].removeprefix("ET_")}
        by_type = {s["sh_type"]: s for s in elf.iter_sections()}
        tags: dict[str, list[str]] = {"DT_NEEDED": [], "DT_SONAME": [], "DT_RPATH": [], "DT_RUNPATH": []}
        for tag in by_type["SHT_DYNAMIC"].iter_tags():
            kind = tag.entry.d_tag
            if kind in tags:  # pyelftools names the string attribute after the tag: tag.needed, ...
                tags[kind].append(getattr(tag, kind[3:].lower()))
        out["soname"] = tags["DT_SONAME"][0] if tags["DT_SONAME"] else None
        out["needed"] = tuple(tags["DT_NEEDED"])
        out["rpath"] = tuple(p for v in tags["DT_RPATH"] for p in v.split(":") if p)
        out["runpath"] = tuple(p for v in tags["DT_RUNPATH"] for p in v.split(":") if p)

        defs, versions = [], {}
        if "SHT_GNU_verdef" in by_type:
            for vd, auxes in by_type["SHT_GNU_verdef"].iter_versions():
                names = [a.name for a in auxes]
                defs.append((vd["vd_ndx"], names[0], vd["vd_flags"], tuple(names[1:])))
                versions[vd["vd_ndx"]] = (names[0], None)
        reqs = []
        if "SHT_GNU_verneed" in by_type:
            for vn, auxes in by_type["SHT_GNU_verneed"].iter_versions():
                for a in auxes:
                    reqs.append((vn.name, a.name, a["vna_other"], a["vna_flags"]))
                    versions[a["vna_other"]] = (a.name, vn.name)
        out["defs"], out["reqs"] = tuple(defs), tuple(sorted(reqs))

        versym = by_type.get("SHT_GNU_versym")
        symbols = []
        for i, sym in enumerate(by_type["SHT_DYNSYM"].iter_symbols()):
            if i == 0:
                continue
            version = None
            if versym is not None:
                ndx = versym.get_symbol(i)["ndx"]
                raw = {"VER_NDX_LOCAL": 0, "VER_NDX_GLOBAL": 1}.get(ndx, ndx)
                entry = versions.get(raw & 0x7FFF)  # 0 local, 1 global (the base definition): no version
                if entry is not None and not ((raw & 0x7FFF) < 2 and entry[1] is None):
                    version = SymbolVersion(entry[0], bool(raw & 0x8000), entry[1])
            symbols.append((sym.name, BIND.get(sym["st_info"]["bind"], sym["st_info"]["bind"]),
                            TYPE.get(sym["st_info"]["type"], sym["st_info"]["type"]),
                            sym["st_other"]["visibility"].removeprefix("STV_"),
                            sym["st_shndx"] != "SHN_UNDEF", version))
        out["symbols"] = tuple(symbols)
    return out


def ours(info: ElfInfo) -> dict:
    return {"machine": info.machine, "class": info.elf_class, "little": info.little_endian,
            "type": info.file_type, "soname": info.soname, "needed": info.needed, "rpath": info.rpath,
            "runpath": info.runpath,
            "defs": tuple((v.index, v.name, v.flags, v.parents) for v in info.version_definitions),
            "reqs": tuple(sorted((v.library, v.name, v.index, v.flags) for v in info.version_requirements)),
            "symbols": tuple((s.name, s.binding, s.type, s.visibility, s.defined, s.version)
                             for s in info.symbols)}


def test_enough_real_libraries_found():
    """The comparison below must not pass by finding nothing: libc and the C++ runtime at least,
    and the extension modules of this environment's compiled dev dependencies."""
    names = {Path(p).name for p in LIBRARIES}
    assert any(n.startswith("libc.so") or n.startswith("libc-") for n in names), LIBRARIES
    assert any("stdc++" in n for n in names), LIBRARIES
    assert len(LIBRARIES) >= 6, LIBRARIES
    infos = [read_elf_path(p) for p in LIBRARIES]
    assert any(i.runpath or i.rpath for i in infos), "no library with a RUNPATH or RPATH to compare"
    assert any(s.version and s.version.hidden for i in infos for s in i.symbols), "no hidden version"


@pytest.mark.parametrize("path", LIBRARIES, ids=[Path(p).name for p in LIBRARIES])
def test_reader_agrees_with_pyelftools(path: str) -> None:
    mine, theirs = ours(read_elf_path(path)), oracle(path)
    for key in theirs:
        if key == "symbols":
            continue
        assert mine[key] == theirs[key], key
    assert len(mine["symbols"]) == len(theirs["symbols"])
    diff = [(a, b) for a, b in zip(mine["symbols"], theirs["symbols"]) if a != b]
    assert not diff, diff[:5]
    assert theirs["symbols"]
