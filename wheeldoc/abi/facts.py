"""Gather both sides of `wheeldoc abi EXT [TORCH]`, run the loader model, and derive the facts
the WD2xx rules read.

Where the CUDA libraries come from (the issue leaves it open; decided here):
- an installed environment: the `nvidia-*` / `cuda-*` distributions installed beside torch, read
  as files;
- a torch wheel or requirement with index options (`--find-links`, `--index-url`, ...): torch's
  CUDA requirements (its Requires-Dist on `nvidia-*` and `cuda-toolkit[...]`, markers evaluated
  for the target) are resolved with the real `uv pip compile`, and the wheels uv picks from local
  indexes and folders are read in place, lazily (only libraries a symbol needs are parsed).
  Remote CUDA wheels are not downloaded (3 GB to check a few symbols): they are judged as below;
- otherwise, by torch's Requires-Dist alone: wheeldoc's table (`wheeldoc/data/cuda_sonames.json`,
  read from the real CUDA 13 wheels) says which libraries each package installs and where;
  those are present by soname, references versioned with their soname match by version name,
  and the report lists them as judged from metadata.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from wheeldoc.abi.index_pack import CXX11, OLD_STRING, prefixed
from wheeldoc.abi.site import Entry, Site
from wheeldoc.abi.loader import Loader, LoadResult, TorchImport, torch_owned
from wheeldoc.data.abi_tables import SystemTarget
from wheeldoc.core.errors import InputError

if TYPE_CHECKING:
    from wheeldoc.abi.fetch import IndexOptions
    from wheeldoc.core.cache import Cache
    from wheeldoc.binary.members import DistMetadata, MemberSource

_CUDART = re.compile(r"^libcudart(?:[.-][0-9a-f]{8})?\.so\.(\d+)$")
_PYTAG = re.compile(r"^cp(\d)(\d+)$")
_SO_PYTHON = re.compile(r"\.cpython-(\d)(\d+)[a-z]*-")
MAX_RELATIVES = 200
_CUDA_PACKAGE = re.compile(r"(^|-)(nvidia|cuda)(-|$)")  # nvidia-cublas, cuda-toolkit, nvidia-nccl-cu13


@dataclass
class Side:
    """One side of the question: the sources it installs and what they say about themselves."""

    label: str  # for messages: the path or requirement the user gave
    sources: list[tuple[MemberSource, str]] = field(default_factory=list)  # (source, package name)
    name: str | None = None  # canonical distribution name
    version: str | None = None
    metadata: DistMetadata | None = None
    platform_tags: tuple[str, ...] = ()
    python_tags: tuple[str, ...] = ()
    root_filter: str | None = None  # a site path: only this extension object is a root

    def close(self) -> None:
        from wheeldoc.abi.site import cancel_read_ahead

        for source, _ in self.sources:
            cancel_read_ahead(source)
            source.close()


@dataclass(frozen=True)
class CudaLink:
    library: str  # the extension object
    soname: str
    major: int
    vendored: bool  # a renamed copy inside the extension's wheel (`libcudart.faf08d9a.so.13`)


@dataclass(frozen=True)
class Relative:
    symbol: str  # mangled
    demangled: str
    library: str  # the torch library exporting it
    change: str  # "added a parameter to", "removed a parameter from", "changed the signature of"


@dataclass
class AbiFacts:
    extension: Side
    torch: Side
    target: SystemTarget
    site: Site
    results: list[LoadResult]
    torch_import: TorchImport
    torch_build: str  # "CUDA 13.0", "CPU-only", "unknown"
    torch_cuda: str | None  # version.py's cuda
    cuda_mode: str  # "environment", "wheels", "metadata", "none"
    cuda_packages: list[str]  # the CUDA packages considered, with where they came from
    cuda_unknown: list[str]  # CUDA requirements wheeldoc could not map to libraries
    demangled: dict[str, str] = field(default_factory=dict)
    relatives: dict[str, Relative] = field(default_factory=dict)
    pin: str | None = None  # the extension's requirement on torch, as written
    pin_satisfied: bool | None = None
    torch_flavour: str | None = None  # "cxx11", "pre-cxx11" or None (no std::string in its API)
    ext_cudart: list[CudaLink] = field(default_factory=list)
    torch_cudart: list[int] = field(default_factory=list)
    python: str | None = None  # the target Python (markers, the pin), when known
    choices: dict[str, RunTimeChoice] = field(default_factory=dict)  # root -> why it may not be loaded

    @property
    def compatible(self) -> bool:
        return not self.torch_import.failures and all(r.loads for r in self.results)

    def root_verdict(self, result: LoadResult) -> str:
        return "incompatible" if self.torch_import.failures else result.verdict

    @property
    def verdict(self) -> str:
        """incompatible when an object that is loaded fails to load; unknown when none fails but
        one could not be read; else compatible. Objects the package chooses among at run time
        (abi/facts.run_time_choices) count only when chosen for this target, or, when the choice
        is not known here, as a group: one of them loading is enough."""
        if self.torch_import.failures:
            return "incompatible"
        verdicts = set()
        groups: dict[str, set[str]] = {}
        for r in self.results:
            choice = self.choices.get(r.root)
            if choice is None or choice.chosen is True:
                verdicts.add(self.root_verdict(r))
            elif choice.chosen is None and choice.group:
                groups.setdefault(choice.group, set()).add(self.root_verdict(r))
        for members in groups.values():
            verdicts.add("compatible" if "compatible" in members else
                         "unknown" if "unknown" in members else "incompatible")
        if "incompatible" in verdicts:
            return "incompatible"
        return "unknown" if "unknown" in verdicts else "compatible"

    @property
    def torch_display(self) -> str:
        name = self.torch.name or "torch"
        return f"{name} {self.torch.version}" if self.torch.version else self.torch.label


def analyze(ext: Side, torch: Side, *, target: SystemTarget, cuda: CudaPlan, cache: Cache | None,
            python: str | None = None, gpu: tuple[int, int] | None = None) -> AbiFacts:
    site = Site(cache)
    for source, package in ext.sources:
        site.add_source(source, "extension", package)
    for source, package in cuda.sources:
        site.add_source(source, "cuda", package)
    for source, package in torch.sources:
        site.add_source(source, "torch", package)
    for path, package in cuda.placeholders:
        site.add_placeholder(path, package)
    torch_entries = [e for e in site.files.values() if e.origin == "torch"]
    roots = [e for e in torch_entries if re.match(r"^torch/_C[.\-]", e.path)]
    global_roots = [e for e in torch_entries if e.path == "torch/lib/libtorch_global_deps.so"]
    if not roots:  # a minimal torch without its Python module: all of torch/lib counts as loaded
        roots = [e for e in torch_entries if e.path.startswith("torch/lib/")]
    ext_roots = extension_roots(site, ext.root_filter)
    build = torch_build(torch, site)
    preloads = torch_preloads(torch, site, build[1])
    loader = Loader(site, target)
    try:
        imported = loader.import_torch(roots, global_roots, preloads)
        results = [loader.load(root) for root in ext_roots]
    finally:
        site.close()
    facts = AbiFacts(ext, torch, target, site, results, imported, *build,
                     cuda.mode, cuda.described, cuda.unknown)
    facts.python = python
    facts.choices = run_time_choices([r.root for r in results], python, build[1], gpu, torch.version)
    _symbols(facts)
    _pin(facts)
    _cudart(facts, imported)
    return facts


@dataclass(frozen=True)
class RunTimeChoice:
    """An extension object that is not simply imported: Python or the package picks it."""

    reason: str
    group: str | None = None  # the alternatives it belongs to
    chosen: bool | None = None  # True: picked for this target; False: not; None: not known here


_PER_CUDA = re.compile(r"^(?P<stem>.+?)_(?P<flavour>cuda\d+|cpu|rocm\d*|xpu\d*|mps)(?P<tail>\.so(?:\.[\w.]+)?)$")
_PER_TORCH = re.compile(r"^(?P<stem>.+?)_torch(?P<tv>\d{2,3})-(?P<flavour>cpu|cuda|rocm)(?P<tail>\.so)$")
_NUMBERED = re.compile(r"^(?P<stem>.+?[a-z_])(?P<n>\d{1,2})(?P<tail>\.so)$")
_PER_SM = re.compile(r"(^|/)sm_?(\d{2,3})[af]?/")


def run_time_choices(roots: list[str], python: str | None, torch_cuda: str | None,
                     gpu: tuple[int, int] | None, torch_version: str | None = None) -> dict[str, RunTimeChoice]:
    """Extension objects that are loaded only on some targets, so one failing is not the
    package failing:

    - `x.cpython-310-x86_64-linux-gnu.so` beside `x.cpython-311-…`: CPython imports only the one
      with its own tag (a wheel that ships several, like vLLM's deep_gemm);
    - `libbitsandbytes_cuda128.so`, `…_cuda130.so`, `…_cpu.so`, `…_rocm64.so`: siblings differing
      in a backend token, one picked with ctypes by torch's CUDA version (`cuda` + `torch.version.cuda`
      without the dot; `cpu` for a CPU torch);
    - `sgl_kernel/sm90/common_ops.abi3.so` and `sgl_kernel/sm100/…`: the same module per GPU
      architecture, one imported by the GPU's compute capability (the newest not above it).
    """
    out: dict[str, RunTimeChoice] = {}
    py_tag = python.replace(".", "")[:3] if python else None
    for root in roots:
        m = _SO_PYTHON.search(root.rsplit("/", 1)[-1])
        if m and py_tag:
            tag = f"{m[1]}{m[2]}"
            if tag != py_tag:
                out[root] = RunTimeChoice(f"built for CPython {m[1]}.{m[2]}; the target's Python {python} "
                                          "imports only the module with its own tag", chosen=False)
    groups: dict[tuple[str, str, str], list[tuple[str, str]]] = {}
    for root in roots:
        folder, _, name = root.rpartition("/")
        m = _PER_CUDA.match(name)
        if m:
            groups.setdefault((folder, m["stem"], m["tail"]), []).append((root, m["flavour"]))
    for (folder, stem, tail), members in groups.items():
        if len(members) < 2:
            continue
        want = ("cuda" + torch_cuda.replace(".", "")) if torch_cuda else "cpu"
        names = {f for _, f in members}
        known = want in names
        group = f"{folder + '/' if folder else ''}{stem}_*{tail}"
        for root, flavour in members:
            chosen = (flavour == want) if known else None
            out.setdefault(root, RunTimeChoice(
                f"one of {len(members)} libraries ({group}) the package picks at run time by torch's backend"
                + (f" ({stem}_{want}{tail} for this torch)" if known else " (which one for this torch is not known here)"),
                group, chosen))
    # torch_c_dlpack_ext: libtorch_c_dlpack_addon_torch29-cuda.so, one per torch release and backend
    by_torch: dict[tuple[str, str], list[tuple[str, str, str]]] = {}
    for root in roots:
        folder, _, name = root.rpartition("/")
        m = _PER_TORCH.match(name)
        if m:
            by_torch.setdefault((folder, m["stem"]), []).append((root, m["tv"], m["flavour"]))
    for (folder, stem), members in by_torch.items():
        if len(members) < 2:
            continue
        major_minor = "".join(torch_version.split("+", 1)[0].split(".")[:2]) if torch_version else None
        want = (major_minor, "cuda" if torch_cuda else "cpu")
        known = any((tv, fl) == want for _, tv, fl in members)
        group = f"{folder + '/' if folder else ''}{stem}_torch*-*.so"
        for root, tv, fl in members:
            out.setdefault(root, RunTimeChoice(
                f"one of {len(members)} builds ({group}) the package picks by torch's release and backend"
                + (f" ({stem}_torch{want[0]}-{want[1]}.so for this torch)" if known else " (none is for this torch)"),
                group, ((tv, fl) == want) if known else False))
    # torchcodec: libtorchcodec_custom_ops4.so … 8.so, one per FFmpeg major, tried in turn at run time
    numbered: dict[tuple[str, str, str], list[str]] = {}
    for root in roots:
        if root in out:
            continue
        folder, _, name = root.rpartition("/")
        m = _NUMBERED.match(name)
        if m:
            numbered.setdefault((folder, m["stem"], m["tail"]), []).append(root)
    for (folder, stem, tail), members in numbered.items():
        if len(members) < 3:
            continue
        group = f"{folder + '/' if folder else ''}{stem}N{tail}"
        for root in members:
            out.setdefault(root, RunTimeChoice(
                f"one of {len(members)} numbered builds ({group}) tried in turn at run time: one loading is enough",
                group, None))
    per_sm: dict[str, list[tuple[str, int]]] = {}
    for root in roots:
        m = _PER_SM.search(root)
        if m:
            key = root[:m.start(2)] + "*" + root[m.end(2):]
            per_sm.setdefault(re.sub(r"sm_?\*[af]?/", "sm*/", key), []).append((root, int(m[2])))
    for key, members in per_sm.items():
        if len(members) < 2:
            continue
        pick = None
        if gpu is not None:
            cc = gpu[0] * 10 + gpu[1]
            fitting = [n for _, n in members if n <= cc]
            pick = max(fitting) if fitting else None
        for root, n in members:
            chosen = None if gpu is None else (n == pick)
            out.setdefault(root, RunTimeChoice(
                f"one of {len(members)} per-architecture builds ({key}) imported by the GPU's compute capability"
                + ("" if gpu is None else f" (sm_{pick} for this GPU)" if pick else " (none fits this GPU)"),
                key, chosen))
    return out


def torch_preloads(torch: Side, site: Site, cuda: str | None):
    """What this torch's `__init__.py` preloads (abi/preloads.py), located in the site: (after the
    global deps, on their failure), each a list of (soname, entry); None when it was not read."""
    from wheeldoc.abi.preloads import INIT, locate, read_preloads

    for source, _ in torch.sources:
        if source.member(INIT) is None:
            continue
        try:
            text = source.read_bytes(INIT, 8 << 20).decode("utf-8", "replace")
        except InputError:
            return None
        spec = read_preloads(text)
        if not spec.read:
            return None
        paths = list(site.files)
        major = cuda.split(".", 1)[0] if cuda else None

        def entries(preloads):
            return [site.files[path] for _, path in locate(preloads, paths, major, spec.cu_major_folder) if path]

        return entries(spec.after_global_deps), entries(spec.on_global_deps_failure)
    return None


def extension_roots(site: Site, only: str | None = None) -> list[Entry]:
    """The extension's objects that Python (or the package, through ctypes) loads itself: every
    shared object it ships except those another of its objects needs (they load as
    dependencies: the vendored copies in `*.libs/`, a bundled `libgfortran`, ...)."""
    ours = [e for e in site.files.values() if e.origin == "extension"]
    site.prefetch(ours)
    needed: set[str] = set()
    for e in ours:
        info = site.elf(e)
        if info is not None:
            needed.update(n.rsplit("/", 1)[-1] for n in info.needed)
    out = []
    for e in ours:
        if only is not None and e.path != only:
            continue
        if any(part.endswith(".libs") for part in e.path.split("/")[:-1]):
            continue
        info = site.elf(e)
        if e.name in needed or (info is not None and info.soname in needed):
            continue
        out.append(e)
    return sorted(out, key=lambda e: e.path)


def torch_build(torch: Side, site: Site) -> tuple[str, str | None]:
    cuda = None
    for source, _ in torch.sources:
        if source.member("torch/version.py") is not None:
            from wheeldoc.core.safeload import parse_version_py

            try:
                fields = parse_version_py(source.read_bytes("torch/version.py", 1 << 20), source.path)
            except InputError:
                break
            cuda = fields.get("cuda") if isinstance(fields.get("cuda"), str) else None
            if cuda:
                return f"CUDA {cuda}", cuda
            return ("ROCm" if fields.get("hip") else "CPU-only"), None
    from wheeldoc.core.torchbuild import classify_local

    local = torch.version.split("+", 1)[1] if torch.version and "+" in torch.version else None
    build = classify_local(local)
    if build is not None:
        return build.label, None
    has_c10_cuda = any(e.name == "libc10_cuda.so" for e in site.files.values() if e.origin == "torch")
    return ("CUDA" if has_c10_cuda else "CPU-only (no libc10_cuda.so)"), None


# -- symbols: demangled names, nearest relatives, C++ ABI flavour ------------------------------
def _symbols(facts: AbiFacts) -> None:
    from wheeldoc.binary.demangle import demangle_many

    names = {u.symbol for r in facts.results for u in r.unresolved}
    facts.demangled = demangle_many(sorted(names)) if names else {}
    missing = sorted({u.symbol for r in facts.results for u in r.missing_symbols
                      if torch_owned(u.symbol, facts.demangled.get(u.symbol))})
    if missing:
        facts.relatives = find_relatives(facts, missing[:MAX_RELATIVES])
    facts.torch_flavour = _torch_flavour(facts)


def _torch_entries(facts: AbiFacts) -> list[Entry]:
    return [e for e in facts.site.files.values() if e.origin == "torch" and facts.site.is_read(e)]


def find_relatives(facts: AbiFacts, symbols: list[str]) -> dict[str, Relative]:
    """For each missing torch symbol, an exported one with the same qualified name and another
    signature. A mangled name spells its qualified name first (`_ZN` [qualifiers] components
    `29c10_cuda_check_implementation`, or `_Z` and the name), so the candidates are the exported
    names that start alike, found by bisection in each library's sorted names."""
    from wheeldoc.binary.demangle import demangle_many, function_name

    libraries = [(e, _prefix_search(facts, e)) for e in _torch_entries(facts)]
    out: dict[str, Relative] = {}
    for sym in symbols:
        text = facts.demangled.get(sym, sym)
        qualified = function_name(text)
        ident = re.split(r"::", re.sub(r"<.*>", "", qualified))[-1]
        if not ident or not re.match(r"^[A-Za-z_]\w*$", ident):
            continue
        prefixes = _name_prefixes(sym, f"{len(ident)}{ident}")
        candidates: list[tuple[str, Entry]] = []
        for entry, search in libraries:
            for prefix in prefixes:
                candidates += [(name, entry) for name in search(prefix, 200 - len(candidates))]
        if not candidates:
            continue
        dem = demangle_many([c for c, _ in candidates])
        same = [(c, e) for c, e in candidates if c != sym and function_name(dem[c]) == qualified]
        if not same:
            continue
        import difflib

        best, entry = max(same, key=lambda ce: difflib.SequenceMatcher(None, dem[ce[0]], text).ratio())
        out[sym] = Relative(best, dem[best], entry.path, _change(text, dem[best]))
    return out


