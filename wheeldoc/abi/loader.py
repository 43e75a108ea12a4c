"""What ld.so does when Python imports an extension module after `import torch` (RTLD_NOW).

The model, step by step (glibc's `dl_open`, simplified where noted):

1. `import torch` has already loaded `torch/_C*.so` and its DT_NEEDED closure (found through
   the RPATH/RUNPATH `$ORIGIN/lib`, `$ORIGIN/../../nvidia/cu13/lib`, ... of torch's libraries),
   and `torch/lib/libtorch_global_deps.so` with RTLD_GLOBAL. A torch without `_C` (a minimal
   build) counts as having loaded all of `torch/lib`. A needed library torch itself cannot find
   is a failure of its own: torch does not import. The CUDA libraries are leaves here (their
   own dependencies are NVIDIA's business and not followed).
2. The extension's DT_NEEDED closure, breadth first. A soname is found, in ld.so's order:
   among the objects already loaded (by soname), then in the requester's DT_RUNPATH (or
   DT_RPATH when there is no RUNPATH) with `$ORIGIN` expanded inside the virtual site (paths
   that leave it, such as a build machine's `/__w/_temp/.../lib`, do not exist on the target;
   without a RUNPATH, the RPATH of the objects that loaded the requester follows, up the chain),
   then among the target platform's system libraries (the manylinux policy's list, the dynamic
   loader) and the NVIDIA driver's (`libcuda.so.1`: present on a GPU machine, outside Python).
   A soname found nowhere is the first failure (`cannot open shared object file`).
3. Every version need of the newly loaded objects (`.gnu.version_r`) must be defined by the
   file it names: system versions (GLIBC_2.34, GLIBCXX_3.4.32, CXXABI_1.3.15, GCC_12.0.0) are
   judged against the target's caps, others against the library's `.gnu.version_d`.
4. Every non-weak undefined symbol of the newly loaded extension objects must be defined
   (GLOBAL, WEAK or GNU_UNIQUE binding, default or protected visibility) in the lookup scope:
   the global scope (the Python interpreter: `Py*` / `_Py*` come from the executable or its
   libpython; glibc; what torch loaded RTLD_GLOBAL) and the extension's closure, including
   what the already loaded objects depend on. Versioned references match by version name.
   System libraries are judged by name through wheeldoc's table and the target's caps.

Each extension object is loaded on its own (as one `dlopen` right after `import torch`), so
the verdict of one does not depend on the order Python imports them in.

Libraries are read lazily: torch's are read to follow its import; CUDA libraries only when a
symbol is still unresolved. A symbol that is still unresolved while some library in scope
could not be read (a CUDA library known from metadata only, a system library wheeldoc has no
names for, the driver) is "unverified" rather than missing — unless it belongs to torch
(`c10::`, `at::`, `torch::`, `caffe2::`, `aoti_torch_*`), whose libraries are always read.
"""

from __future__ import annotations

import posixpath
import re
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from wheeldoc.abi.site import Entry, Site, defines, normalize
from wheeldoc.core.errors import LimitExceeded
from wheeldoc.data.abi_tables import (GLIBC_LIBS, SystemTarget, distro_libraries, manylinux_table, split_version,
                                     system_names)

INTERPRETER = "python"
DISTRO = "a distribution library outside the manylinux policy: present where its package is installed"
PRELOADED = "preloaded by name by `import torch` (torch/__init__.py, _load_global_deps)"
MAX_PROBES = 1_000_000  # lookups of a DT_NEEDED name in a search folder that exists, per load
_TORCH_OWNED = re.compile(r"^(?:vtable for |typeinfo for |typeinfo name for |VTT for |guard variable for )?"
                          r"(?:c10|at|torch|caffe2|aoti_torch)::")
_TORCH_C_NAMES = ("aoti_torch_", "THP", "torch_")


