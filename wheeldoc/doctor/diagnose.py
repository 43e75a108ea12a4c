"""One diagnosis of one environment: every analyzer over its real files, and a verdict.

    machine, target = host_machine(settings.target)       # or flags_machine(...)
    d = diagnose(location, target, machine, selection=...)  # Diagnosis
    d.findings, d.kernel_rows, d.coverage, d.abi; verdict(findings)

Steps: the distributions and the torch build (environment.reader), the shared objects and
their GPU code (environment.scan, cached by content hash), the WD5xx rules
(environment.rules), the ABI verdict of every extension that links torch (doctor.abi,
the ABI analyzer's loader model on the environment's files), and the kernel verdict of every
library with GPU code for the GPU and driver (kernels.facts, the WD3xx rules).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Callable, Mapping

from wheeldoc.environment.facts import EnvFacts, Machine
from wheeldoc.core.engine import Context, Selection
from wheeldoc.core.model import Finding, Severity
from wheeldoc.environment.reader import EnvironmentLocation, FileSystem
from wheeldoc.environment.fs import HOST
from wheeldoc.core.target import Driver, Gpu, Target

# The finding that explains a broken environment best comes first: a CPU torch explains the
# extensions that cannot load, a driver too old explains kernels that fail, and so on.
EMBEDDED_VERSION = "1"
ROOT_CAUSE_ORDER = ("WD510", "WD501", "WD504", "WD502", "WD506", "WD2", "WD503", "WD3", "WD505", "WD508", "WD509", "WD5")


@dataclass
class Diagnosis:
    facts: EnvFacts
    findings: list[Finding]
    kernel_rows: list = field(default_factory=list)  # envkernels.KernelRow, one per library with GPU code
    coverage: dict | None = None  # archs, highlight, driver_assumed (the cells are in the rows)
    abi: list = field(default_factory=list)  # envabi.AbiResult
    abi_note: str | None = None  # why the ABI check did not run, when it did not
    timings: dict[str, float] = field(default_factory=dict)
    scan_stats: dict = field(default_factory=dict)
    scan: object = None  # envscan.Scan (fatbins decoded on demand, e.g. for --list)
    cache: object = None

    @property
    def env(self):
        return self.facts.env

    def libraries(self) -> list:
        """kernelfacts.Library objects of the rows (decodes their fatbins)."""
        by_path = {self.facts.fs.where(lib.path): lib for lib in self.env.libraries}
        out = []
        for r in self.kernel_rows:
            lib = make_library(self.facts, self.scan, by_path[r.name], self.cache)
            if lib is not None:
                out.append(lib)
        return out


# -- the machine -----------------------------------------------------------------------------

def host_machine(environ: Mapping[str, str] | None = None, *, platform: str | None = None) -> tuple[Machine, Target]:
    """The host's driver, GPUs, library path and variables, and the target they make."""
    from wheeldoc.data import tables
    from wheeldoc.environment.machine import read_driver, read_library_path

    environ = dict(os.environ if environ is None else environ)
    drv = read_driver()
    lp = read_library_path(environ)
    plat = platform or _host_platform()
    if not drv.present:
        return Machine("host", drv, True, lp, environ), Target(plat, None, None, None, "host")
    cuda = drv.cuda or (tables.cuda_for_driver(drv.version) if drv.version else None)
    driver = Driver(drv.version, cuda) if cuda else None
    gpu = None
    notes = []
    with_cc = [g for g in drv.gpus if g.compute_capability]
    if with_cc:
        first = with_cc[0]
        known = tables.lookup_gpu(first.name)
        name = known.name if known is not None and known.cc == first.compute_capability else first.name
        gpu = Gpu(name, *first.compute_capability)
        others = {g.arch for g in with_cc} - {first.arch}
        if others:
            notes.append(f"this machine also has {', '.join(sorted(others))} GPUs: verdicts are for GPU 0 "
                         f"({first.name}); give --gpu for another")
    elif drv.present:
        notes.append("GPU models unknown (NVML not available): give --gpu for kernel verdicts")
    return Machine("host", drv, False, lp, environ, tuple(notes)), Target(plat, gpu, driver, None, "host")


def _host_platform() -> str | None:
    import platform

    m = platform.machine().lower()
    return {"x86_64": "linux-x86_64", "amd64": "linux-x86_64", "aarch64": "linux-aarch64",
            "arm64": "linux-aarch64"}.get(m)


def flags_machine(target: Target, *, no_driver: bool = False, ld_library_path: str | None = None) -> Machine:
    """The machine the flags describe: no host facts; the library path only as given."""
    lp = None
    if ld_library_path:
        from wheeldoc.environment.machine import read_library_path

        lp = read_library_path({"LD_LIBRARY_PATH": ld_library_path}, cache="/nonexistent/ld.so.cache",
                               ldconfig=False)
        lp = replace(lp, notes=tuple(n for n in lp.notes if not n.startswith("no loader cache")))
    return Machine("flags", None, no_driver, lp, None)


