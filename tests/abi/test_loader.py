"""The loader model's rules, one at a time, on small hand-made ELF facts (ElfInfo values built in
the test, no files): search paths, soname matching, version needs, symbol scope."""

from __future__ import annotations

import array

import pytest

from wheeldoc.abi.site import Entry, Site
from wheeldoc.abi.loader import Loader
from wheeldoc.data.abi_tables import system_target
from wheeldoc.binary.elf import ElfInfo, SymbolTable, VersionDefinition, VersionRequirement

GLOBAL_FUNC, WEAK_FUNC = 0x12, 0x22
HIDDEN = 2


def table(defined=(), undefined=(), weak_undefined=(), hidden=(), versions=()) -> SymbolTable:
    """Defined and undefined symbols; `versions` maps a name to (version index, name, file)."""
    names, info, other, shndx, versym = [""], [0], [0], [0], [0]
    for name in defined:
        names.append(name), info.append(GLOBAL_FUNC), other.append(0), shndx.append(12)
    for name in hidden:
        names.append(name), info.append(GLOBAL_FUNC), other.append(HIDDEN), shndx.append(12)
    for name in undefined:
        names.append(name), info.append(GLOBAL_FUNC), other.append(0), shndx.append(0)
    for name in weak_undefined:
        names.append(name), info.append(WEAK_FUNC), other.append(0), shndx.append(0)
    entries = []
    for i, name in enumerate(names):
        ver = dict(versions).get(name)
        versym.append(ver[0] if ver else (0 if i == 0 else 1))
        if ver and (ver[0], ver[1], ver[2]) not in entries:
            entries.append((ver[0], ver[1], ver[2]))
    versym = versym[1:]
    pack = lambda values: array.array("H", values).tobytes()
    return SymbolTable(tuple(names), bytes(info), bytes(other), pack(shndx),
                       pack(versym) if versions else b"", tuple(entries))


def elf(path, *, soname=None, needed=(), rpath=(), runpath=(), symbols=None, verdefs=(), verneeds=()) -> ElfInfo:
    return ElfInfo(path, None, "x86_64", 64, True, "DYN", soname, tuple(needed), tuple(rpath), tuple(runpath),
                   tuple(verdefs), tuple(verneeds), symbols or table(), "sections")


class FakeSite(Site):
    def __init__(self, files: dict[str, tuple[str, ElfInfo | None]]) -> None:
        super().__init__(None)
        for path, (origin, info) in files.items():
            self.files[path] = Entry(path, origin, origin, None if info is None else object(), path)
            if info is not None:
                self._elf[path] = info

    def elf(self, entry):
        return self._elf.get(entry.path)


def run(files, root, target=None, torch_roots=()):
    site = FakeSite(files)
    loader = Loader(site, target or system_target(("manylinux_2_28_x86_64",)))
    loader.import_torch([site.files[p] for p in torch_roots], [])
    return loader.load(site.files[root])


def test_rpath_is_inherited_down_the_loading_chain():
    files = {
        "pkg/a.so": ("extension", elf("a", needed=["libb.so"], rpath=["$ORIGIN/deps"])),
        "pkg/deps/libb.so": ("extension", elf("b", needed=["libc_.so"])),
        "pkg/deps/libc_.so": ("extension", elf("c")),
    }
    result = run(files, "pkg/a.so")
    assert not result.missing_libraries
    how = {n.key: n.how for n in result.closure}
    assert how["pkg/deps/libc_.so"] == "RPATH $ORIGIN/deps of pkg/a.so"


def test_runpath_is_not_inherited_and_hides_rpath():
    files = {
        "pkg/a.so": ("extension", elf("a", needed=["libb.so"], runpath=["$ORIGIN/deps"])),
        "pkg/deps/libb.so": ("extension", elf("b", needed=["libc_.so"])),
        "pkg/deps/libc_.so": ("extension", elf("c")),
    }
    result = run(files, "pkg/a.so")
    assert [(m.soname, m.needed_by) for m in result.missing_libraries] == [("libc_.so", "pkg/deps/libb.so")]
    files["pkg/a.so"] = ("extension", elf("a", needed=["libb.so"], rpath=["$ORIGIN/deps"], runpath=["$ORIGIN/x"]))
    result = run(files, "pkg/a.so")
    assert result.missing_libraries[0].soname == "libb.so" and result.missing_libraries[0].searched == ("$ORIGIN/x",)


def test_paths_outside_the_site_are_not_searched():
    files = {"a.so": ("extension", elf("a", needed=["libz_.so"], rpath=["/build/lib", "$ORIGIN/../lib"])),
             "lib/libz_.so": ("extension", elf("z"))}
    result = run(files, "a.so")
    (m,) = result.missing_libraries
    assert m.soname == "libz_.so" and m.searched == ("/build/lib", "$ORIGIN/../lib")


def test_renamed_vendored_copy_answers_to_its_soname():
    """auditwheel renames `libfoo.so.1` to `libfoo-1a2b3c4d.so.1` but keeps DT_SONAME: a later
    DT_NEEDED `libfoo.so.1` in the same load matches the copy already loaded."""
    files = {
        "pkg/a.so": ("extension", elf("a", needed=["libfoo-1a2b3c4d.so.1", "libfoo.so.1"], runpath=["$ORIGIN/../pkg.libs"])),
        "pkg.libs/libfoo-1a2b3c4d.so.1": ("extension", elf("foo", soname="libfoo.so.1")),
    }
    assert not run(files, "pkg/a.so").missing_libraries


