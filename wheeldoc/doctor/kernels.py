"""The kernel verdicts of an environment's libraries with GPU code (the `wheeldoc kernels`
model: kernels.facts, kernels.load_model, the WD3xx rules), summarised per library and
cached per (library content key, target).

A warm run with the same target decodes no fatbin at all: each library's row (counts, the
entries chosen, the coverage cells) and its WD3xx findings come back from the cache.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Mapping

from wheeldoc.core.engine import Context, Selection, run_family
from wheeldoc.core.model import Finding, Severity

CACHE_VERSION = "kern-3"
# Kernel findings a NVIDIA runtime package's library gets at most (see `cap_runtime_findings`).
RUNTIME_CAP = {"WD303": Severity.INFO, "WD304": Severity.INFO, "WD305": Severity.INFO}


@dataclass(frozen=True)
class Named:
    name: str


@dataclass
class LoadSummary:
    """What the verdict table and the verdict need from a `kernelfacts.LibraryLoad`."""

    library: Named
    gpu: str
    verdict: str
    cuda_error: str | None
    counts: dict
    source: str = "nv_fatbin"
    sections: tuple[str, ...] = ()
    chosen_native: str = ""
    chosen_jit: str = ""

    def chosen(self, verdict: str, error: str | None = None) -> str:
        return self.chosen_native if verdict == "native" else self.chosen_jit

    def data(self) -> dict:
        return {"library": self.library.name, "gpu": self.gpu, "verdict": self.verdict,
                "cuda_error": self.cuda_error, "counts": self.counts, "source": self.source}

    @classmethod
    def of(cls, load) -> LoadSummary:
        return cls(Named(load.library.name), load.gpu, load.verdict, load.cuda_error, load.counts, load.source,
                   tuple(load.sections), load.chosen("native"), load.chosen("jit"))


@dataclass
class KernelRow:
    name: str  # the library as findings name it (its path, `image!path` in an image)
    short: str  # relative to site-packages
    distribution: str | None
    format: str
    section: str | None
    containers: int
    entries: int
    newest_ptx: tuple[int, int] | None
    cells: list[dict]
    load: LoadSummary | None = None
    findings: list[Finding] = field(default_factory=list)  # WD3xx, every rule, uncapped

    def record(self) -> dict:
        return {"library": self.short, "path": self.name, "distribution": self.distribution,
                "format": self.format, "section": self.section, "containers": self.containers,
                "entries": self.entries, "load": None if self.load is None else self.load.data()}


def target_key(target, archs: list[str], no_driver: bool) -> str:
    gpu, driver = target.gpu, target.driver
    return json.dumps([gpu.arch if gpu else None, gpu.name if gpu else None, driver.version if driver else None,
                       list(driver.cuda) if driver else None, archs, no_driver])


def rows_for(facts, scan, archs: list[str], cache, make_library: Callable) -> list[KernelRow]:
    """One row per library with loadable GPU code, from the cache or computed."""
    from wheeldoc.doctor.diagnose import coverage_cells
    from wheeldoc.kernels.facts import newest_ptx, predict_library
    from wheeldoc.core.model import finding_to_dict

    target = facts.target
    gpu, driver = target.gpu, target.driver
    isa = driver.ptx_isa if driver is not None else None
    cuda = driver.cuda if driver is not None else None
    with_gpu = gpu is not None and not facts.machine.no_driver
    tkey = target_key(target, archs, facts.machine.no_driver)
    ctx = Context(target, Selection())  # every WD3 rule: the selection applies later
    rows: list[KernelRow | None] = []
    misses = []
    for lib in facts.env.gpu_libraries:
        if lib.path not in scan.fatbins:
            continue
        key = scan.keys.get(lib.path)
        ckey = hashlib.sha256(f"{key}|{tkey}".encode()).hexdigest() if cache is not None and key else None
        hit = cache.get("doctor-kernels", ckey, CACHE_VERSION) if ckey else None
        if hit is not None:
            try:
                rows.append(_row_from(_relocate(hit, facts.fs.where(lib.path), facts.where, restore=True)))
                continue
            except (KeyError, TypeError, ValueError):
                cache.discard("doctor-kernels", ckey, CACHE_VERSION)
        misses.append((len(rows), lib, key, ckey))
        rows.append(None)
    prefetched: dict = {}  # filled below; the libraries' finders read it when kernelfacts asks
    libraries = {i: make_library(lib, prefetched) for i, lib, _, _ in misses}
    prefetched.update(_prefetch(facts, libraries, misses, archs, isa, cuda, cache))
    for i, lib, key, ckey in misses:
        library = libraries[i]
        if library is None:  # no cubin or PTX at all
            if ckey:
                cache.put("doctor-kernels", ckey, CACHE_VERSION, {"row": None})
            continue
        load = predict_library(library, (gpu.major, gpu.minor), isa, cuda, gpu.arch) if with_gpu else None
        row = KernelRow(library.name, library.short, lib.distribution, library.fatbin.format, library.fatbin.section,
                        len(library.containers), len(library.fatbin.entries), newest_ptx([library]),
                        coverage_cells(library, archs, isa, cuda),
                        LoadSummary.of(load) if load is not None else None,
                        list(run_family("WD3", load, ctx)) if load is not None else [])
        rows[i] = row
        if ckey:
            doc = asdict(replace(row, findings=[]))
            doc["findings"] = [finding_to_dict(f) for f in row.findings]
            cache.put("doctor-kernels", ckey, CACHE_VERSION, _relocate({"row": doc}, row.name, facts.where))
    return per_architecture_modules([r for r in rows if r is not None])


def per_architecture_modules(rows: list[KernelRow]) -> list[KernelRow]:
    """A module of a package that runs on this GPU elsewhere (another of its libraries loads),
    whose own code is all for other architectures (vLLM's `_qutlass_C`, `_deepselect_C`: Blackwell
    only), is a feature without code for this GPU, not a broken install: CUDA loads modules lazily,
    so it fails when one of its kernels is launched, if ever. Its WD301 becomes a warning that says
    so; a package none of whose libraries runs keeps the error."""
    from dataclasses import replace as _replace

    from wheeldoc.core.model import Severity

    runs = {r.distribution for r in rows if r.distribution and r.load is not None and r.load.verdict != "fail"}
    out = []
    for r in rows:
        if r.distribution in runs and r.load is not None and r.load.verdict == "fail":
            found = []
            for f in r.findings:
                if f.rule == "WD301" and f.severity == Severity.ERROR:
                    f = Finding(f.rule, f.title, Severity.WARNING, f.location,
                                f"{f.message}; {r.distribution} runs on this GPU otherwise: this module's "
                                "features have no code for it and fail when one of its kernels is launched "
                                "(CUDA loads modules lazily), the rest of the package works",
                                f.evidence, f.fix, {**f.data, "per_architecture_module": True})
                found.append(f)
            r = _replace(r, findings=found)
        out.append(r)
    return out


def _prefetch(facts, libraries: dict, misses, archs: list[str], isa, cuda, cache) -> dict:
    """The data sections of the libraries kernelfacts will search (their .nv_fatbin has nothing
    for some arch), scanned in parallel on the host when the cache does not have them."""
    from wheeldoc.doctor.diagnose import embedded_cached, needs_embedded
    from wheeldoc.environment.pool import scan_embedded
    from wheeldoc.environment.fs import HostFileSystem

    if not isinstance(facts.fs, HostFileSystem):
        return {}
    want = sorted({lib.path for i, lib, key, _ in misses if libraries[i] is not None
                   and not embedded_cached(cache, key) and needs_embedded(libraries[i], archs, isa, cuda)})
    return scan_embedded(want) if len(want) > 1 else {}


def _relocate(doc: dict, name: str, where: str, restore: bool = False) -> dict:
    """The key is the library's content (uv hard-links one file into many venvs): the cached row
    keeps no location. Its path and the environment's are placeholders, this run's put back."""
    import json

    text = json.dumps(doc)
    for token, value in (("\u0000lib\u0000", name), ("\u0000env\u0000", where)):
        if not value:
            continue
        value_js, token_js = json.dumps(value)[1:-1], json.dumps(token)[1:-1]
        text = text.replace(token_js, value_js) if restore else text.replace(value_js, token_js)
    return json.loads(text)


def _row_from(hit: dict) -> KernelRow | None:
    from wheeldoc.core.model import finding_from_dict

    doc = hit["row"]
    if doc is None:
        return None
    load = doc["load"]
    if load is not None:
        load = LoadSummary(Named(load["library"]["name"]), load["gpu"], load["verdict"], load["cuda_error"],
                           load["counts"], load["source"], tuple(load["sections"]), load["chosen_native"],
                           load["chosen_jit"])
    return KernelRow(doc["name"], doc["short"], doc["distribution"], doc["format"], doc["section"],
                     doc["containers"], doc["entries"], tuple(doc["newest_ptx"]) if doc["newest_ptx"] else None,
                     doc["cells"], load, [finding_from_dict(f) for f in doc["findings"]])


def cap_runtime_findings(findings: list[Finding], rows: list[KernelRow]) -> list[Finding]:
    """Kernel findings on the libraries of NVIDIA's CUDA runtime packages (nvidia-cublas,
    nvidia-cudnn-cu13, …), capped: JIT-only, partial coverage and fast paths elsewhere are how
    those libraries are built (they pick among per-architecture kernels at run time) and become
    information; a library with no code for the GPU is information too when another library of
    the same package runs on it (cuFFTW's own sm_75 container beside cuFFT's kernels). Every
    other library keeps the severity its rule gives."""
    from wheeldoc.core.torchbuild import is_cuda_library

    owners: Mapping[str, str | None] = {r.name: r.distribution for r in rows}
    runs: dict = {}
    for r in rows:
        if r.load is not None and r.load.verdict != "fail":
            runs.setdefault(r.distribution, []).append(r.name)
    out = []
    for f in findings:
        pkg = owners.get(f.location.path)
        if pkg and is_cuda_library(pkg) and f.severity > Severity.INFO:
            cap = RUNTIME_CAP.get(f.rule)
            sibling = [n for n in runs.get(pkg, ()) if n != f.location.path]
            if cap is None and f.rule == "WD301" and sibling:
                cap = Severity.INFO
            if cap is not None and cap < f.severity:
                why = (f"{f.severity.label} lowered to {cap.label}: a library of NVIDIA's {pkg} package, which picks "
                       "among per-architecture kernels at run time")
                if f.rule == "WD301":
                    why += f"; {sibling[0].rsplit('/', 1)[-1]} of the same package runs on this GPU"
                f = Finding(f.rule, f.title, cap, f.location, f.message, (*f.evidence, why), f.fix,
                            {**f.data, "severity_capped_from": f.severity.label, "package": pkg})
        out.append(f)
    return out