# The qualifiers a member function's nested name can carry (`_ZNK…` const, `_ZNR…` `&`, …).
_QUALIFIERS = tuple(r + v + k + ref for r in ("", "r") for v in ("", "V") for k in ("", "K") for ref in ("", "R", "O"))


def _name_prefixes(mangled: str, token: str) -> list[str]:
    """The prefixes every mangling of `mangled`'s qualified name starts with, whatever its
    parameters and qualifiers: `_ZN` + qualifiers + the components up to `token`, or `_Z` + token."""
    if mangled.startswith("_ZN"):
        i = 3
        while i < len(mangled) and mangled[i] in "rVKRO":
            i += 1
        at = mangled.find(token, i)
        if at < 0:
            return []
        rest = mangled[i: at + len(token)]
        return ["_ZN" + q + rest for q in _QUALIFIERS]
    return ["_Z" + token] if mangled.startswith("_Z" + token) else []


def _prefix_search(facts: AbiFacts, entry: Entry):
    """`search(prefix, limit)`: the library's first exported names (sorted) with that prefix."""
    exports = facts.site.exports(entry)
    indexed = getattr(exports, "with_prefix", None)  # the torch index: its names table is sorted
    if indexed is not None:
        return indexed
    names: list[str] = []

    def search(prefix: str, limit: int) -> list[str]:
        if not names:
            names.extend(sorted(exports))
        return [names[i] for i in prefixed(names, prefix, limit)]

    return search