# -- the diagnosis ---------------------------------------------------------------------------

def diagnose(location: EnvironmentLocation, target: Target, machine: Machine, *, fs: FileSystem = HOST,
             where: str | None = None, image: str | None = None, selection: Selection | None = None,
             cache=None, progress: Callable | None = None, abi: bool = True) -> Diagnosis:
    import time

    from wheeldoc.environment import scan as envscan
    from wheeldoc.environment.reader import inspect_environment

    selection = selection or Selection()
    t0 = time.perf_counter()
    env = inspect_environment(location, fs=fs, libraries=False)
    t1 = time.perf_counter()
    first: dict = {}
    for d in env.distributions:
        first.setdefault(d.name, d)
    scan = envscan.scan(fs, location.site_packages, tuple(first.values()), cache, progress)
    env = replace(env, libraries=tuple(scan.libraries), skipped=env.skipped + tuple(scan.skipped))
    t2 = time.perf_counter()
    facts = EnvFacts(env, where or fs.where(location.site_packages[0]), fs, target, machine, image)
    facts.extra["library_keys"] = scan.keys
    facts.extra["machines"] = dict(scan.machines)
    ctx = Context(target, selection)
    from wheeldoc.environment import rules as wd5

    findings = wd5.run(facts, ctx)
    t3 = time.perf_counter()
    diag = Diagnosis(facts, findings)
    diag.scan, diag.cache = scan, cache
    diag.scan_stats = {"libraries": len(scan.libraries), "with_gpu_code": len(scan.fatbins),
                       "cache_hits": scan.cache_hits, "cache_misses": scan.cache_misses,
                       "composite_hit": scan.composite_hit, "bytes_read": scan.bytes_read}
    if abi and any(selection.enabled(f"WD20{i}") for i in range(10)):
        _abi(diag, ctx, cache)
    t4 = time.perf_counter()
    _kernels(diag, scan, ctx, cache)
    t5 = time.perf_counter()
    diag.timings = {"environment": t1 - t0, "libraries": t2 - t1, "rules": t3 - t2, "abi": t4 - t3,
                    "kernels": t5 - t4}
    return diag


def _abi(diag: Diagnosis, ctx: Context, cache) -> None:
    try:
        from wheeldoc.doctor import abi as envabi

        results, findings, note = envabi.check(diag.facts, ctx, cache)
    except ImportError:  # the ABI analyzer is not part of this build
        diag.abi_note = "ABI check unavailable: the ABI analyzer is not part of this build"
        return
    diag.abi = results
    diag.abi_note = note
    diag.findings.extend(findings)


def _kernels(diag: Diagnosis, scan, ctx: Context, cache) -> None:
    from wheeldoc.doctor.kernels import cap_runtime_findings, rows_for
    from wheeldoc.kernels.facts import DEFAULT_ARCHS, cc_of

    facts = diag.facts
    gpu = facts.target.gpu
    archs = list(DEFAULT_ARCHS)
    if gpu is not None and gpu.arch not in archs:
        archs = sorted(archs + [gpu.arch], key=cc_of)
    rows = rows_for(facts, scan, archs, cache, lambda lib, pre=None: make_library(facts, scan, lib, cache, pre))
    diag.kernel_rows = rows
    diag.findings.extend(cap_runtime_findings([f for r in rows for f in r.findings], rows))
    diag.coverage = {"archs": archs, "highlight": gpu.arch if gpu is not None else None,
                     "driver_assumed": facts.target.driver is None}


def make_library(facts: EnvFacts, scan, lib, cache, prefetched: dict | None = None):
    """The kernelfacts.Library of one shared object (its fatbin decoded now); None without a
    cubin or PTX. `prefetched`: path -> embedded containers already scanned (envpool)."""
    from wheeldoc.kernels.facts import Library

    fb = scan.fatbin(lib.path)
    if fb is None or not any(e.kind in ("cubin", "ptx") for e in fb.entries):
        return None
    name = facts.fs.where(lib.path)
    return Library(name, facts.rel(lib.path), name, None, facts.where, fb,
                   _embedded_finder(facts.fs, lib.path, cache, scan.keys.get(lib.path), prefetched))