@dataclass(frozen=True)
class Node:
    """One object in a load: a site file, a system library or the driver."""

    key: str  # site path, "system:<soname>" or "driver:<soname>"
    soname: str
    origin: str  # "extension", "torch", "cuda", "system" or "driver"
    package: str | None = None
    how: str = ""  # how ld.so found it
    placeholder: bool = False  # a CUDA library known from metadata only

    @property
    def display(self) -> str:
        return self.key.split(":", 1)[1] if self.origin in ("system", "driver") else self.key


@dataclass(frozen=True)
class MissingLibrary:
    soname: str
    needed_by: str  # the requesting object's path
    searched: tuple[str, ...]  # the RUNPATH / RPATH directories that were tried (expanded)
    in_torch_import: bool = False  # torch itself needs it: `import torch` fails


@dataclass(frozen=True)
class VersionFailure:
    library: str  # the object that needs the version
    file: str  # the library the version is required from
    version: str
    system: bool  # a GLIBC/GLIBCXX/CXXABI/GCC version judged against the target
    cap: str | None = None  # the target's newest version of that family


@dataclass(frozen=True)
class Unresolved:
    symbol: str  # the mangled name
    version: str | None
    libraries: tuple[str, ...]  # the extension objects that reference it
    status: str  # "missing" or "unverified"
    unread: tuple[str, ...] = ()  # libraries in scope that could define it but were not read


@dataclass
class LoadResult:
    """The outcome of loading one extension object (a root) after `import torch`."""

    root: str
    closure: list[Node] = field(default_factory=list)
    missing_libraries: list[MissingLibrary] = field(default_factory=list)
    version_failures: list[VersionFailure] = field(default_factory=list)
    unresolved: list[Unresolved] = field(default_factory=list)
    by_version_name: list[tuple[str, str]] = field(default_factory=list)  # (symbol@version, library)
    checked: list[str] = field(default_factory=list)  # extension objects whose symbols were checked
    unreadable: list[str] = field(default_factory=list)  # extension objects of the load not read
    references: dict[str, tuple[str, ...]] = field(default_factory=dict)  # symbol -> referencing objects

    @property
    def system_packages(self) -> list[str]:
        """Libraries of the load that only the system's distribution provides (`libnuma.so.1`)."""
        return [n.how.rsplit("(", 1)[-1].rstrip(")") + f": {n.soname}" for n in self.closure if n.how.startswith(DISTRO)]

    @property
    def missing_symbols(self) -> list[Unresolved]:
        return [u for u in self.unresolved if u.status == "missing"]

    @property
    def loads(self) -> bool:
        return not (self.missing_libraries or self.missing_symbols
                    or any(v for v in self.version_failures))

    @property
    def verdict(self) -> str:
        """incompatible (a failure found), unknown (an object of the load could not be read,
        so nothing can be said about its needs), or compatible."""
        if not self.loads:
            return "incompatible"
        return "unknown" if self.unreadable else "compatible"


@dataclass
class TorchImport:
    loaded: dict[str, Node]  # soname -> node
    edges: dict[str, list[str]]  # node key -> dependency node keys
    global_keys: list[str]  # loaded RTLD_GLOBAL (libtorch_global_deps.so and its closure)
    failures: list[MissingLibrary]
    nodes: dict[str, Node]