def _change(old: str, new: str) -> str:
    a, b = _param_count(old), _param_count(new)
    if a is not None and b is not None and b > a:
        return "added a parameter to" if b - a == 1 else f"added {b - a} parameters to"
    if a is not None and b is not None and b < a:
        return "removed a parameter from" if a - b == 1 else f"removed {a - b} parameters from"
    return "changed the signature of"


def _param_count(demangled: str) -> int | None:
    text = re.sub(r"\s+(const|volatile|&&|&|noexcept)\s*$", "", demangled.strip())
    if not text.endswith(")"):
        return None
    depth, i = 0, len(text) - 1
    while i >= 0:
        ch = text[i]
        if ch in ")>":
            depth += 1
        elif ch in "(<":
            depth -= 1
            if depth == 0 and ch == "(":
                break
        i -= 1
    inner = text[i + 1: -1].strip()
    if not inner or inner == "void":
        return 0
    depth, count = 0, 1
    for ch in inner:
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        elif ch == "," and depth == 0:
            count += 1
    return count


def _torch_flavour(facts: AbiFacts) -> str | None:
    """cxx11 when torch's libraries export `std::__cxx11` names, pre-cxx11 when their API takes
    the old `std::string` (`Ss`), None when nothing read says."""
    old = False
    for e in _torch_entries(facts):
        if not e.path.endswith(("libc10.so", "libtorch.so", "libtorch_cpu.so")):
            continue
        info = facts.site.elf(e)
        marks = getattr(info.symbols, "cxx_marks", None) if info is not None else None
        if marks is not None:  # the torch index: known without decoding names
            cxx11, old_string = marks()
        else:
            names = facts.site.exports(e)
            cxx11 = any(CXX11 in n for n in names)
            old_string = any(OLD_STRING.search(n) for n in names if n.startswith("_Z"))
        if cxx11:
            return "cxx11"
        old = old or old_string
    return "pre-cxx11" if old else None