def test_symbols_interpreter_system_and_target():
    refs = table(undefined=["PyObject_GetAttr", "dlsym", "__libc_single_threaded", "nowhere"],
                 weak_undefined=["__gmon_start__"])
    files = {"a.so": ("extension", elf("a", needed=["libc.so.6"], symbols=refs))}
    result = run(files, "a.so")
    assert [u.symbol for u in result.unresolved] == ["__libc_single_threaded", "nowhere"]  # GLIBC_2.32 > 2.28
    assert all(u.status == "missing" for u in result.unresolved)
    result = run(files, "a.so", system_target(glibc="2.34"))
    assert [u.symbol for u in result.unresolved] == ["nowhere"]


def test_hidden_definitions_do_not_count_and_exports_do():
    files = {
        "a.so": ("extension", elf("a", needed=["libb.so"], runpath=["$ORIGIN"],
                                  symbols=table(undefined=["shown", "secret"]))),
        "libb.so": ("extension", elf("b", symbols=table(defined=["shown"], hidden=["secret"]))),
    }
    assert [u.symbol for u in run(files, "a.so").unresolved] == ["secret"]


def test_version_needs_of_a_non_system_library():
    needs = [VersionRequirement("libx.so.1", "LIBX_2.0", 2, 0)]
    refs = table(undefined=["libx_bar"], versions={"libx_bar": (2, "LIBX_2.0", "libx.so.1")})
    v1 = elf("x", soname="libx.so.1", verdefs=[VersionDefinition(1, "libx.so.1", 1), VersionDefinition(2, "LIBX_1.0", 0)],
             symbols=table(defined=["libx_bar"], versions={"libx_bar": (2, "LIBX_1.0", None)}))
    files = {"a.so": ("extension", elf("a", needed=["libx.so.1"], rpath=["$ORIGIN"], symbols=refs, verneeds=needs)),
             "libx.so.1": ("extension", v1)}
    result = run(files, "a.so")
    assert [(v.file, v.version, v.system) for v in result.version_failures] == [("libx.so.1", "LIBX_2.0", False)]
    assert [u.symbol for u in result.unresolved] == ["libx_bar"]  # defined, but at another version
    assert not result.loads


def test_system_version_beyond_target():
    needs = [VersionRequirement("libc.so.6", "GLIBC_2.34", 3, 0), VersionRequirement("libc.so.6", "GLIBC_2.17", 2, 0)]
    files = {"a.so": ("extension", elf("a", needed=["libc.so.6"], verneeds=needs))}
    (v,) = run(files, "a.so").version_failures
    assert (v.version, v.system, v.cap) == ("GLIBC_2.34", True, "GLIBC_2.28")
    assert not run(files, "a.so", system_target()).version_failures  # no target: not judged


def test_torch_import_and_unread_cuda_libraries():
    """Torch's closure is loaded first; a placeholder (CUDA library known from metadata) makes an
    unresolved non-torch symbol unverified, a torch one stays missing."""
    refs = table(undefined=["_ZN3c104cuda3fooEv", "cublasThing", "cudaMalloc"],
                 versions={"cudaMalloc": (2, "libcudart.so.13", "libcudart.so.13")})
    files = {
        "torch/_C.so": ("torch", elf("C", needed=["libtorch.so"], rpath=["$ORIGIN/lib"])),
        "torch/lib/libtorch.so": ("torch", elf("t", needed=["libcudart.so.13"], rpath=["$ORIGIN/../../nvidia/cu13/lib"])),
        "nvidia/cu13/lib/libcudart.so.13": ("cuda", None),
        "ext/e.so": ("extension", elf("e", needed=["libtorch.so", "libcudart.so.13"], symbols=refs)),
    }
    result = run(files, "ext/e.so", torch_roots=["torch/_C.so"])
    assert not result.missing_libraries
    status = {u.symbol: u.status for u in result.unresolved}
    assert status == {"_ZN3c104cuda3fooEv": "missing", "cublasThing": "unverified"}
    assert result.by_version_name == [("cudaMalloc@libcudart.so.13", "nvidia/cu13/lib/libcudart.so.13")]
    how = {n.key: n.how for n in result.closure}
    assert how["torch/lib/libtorch.so"].startswith("loaded by `import torch`")


def test_torch_that_cannot_import():
    files = {"torch/_C.so": ("torch", elf("C", needed=["libtorch.so"], rpath=["$ORIGIN/lib"])),
             "torch/lib/libtorch.so": ("torch", elf("t", needed=["libcudart.so.13"]))}
    site = FakeSite(files)
    loader = Loader(site, system_target())
    imported = loader.import_torch([site.files["torch/_C.so"]], [])
    assert [(f.soname, f.needed_by, f.in_torch_import) for f in imported.failures] == \
        [("libcudart.so.13", "torch/lib/libtorch.so", True)]


@pytest.mark.parametrize("soname", ["libcuda.so.1", "libnvidia-ml.so.1"])
def test_driver_libraries_are_present_but_unread(soname):
    files = {"a.so": ("extension", elf("a", needed=[soname], symbols=table(undefined=["cuInit"])))}
    result = run(files, "a.so")
    assert not result.missing_libraries and result.closure[-1].origin == "driver"
    assert [(u.symbol, u.status) for u in result.unresolved] == [("cuInit", "unverified")]


def test_versioned_reference_to_a_system_library_outside_the_four_families():
    refs = table(undefined=["inflateReset2", "inflateMadeUp"],
                 versions={"inflateReset2": (2, "ZLIB_1.2.3.4", "libz.so.1"),
                           "inflateMadeUp": (2, "ZLIB_1.2.3.4", "libz.so.1")})
    files = {"a.so": ("extension", elf("a", needed=["libz.so.1"], symbols=refs))}
    result = run(files, "a.so")
    assert [(u.symbol, u.status) for u in result.unresolved] == [("inflateMadeUp", "missing")]