class Loader:
    def __init__(self, site: Site, target: SystemTarget) -> None:
        self.site = site
        self.target = target
        self.system_sonames = frozenset(target.libraries or manylinux_table()["policies"]["manylinux_2_28"]["libraries"]) \
            | frozenset(GLIBC_LIBS) | frozenset(manylinux_table()["system_sonames"])
        self.driver_sonames = frozenset(manylinux_table()["driver_sonames"])
        self.torch: TorchImport | None = None
        self.loader_of: dict[str, Node] = {}  # object -> the object whose DT_NEEDED loaded it
        self._plans: dict = {}
        self._dirs: set[str] | None = None
        self._probes = 0

    # -- 1. import torch ----------------------------------------------------------------------
    def import_torch(self, roots: list[Entry], global_roots: list[Entry],
                     preloads: tuple[list[Entry], list[Entry]] | None = None) -> TorchImport:
        """`import torch`: libtorch_global_deps.so (RTLD_GLOBAL), then the CUDA libraries its
        `__init__.py` preloads by name (`preloads`: after the global deps loaded with libcudart,
        and instead, when they failed on a CUDA library), then `torch._C` and its closure."""
        nodes: dict[str, Node] = {}
        loaded: dict[str, Node] = {}
        edges: dict[str, list[str]] = {}
        failures: list[MissingLibrary] = []

        self.site.prefetch(roots + global_roots)

        def walk(starts: list[Entry], how: str = "loaded by `import torch`") -> list[str]:
            order: list[str] = []
            queue = deque()
            for e in starts:
                node = self._node(e, how)
                key_soname = self._soname(e)
                if key_soname not in loaded:
                    loaded[key_soname] = node
                    nodes[node.key] = node
                    queue.append(node)
                order.append(loaded[key_soname].key)
            while queue:
                node = queue.popleft()
                entry = self.site.files.get(node.key)
                info = self.site.elf(entry) if entry is not None and node.origin != "cuda" else None
                deps: list[str] = []
                found = [self._resolve(node, info, soname, loaded) for soname in (info.needed if info else ())]
                self.site.prefetch([self.site.files[d.key] for d, _ in found
                                    if d is not None and d.origin in ("torch", "extension") and d.key in self.site.files])
                for soname, (dep, searched) in zip(info.needed if info else (), found):
                    if dep is None:
                        failures.append(MissingLibrary(soname, node.key, searched, True))
                        continue
                    deps.append(dep.key)
                    if dep.key not in nodes:
                        self.loader_of.setdefault(dep.key, node)
                        if dep.origin not in ("system", "driver"):
                            dep = replace(dep, how=f"loaded by `import torch` ({dep.how})")
                        nodes[dep.key] = dep
                        loaded[soname] = dep
                        if dep.origin in ("torch", "cuda", "extension"):
                            queue.append(dep)
                    if dep.key not in order:
                        order.append(dep.key)
                edges[node.key] = deps
            return order

        global_keys = walk(global_roots) if global_roots else []
        after, on_failure = preloads or ([], [])
        stems = {e.name.split(".so", 1)[0] for e in on_failure}
        if failures and on_failure and any(f.soname.split(".so", 1)[0] in stems for f in failures):
            # torch's `except OSError`: preload its CUDA table, then open the global deps again
            nodes.clear(), loaded.clear(), edges.clear(), failures.clear()
            self.loader_of = {}
            walk(on_failure, PRELOADED)
            global_keys = walk(global_roots)
        elif any(s.startswith("libcudart.so") for s in loaded):  # torch checks /proc/self/maps so
            walk(after, PRELOADED)
        walk(roots)
        self.torch = TorchImport(loaded, edges, global_keys, failures, nodes)
        self._torch_loaders = dict(self.loader_of)
        return self.torch

    # -- 2-4. load one extension object ---------------------------------------------------------
    def load(self, root: Entry) -> LoadResult:
        torch = self.torch or TorchImport({}, {}, [], [], {})
        self.loader_of = dict(getattr(self, "_torch_loaders", {}))  # each root: its own dlopen
        self._plans = {}  # RPATH is inherited along this load's chain: plans are per load
        self._probes = 0
        result = LoadResult(root.path)
        loaded = dict(torch.loaded)
        nodes = dict(torch.nodes)
        edges = dict(torch.edges)
        root_node = self._node(root, "the extension module")
        order = [root_node.key]
        nodes[root_node.key] = root_node
        new = {root_node.key}
        queue = deque([root_node])
        seen = {root_node.key}
        while queue:
            node = queue.popleft()
            if node.key in new:
                entry = self.site.files[node.key]
                info = self.site.elf(entry)
                deps = []
                for soname in (info.needed if info is not None else ()):
                    dep, searched = self._resolve(node, info, soname, loaded)
                    if dep is None:
                        result.missing_libraries.append(MissingLibrary(soname, node.key, searched))
                        continue
                    deps.append(dep.key)
                    if dep.key not in nodes:
                        self.loader_of.setdefault(dep.key, node)
                        nodes[dep.key] = dep
                        loaded[soname] = dep
                        if dep.origin in ("extension", "torch"):
                            new.add(dep.key)
                        if dep.origin == "extension":  # ld.so also matches later needs by DT_SONAME:
                            dep_info = self.site.elf(self.site.files[dep.key])  # auditwheel's renamed
                            if dep_info is not None and dep_info.soname:  # copies keep the original
                                loaded.setdefault(dep_info.soname, dep)
                edges[node.key] = deps
            for dep_key in edges.get(node.key, ()):
                if dep_key not in seen:
                    seen.add(dep_key)
                    order.append(dep_key)
                    queue.append(nodes[dep_key])
        result.closure = [nodes[k] for k in order]
        result.unreadable = [k for k in order if k in new and k in self.site.unreadable]
        checked = [nodes[k] for k in order if k in new and nodes[k].origin == "extension"]
        result.checked = [n.key for n in checked]
        scope = self._scope(torch, nodes, order)
        self._check_versions(result, checked, nodes, edges)
        self._check_symbols(result, checked, scope)
        return result

    # -- resolution ------------------------------------------------------------------------------
    def _resolve(self, requester: Node, info, soname: str, loaded: dict[str, Node]) -> tuple[Node | None, tuple[str, ...]]:
        if soname in loaded:
            return loaded[soname], ()
        if "/" in soname:  # a path in DT_NEEDED: used as it is, relative to the working directory
            return None, ()
        raws, probes = self._plan(requester, info)
        self._probes += len(probes)
        if self._probes > MAX_PROBES:
            raise LimitExceeded(requester.display, f"more than {MAX_PROBES:,} DT_NEEDED x RUNPATH/RPATH "
                                "lookups (limit MAX_PROBES): DT_NEEDED entries times search folders")
        for at, (owner, kind, raw, folder) in probes:
            entry = self.site.find(folder, soname)
            if entry is not None:
                return self._node(entry, f"{kind} {raw} of {owner.display}"), raws[:at + 1]
        searched = raws
        if soname in self.system_sonames or soname.startswith("ld-linux"):
            return Node(f"system:{soname}", soname, "system", how=f"system library ({self.target.label})"), tuple(searched)
        if soname in self.driver_sonames:
            return Node(f"driver:{soname}", soname, "driver", how="the NVIDIA driver (outside Python)"), tuple(searched)
        package = distro_libraries().get(soname)
        if package is not None and not soname.startswith(("libcuda", "libnv", "libcu")):
            return Node(f"system:{soname}", soname, "system",
                        how=f"{DISTRO} (Debian/Ubuntu package {package})"), tuple(searched)
        return None, tuple(searched)

    def _plan(self, requester: Node, info) -> tuple[tuple[str, ...], list]:
        """The requester's search path once: (every folder tried, as written; the folders worth a
        lookup: `$ORIGIN` ones, expanded, each once, that hold something in the site). One plan
        per requester, so N DT_NEEDED entries and M RUNPATH folders cost N + M, not N x M,
        unless the M folders really exist (then MAX_PROBES bounds it)."""
        key = (requester.key, id(info))
        plan = self._plans.get(key)
        if plan is not None:
            return plan
        if self._dirs is None:
            self._dirs = {posixpath.dirname(p) for p in self.site.files}
        raws: list[str] = []
        probes: list = []
        seen: set[str] = set()
        for owner, kind, raw in self._search_path(requester, info):
            if not raw:
                continue
            raws.append(raw)
            if not raw.startswith(("$ORIGIN", "${ORIGIN}")):
                continue  # an absolute build-machine path: not on the target
            origin_dir = owner.key.rsplit("/", 1)[0] if "/" in owner.key else ""
            expanded = raw.replace("${ORIGIN}", "$ORIGIN").replace("$ORIGIN", "/" + origin_dir)
            folder = normalize(expanded.lstrip("/"))
            if folder is None or folder in seen or folder not in self._dirs:
                continue
            seen.add(folder)
            probes.append((len(raws) - 1, (owner, kind, raw, folder)))
        plan = self._plans[key] = (tuple(raws), probes)
        return plan

    def _search_path(self, requester: Node, info) -> list[tuple[Node, str, str]]:
        """(owner, "RUNPATH"/"RPATH", directory) in ld.so's order: the requester's RUNPATH alone
        when it has one; else its RPATH, then the RPATH of the object that loaded it, and so
        on up (objects with a RUNPATH have their RPATH ignored)."""
        if info is not None and info.runpath:
            return [(requester, "RUNPATH", d) for d in info.runpath]
        out: list[tuple[Node, str, str]] = []
        node, seen = requester, set()
        while node is not None and node.key not in seen:
            seen.add(node.key)
            entry = self.site.files.get(node.key)
            node_info = info if node is requester else (self.site.elf(entry) if entry is not None else None)
            if node_info is not None and not node_info.runpath:
                out += [(node, "RPATH", d) for d in node_info.rpath]
            node = self.loader_of.get(node.key)
        return out

    def _node(self, entry: Entry, how: str) -> Node:
        return Node(entry.path, self._soname(entry), entry.origin, entry.package, how, entry.placeholder)

    @staticmethod
    def _soname(entry: Entry) -> str:
        """The name ld.so matches later DT_NEEDED entries against: the file name it was found
        under (for the files of wheels, their SONAME), known without reading the file."""
        return entry.name

    def _scope(self, torch: TorchImport, nodes: dict[str, Node], order: list[str]) -> list[Node]:
        keys = [f"system:{s}" for s in GLIBC_LIBS] + list(torch.global_keys) + order
        out, seen = [], set()
        for k in keys:
            if k in seen:
                continue
            seen.add(k)
            out.append(nodes.get(k) or Node(k, k.split(":", 1)[1], "system", how="global scope"))
        return out

    # -- 3. version needs ------------------------------------------------------------------------
    def _check_versions(self, result: LoadResult, checked: list[Node], nodes: dict[str, Node],
                        edges: dict[str, list[str]]) -> None:
        for node in checked:
            info = self.site.elf(self.site.files[node.key])
            if info is None:
                continue
            deps = {nodes[k].soname: nodes[k] for k in edges.get(node.key, ()) if k in nodes}
            for need in info.version_requirements:
                if need.weak:
                    continue
                dep = deps.get(need.library)
                if dep is None:
                    continue  # the library itself is missing: reported as such
                if dep.origin == "system" or split_version(need.name):
                    allowed = self.target.allows(need.name)
                    if allowed is False:
                        family = split_version(need.name)[0]
                        result.version_failures.append(VersionFailure(node.key, need.library, need.name, True,
                                                                      self.target.cap_text(family)))
                    continue
                if dep.placeholder or dep.origin == "driver":
                    continue
                dep_info = self.site.elf(self.site.files[dep.key])
                if dep_info is not None and need.name not in dep_info.defined_versions and need.name != dep_info.soname:
                    result.version_failures.append(VersionFailure(node.key, need.library, need.name, False))

    # -- 4. symbols ------------------------------------------------------------------------------
    def _check_symbols(self, result: LoadResult, checked: list[Node], scope: list[Node]) -> None:
        refs: dict[tuple[str, str | None], list[str]] = {}
        ref_files: dict[tuple[str, str | None], str] = {}  # versioned references: the file named
        for node in checked:
            info = self.site.elf(self.site.files[node.key])
            if info is None:
                continue
            for sym in info.symbols.undefined():
                if sym.binding == "WEAK" or sym.binding == "LOCAL":
                    continue
                version = sym.version.name if sym.version is not None else None
                refs.setdefault((sym.name, version), []).append(node.key)
                if sym.version is not None and sym.version.library:
                    ref_files[(sym.name, version)] = sym.version.library
        result.references = {name: tuple(libs) for (name, _), libs in refs.items()}
        pending = dict(refs)
        failed_versions = {(v.library, v.version) for v in result.version_failures}
        names = system_names()
        sonames_in_scope = {n.soname for n in scope}
        unread: dict[tuple[str, str | None], list[str]] = {}

        def settle(resolved: Iterable[tuple[str, str | None]]) -> None:
            for key in list(resolved):
                pending.pop(key, None)

        # the interpreter and the system libraries
        done = []
        for (name, version), libs in pending.items():
            if version is None and (name.startswith("Py") or name.startswith("_Py")):
                done.append((name, version))
            elif version is not None and split_version(version):
                if any((lib, version) in failed_versions for lib in libs) or self.target.allows(version) is not False:
                    done.append((name, version))  # judged by version name (failures reported above)
            elif version is not None and name in names.get(ref_files.get((name, version), ""), {}) \
                    and ref_files[(name, version)] in sonames_in_scope:
                done.append((name, version))  # zlib's ZLIB_1.2.3.4 and the like: a system library's name
            elif version is None:
                for soname in sonames_in_scope:
                    oldest = names.get(soname, {}).get(name)
                    if oldest is not None and self.target.allows(oldest) is not False:
                        done.append((name, version))
                        break
        settle(done)

        # libraries already read (the extension's own, torch's), then the rest, lazily
        def consult(node: Node) -> None:
            entry = self.site.files.get(node.key)
            if entry is None:
                return
            exports = self.site.exports(entry)
            plain = self.site.unversioned(entry)
            settle([k for k in pending if defines(exports, k[0], k[1], unversioned_object=plain)])

        files = [n for n in scope if n.key in self.site.files]
        for node in files:
            if pending and not self.site.files[node.key].placeholder and (
                    self.site.is_read(self.site.files[node.key]) or node.origin != "cuda"):
                consult(node)
        for node in files:  # CUDA libraries: those a versioned reference names first
            if pending and node.origin == "cuda" and not node.placeholder and not self.site.is_read(self.site.files[node.key]):
                if any(v == node.soname for _, v in pending):
                    consult(node)
        for node in files:
            if pending and node.origin == "cuda" and not node.placeholder and not self.site.is_read(self.site.files[node.key]):
                consult(node)

        # placeholders: a reference versioned with the library's soname matches by version name
        for node in scope:
            if node.placeholder:
                hits = [k for k in pending if k[1] == node.soname]
                result.by_version_name.extend((f"{n}@{v}", node.display) for n, v in hits)
                settle(hits)
        cannot_read = [n.display for n in scope
                       if n.placeholder or n.origin == "driver" or (n.key in self.site.unreadable)
                       or (n.origin == "system" and n.soname not in names and n.soname not in GLIBC_LIBS)]
        for (name, version), libs in sorted(pending.items(), key=lambda kv: kv[0][0]):
            owned = torch_owned(name)
            status = "missing" if owned or not cannot_read else "unverified"
            unread[(name, version)] = cannot_read
            result.unresolved.append(Unresolved(name, version, tuple(dict.fromkeys(libs)), status,
                                                () if status == "missing" else tuple(cannot_read)))


def torch_owned(mangled: str, demangled: str | None = None) -> bool:
    """Whether a symbol belongs to torch (so only torch's libraries can define it)."""
    if mangled.startswith(_TORCH_C_NAMES):
        return True
    if demangled is None:
        from wheeldoc.binary.demangle import demangle

        demangled = demangle(mangled)
    return bool(_TORCH_OWNED.match(demangled))