def ref_flavour(demangled: str) -> str | None:
    if "std::__cxx11::" in demangled:
        return "cxx11"
    if "std::basic_string<" in demangled or "std::string" in demangled:
        return "pre-cxx11"
    return None


# -- the pin and the CUDA runtime ----------------------------------------------------------------
def _pin(facts: AbiFacts) -> None:
    meta = facts.extension.metadata
    if meta is None or facts.torch.version is None or facts.torch.name is None:
        return
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    for line in meta.requires_dist:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(req.name) != facts.torch.name:
            continue
        if req.marker is not None and not req.marker.evaluate({**_markers(facts), "extra": ""}):
            continue
        facts.pin = line.strip()
        try:
            facts.pin_satisfied = req.specifier.contains(Version(facts.torch.version), prereleases=True)
        except InvalidVersion:
            facts.pin_satisfied = None
        return


def _markers(facts: AbiFacts) -> dict[str, str]:
    from wheeldoc.core.target import DEFAULT_PYTHON, interpreter_markers

    return interpreter_markers(facts.python or python_version(facts.extension) or DEFAULT_PYTHON,
                              machine=facts.target.arch or "x86_64")


def _cudart(facts: AbiFacts, imported: TorchImport) -> None:
    seen = set()
    for r in facts.results:
        for key in r.checked:
            info = facts.site.elf(facts.site.files[key])
            for soname in (info.needed if info is not None else ()):
                m = _CUDART.match(soname)
                if m and (key, soname) not in seen:
                    seen.add((key, soname))
                    facts.ext_cudart.append(CudaLink(key, soname, int(m[1]), soname != f"libcudart.so.{m[1]}"))
    majors = sorted({int(m[1]) for s in imported.loaded if (m := _CUDART.match(s))})
    if not majors and facts.torch_cuda:
        majors = [int(facts.torch_cuda.split(".")[0])]
    facts.torch_cudart = majors