def coverage_cells(lib, archs: list[str], isa, cuda) -> list[dict]:
    """`kernelfacts.coverage_cell(predict_library(lib, arch))` for every arch, with each
    distinct container (its entries' kind, arch, suffix, ISA, concat) predicted once per arch:
    cuBLASLt's 2,782 containers have a few dozen distinct ones, cuFFT's 11,255 embedded ones a
    few hundred."""
    from collections import Counter

    from wheeldoc.kernels.facts import cc_of
    from wheeldoc.kernels.load_model import UNSUPPORTED_PTX_VERSION, predict_image

    def distinct(containers) -> list[tuple[object, int]]:
        seen: dict = {}
        counts: Counter = Counter()
        for c in containers:
            sig = tuple((e.kind, e.sm, e.suffix, e.code_version, e.parent is not None) for e in c.entries)
            seen.setdefault(sig, c)
            counts[sig] += 1
        return [(seen[sig], n) for sig, n in counts.items()]

    def counts(fmt: str, groups, cc) -> dict:
        n = {"native": 0, "jit": 0, "fail": 0, "ptx_too_new": 0}
        for c, k in groups:
            p = predict_image(fmt, c.entries, cc, isa, cuda)
            n[p.verdict] += k
            if p.cuda_error == UNSUPPORTED_PTX_VERSION:
                n["ptx_too_new"] += k
        return n

    own = distinct(lib.containers)
    embedded = None
    out = []
    for arch in archs:
        cc = cc_of(arch)
        n = counts(lib.fatbin.format, own, cc)
        if lib.fatbin.format == "elf" and not (n["native"] or n["jit"]):
            if embedded is None:
                embedded = distinct(c for _, c in lib.embedded())
            if embedded:
                n = counts("elf", embedded, cc)
        mode = ("native+jit" if n["native"] and n["jit"] else "native" if n["native"] else "jit" if n["jit"]
                else "ptx-too-new" if n["ptx_too_new"] else "none")
        out.append({"mode": mode, "native": n["native"], "jit": n["jit"], "fail": n["fail"]})
    return out
def needs_embedded(lib, archs: list[str], isa, cuda) -> bool:
    """Whether kernelfacts will search the library's data sections for some of these archs
    (its .nv_fatbin has nothing that loads there)."""
    from wheeldoc.kernels.facts import cc_of
    from wheeldoc.kernels.load_model import predict_image

    if lib.fatbin.format != "elf":
        return False
    sigs = {tuple((e.kind, e.sm, e.suffix, tuple(e.code_version), e.parent is not None) for e in c.entries): c
            for c in lib.containers}
    for arch in archs:
        cc = cc_of(arch)
        if not any(predict_image("elf", c.entries, cc, isa, cuda).verdict != "fail" for c in sigs.values()):
            return True
    return False


def embedded_cached(cache, key: str | None) -> bool:
    return cache is not None and bool(key) and cache.path("doctor-embedded", key, EMBEDDED_VERSION).is_file()


def _embedded_finder(fs: FileSystem, path: str, cache, key: str | None, prefetched: dict | None = None) -> Callable:
    """Finds the containers a library keeps outside .nv_fatbin (kernelfacts calls it only when
    .nv_fatbin has nothing for the GPU); cached like the headers."""

    def find() -> tuple:
        from wheeldoc.kernels import embedded
        from wheeldoc.kernels.facts import decode_fatbin, encode_fatbin
        from wheeldoc.environment.fs import HostFileSystem
        from wheeldoc.kernels.fatbin import Fatbin

        doc = (prefetched or {}).get(path)
        if doc is not None:
            fb = decode_fatbin(doc["fatbin"], fs.where(path), None)
            if cache is not None and key:
                cache.put("doctor-embedded", key, EMBEDDED_VERSION, doc)
            return tuple(zip(doc["sections"], fb.containers))
        if cache is not None and key:
            hit = cache.get("doctor-embedded", key, EMBEDDED_VERSION)
            if hit is not None:
                try:
                    fb = decode_fatbin(hit["fatbin"], fs.where(path), None)
                    return tuple(zip(hit["sections"], fb.containers))
                except (KeyError, TypeError, ValueError, IndexError):
                    cache.discard("doctor-embedded", key, EMBEDDED_VERSION)
        if isinstance(fs, HostFileSystem):
            found = embedded.scan_file(path)
        else:
            with fs.open_buffer(path) as buf:
                found = embedded.scan(buf, fs.where(path))
        if cache is not None and key:
            fb = Fatbin(fs.where(path), None, "embedded", None, None, None, (), tuple(c for _, c in found))
            cache.put("doctor-embedded", key, EMBEDDED_VERSION, {"sections": [s for s, _ in found], "fatbin": encode_fatbin(fb)})
        return found

    return find


# -- the verdict -------------------------------------------------------------------------------

def verdict(findings: list[Finding], input_errors: int = 0) -> tuple[str, Finding | None]:
    """("healthy" | "degraded" | "broken" | "unknown", the root-cause finding)."""
    if input_errors:
        return "unknown", None
    worst = max((f.severity for f in findings), default=None)
    if worst is None or worst < Severity.WARNING:
        return "healthy", None
    level = worst
    candidates = [f for f in findings if f.severity == level]

    def rank(f: Finding) -> int:
        return next((i for i, p in enumerate(ROOT_CAUSE_ORDER) if f.rule.startswith(p)), len(ROOT_CAUSE_ORDER))

    root = min(candidates, key=rank)
    return ("broken" if level >= Severity.ERROR else "degraded"), root