def python_version(side: Side) -> str | None:
    """The one CPython the extension is built for (`cp311-cp311`, `.cpython-311-`), else None
    (an abi3 or pure wheel loads on any later interpreter: its tag is a floor, not a target)."""
    for tag in side.python_tags:
        m = _PYTAG.match(tag)
        if m:
            return f"{m[1]}.{m[2]}"
    for source, _ in side.sources:
        for m in source.shared_objects():
            found = _SO_PYTHON.search(m.name.rsplit("/", 1)[-1])
            if found:
                return f"{found[1]}.{found[2]}"
    return None


# -- the CUDA side -----------------------------------------------------------------------------------
@dataclass
class CudaPlan:
    mode: str = "none"
    sources: list[tuple[MemberSource, str]] = field(default_factory=list)
    placeholders: list[tuple[str, str]] = field(default_factory=list)  # (site path, package label)
    described: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    def close(self) -> None:
        from wheeldoc.abi.site import cancel_read_ahead

        for source, _ in self.sources:
            cancel_read_ahead(source)
            source.close()


def cuda_requirements(torch: Side, markers: dict[str, str]) -> list[str]:
    """torch's Requires-Dist entries on CUDA packages (named `nvidia-*`, `cuda-*`, `*-nvidia-*`)
    that apply to the target; the Python bindings (`cuda-bindings`, `cuda-python`) ship no
    libraries torch links."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    out = []
    for line in (torch.metadata.requires_dist if torch.metadata else ()):
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        if not _CUDA_PACKAGE.search(name) or name in ("cuda-bindings", "cuda-python", "cuda-pathfinder"):
            continue
        if req.marker is not None and not req.marker.evaluate({**markers, "extra": ""}):
            continue
        out.append(str(Requirement(line)).split(";", 1)[0].strip())
    return out


def plan_from_metadata(requirements: list[str]) -> CudaPlan:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    from wheeldoc.data.abi_tables import cuda_packages

    packages, extras = cuda_packages()
    plan = CudaPlan("metadata" if requirements else "none")
    for line in requirements:
        req = Requirement(line)
        name = canonicalize_name(req.name)
        names = [p for extra in sorted(req.extras) for p in extras.get(extra, ())] if name == "cuda-toolkit" else [name]
        used = []
        for pkg in dict.fromkeys(names):
            known = packages.get(pkg)
            if known is None:
                plan.unknown.append(pkg if pkg != name else line)
                continue
            used.append(pkg)
            for path in known.libraries.values():
                plan.placeholders.append((path, f"{pkg} (from torch's Requires-Dist `{line}`)"))
        if used:
            plan.described.append(f"`{line}`: " + (", ".join(used) if used != [name] else "its libraries"))
    return plan


def plan_from_index(requirements: list[str], options: IndexOptions, *, python: str | None,
                    platform: str | None, cache: Cache | None = None) -> CudaPlan:
    from wheeldoc.abi.fetch import lock
    from wheeldoc.abi.listing import open_wheel

    if not requirements:
        return CudaPlan("none")
    try:
        wheels = lock(requirements, options, python_version=python, python_platform=platform, no_deps=False)
    except InputError as e:
        plan = plan_from_metadata(requirements)
        plan.described.insert(0, f"uv could not resolve torch's CUDA requirements ({e.message}); "
                                 "judged from metadata")
        return plan
    plan = CudaPlan("wheels")
    remote: list[str] = []
    for w in wheels:
        if w.url.startswith("file://"):
            from urllib.parse import unquote, urlsplit

            path = unquote(urlsplit(w.url).path)
            if os.path.isfile(path):
                plan.sources.append((open_wheel(path, cache), f"{w.name} {w.version}"))
                plan.described.append(f"{w.name} {w.version}: {Path(path).name} (read in place)")
                continue
        remote.append(f"{w.name}=={w.version}")
    if remote:
        fallback = plan_from_metadata(remote)
        plan.placeholders += fallback.placeholders
        plan.described += [d.replace("torch's Requires-Dist", "uv's resolution (remote wheel, not downloaded)")
                           for d in fallback.described]
        plan.unknown += fallback.unknown
    return plan


def first_failure(facts, result) -> str:
    if facts.torch_import.failures:
        f = facts.torch_import.failures[0]
        return f"`import torch` fails: {f.soname} (needed by {f.needed_by}) not found"
    if result.missing_libraries:
        m = result.missing_libraries[0]
        more = len(result.missing_libraries) - 1
        return f"{m.soname} not found (needed by {m.needed_by})" + (f", +{more} more" if more else "")
    failures = [v for v in result.version_failures]
    if failures:
        v = failures[0]
        return f"version {v.version} of {v.file} not found"
    missing = result.missing_symbols
    if missing:
        u = missing[0]
        return (f"undefined symbol {facts.demangled.get(u.symbol, u.symbol)}"
                + (f", +{len(missing) - 1} more" if len(missing) > 1 else ""))
    return ""
