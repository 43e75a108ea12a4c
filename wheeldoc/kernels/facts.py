"""Facts for `wheeldoc kernels`: the GPU code of every library in the inputs, and how each of
its containers loads on a target GPU and driver (wheeldoc.kernels.load_model).

Inputs are `.so` files, wheels (each `*.so*` member read straight from the archive, never
unpacked; a large library while it inflates, keeping only its headers, two at a time on
threads: wheeldoc.kernels.stream), directories (every `*.so*` file, symlinks skipped) and standalone
`.fatbin` / `.cubin` / `.ptx` files. A library that cannot be read inside a wheel or a
directory is skipped (WD002) and the others are still analyzed; an input given by name that
cannot be read is an input error (WD001).
"""

from __future__ import annotations

import os
import re
import zlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator

from wheeldoc.core.errors import InputError
from wheeldoc.kernels.load_model import (NO_BINARY_FOR_GPU, UNSUPPORTED_PTX_VERSION, LoadPrediction,
                                    predict_image, visible_entries)
from wheeldoc.core.model import Skipped
from wheeldoc.kernels.fatbin import Fatbin, FatbinContainer, FatbinEntry, open_fatbin, read_fatbin
from wheeldoc.core.files import open_regular

DEFAULT_ARCHS = ("sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_103", "sm_110", "sm_120",
                 "sm_121")
LOADABLE = ("cubin", "ptx")
_LIBRARY_NAME = re.compile(r"\.so(\.|$)")
ARCHIVES = (".whl", ".zip")


def is_library_name(name: str) -> bool:
    """`*.so*`: libfoo.so, libcublasLt.so.13, _C.abi3.so, libnvjpeg.36e11081.so.13."""
    return _LIBRARY_NAME.search(name.rsplit("/", 1)[-1]) is not None


GPU_CODE_SUFFIXES = (".cubin", ".ptx", ".fatbin")


def is_gpu_code_name(name: str) -> bool:
    """Standalone GPU code: `*.cubin`, `*.ptx`, `*.fatbin` (flashinfer-cubin ships ~16,000
    cubins that flashinfer loads itself with cuModuleLoadData)."""
    return name.lower().endswith(GPU_CODE_SUFFIXES)


def is_candidate_name(name: str) -> bool:
    """A file `kernels` reads in a wheel or a directory: a library or standalone GPU code."""
    return is_library_name(name) or is_gpu_code_name(name)


def _looks_like_code(head: bytes, name: str) -> bool:
    """ELF, a fatbin container, or (for a `.ptx` name) text: what open_fatbin can read."""
    if head[:4] == b"\x7fELF" or head[:4] == b"\x50\xed\x55\xba":
        return True
    return name.lower().endswith(".ptx")


@dataclass(frozen=True)
class Library:
    """One file with GPU code: a `.so`, a wheel member, a `.fatbin`, `.cubin` or `.ptx`."""

    name: str  # unique display name: the file, or "wheel!member"
    short: str  # within its input: the member, the path under the directory, or the file
    path: str  # the file on disk (the wheel, for a member)
    member: str | None
    input: str  # the PATH argument it came from
    fatbin: Fatbin
    # finds the containers kept outside .nv_fatbin (wheeldoc.kernels.embedded), on demand
    find_embedded: Callable[[], tuple] | None = field(default=None, compare=False, repr=False)
    _embedded: list = field(default_factory=list, compare=False, repr=False)

    @property
    def containers(self) -> tuple[FatbinContainer, ...]:
        """Containers holding a cubin or PTX (empty and LTO-IR-only ones never load)."""
        return tuple(c for c in self.fatbin.containers if any(e.kind in LOADABLE for e in c.entries))

    def embedded(self) -> tuple[tuple[str, FatbinContainer], ...]:
        """(section, container) for the loadable containers kept in data sections (scanned
        once, on first use; a library that cannot be re-read has none)."""
        if not self._embedded:
            found: tuple = ()
            if self.find_embedded is not None and self.fatbin.format == "elf":
                try:
                    found = tuple((s, c) for s, c in self.find_embedded()
                                  if any(e.kind in LOADABLE for e in c.entries))
                except InputError as e:
                    found = ()
                    self._embedded.append(e.message)  # said in WD301's message (embedded_error)
                except OSError:
                    found = ()
            self._embedded.insert(0, found)
        return self._embedded[0]

    @property
    def embedded_error(self) -> str | None:
        """Why the data sections could not be scanned (a limit, a corrupt container), if so."""
        self.embedded()
        return self._embedded[1] if len(self._embedded) > 1 else None


@dataclass
class Inputs:
    libraries: list[Library] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    errors: list[InputError] = field(default_factory=list)
    without_gpu_code: list[str] = field(default_factory=list)  # readable, but no GPU code
    inputs: list[str] = field(default_factory=list)


# -- reading the inputs ---------------------------------------------------------------------


def read_inputs(paths: Iterable[str], cache=None, *, embedded: bool = False) -> Inputs:
    """Every library of the inputs. With `embedded`, a wheel member's data sections are
    searched for containers (wheeldoc.kernels.embedded) while it is open for its headers,
    rather than by inflating it again when a verdict needs them."""
    out = Inputs()
    for raw in paths:
        out.inputs.append(raw)
        try:
            if os.path.isdir(raw):
                _read_directory(raw, out)
            elif raw.endswith(ARCHIVES) and os.path.isfile(raw):
                _read_wheel(raw, out, cache, embedded)
            else:
                if not os.path.exists(raw):
                    raise InputError(raw, "no such file or directory")
                _add(out, raw, os.path.basename(raw) or raw, None, raw, open_fatbin(raw))
        except InputError as e:
            out.errors.append(e)
    return out


def reason(e: InputError) -> str:
    """The error's message with its byte offset, for a one-line report."""
    return e.message + (f" (at offset {e.offset:#x})" if e.offset is not None else "")


def _add(out: Inputs, name: str, short: str, member: str | None, raw: str, fb: Fatbin,
         path: str | None = None, find_embedded: Callable | None = None) -> None:
    if not any(e.kind in LOADABLE for e in fb.entries):
        out.without_gpu_code.append(name)
        return
    if find_embedded is None and member is None:
        find_embedded = _on_disk(path or raw)
    out.libraries.append(Library(name, short, path or raw, member, raw, fb, find_embedded))


def _on_disk(path: str) -> Callable:
    def find() -> tuple:
        from wheeldoc.kernels.embedded import scan_file

        return scan_file(path)

    return find


def _raising(error: Exception) -> Callable:
    """The embedded finder of a member whose scan already failed: it says why, as a fresh scan would."""

    def find() -> tuple:
        raise error

    return find


def _in_wheel(path: str, member, cache) -> Callable:
    """Re-reads the member (once per run; cached by its RECORD sha256 like the headers)."""

    def find() -> tuple:
        from wheeldoc.kernels.embedded import scan
        from wheeldoc.binary.members import WheelArchive

        key = member.sha256 if cache is not None else None
        if key:
            hit = cache.get("fatbin-embedded", key, CACHE_VERSION)
            if hit is not None:
                try:
                    fb = decode_fatbin(hit["fatbin"], path, member.name)
                    return tuple(zip(hit["sections"], fb.containers))
                except (KeyError, TypeError, ValueError, IndexError):
                    cache.discard("fatbin-embedded", key, CACHE_VERSION)
        with WheelArchive(path) as archive, archive.open(member.name) as data:
            found = scan(data.buf, path, member.name)
            if key:
                key = _verified_key(data, key)
        if key:
            fb = Fatbin(path, member.name, "embedded", None, None, None, (),
                        tuple(c for _, c in found))
            cache.put("fatbin-embedded", key, CACHE_VERSION,
                      {"sections": [s for s, _ in found], "fatbin": encode_fatbin(fb)})
        return found

    return find


def _read_directory(root: str, out: Inputs) -> None:
    for dirpath, dirnames, files in os.walk(root):
        dirnames.sort()
        for fname in sorted(files):
            if not is_candidate_name(fname):
                continue
            path = os.path.join(dirpath, fname)
            if os.path.islink(path) or not os.path.isfile(path):
                continue  # the file it points to is read under its own name
            try:
                with open_regular(path) as fh:
                    if not _looks_like_code(fh.read(4), fname):
                        continue  # a linker script or a text file named *.so
                fb = open_fatbin(path)
            except InputError as e:
                out.skipped.append(Skipped(path, reason(e)))
                continue
            except OSError as e:
                out.skipped.append(Skipped(path, f"cannot read: {e.strerror or e}"))
                continue
            _add(out, path, os.path.relpath(path, root), None, root, fb, path)


READERS = 2  # large members read at once, each on its own thread (zlib and hashlib release
# the GIL): a wheel's libraries are separate deflate streams, so two inflate side by side


def _read_wheel(path: str, out: Inputs, cache, embedded: bool = False) -> None:
    from wheeldoc.binary.members import WheelArchive

    with WheelArchive(path) as archive:
        for rej in archive.rejected:
            if is_candidate_name(rej.name):
                out.skipped.append(Skipped(path, f"member refused: {rej.reason}", rej.name))
        members = [m for m in archive.members if is_candidate_name(m.name)]
        big = [m for m in members if _streams(m)]
        readers = min(READERS, os.cpu_count() or 1, len(big))
        pool = None
        futures: dict = {}
        if readers > 1:  # the large members start on the pool; results are taken in order
            from concurrent.futures import ThreadPoolExecutor

            pool = ThreadPoolExecutor(readers, thread_name_prefix="wheeldoc-member")
            futures = {m.name: pool.submit(_read_member, archive, m, cache, embedded) for m in big}
        try:
            for member in members:
                job = futures.get(member.name)
                try:
                    fb, scanned = (job.result() if job is not None
                                   else _read_member(archive, member, cache, embedded))
                except InputError as e:
                    out.skipped.append(Skipped(path, reason(e), member.name))
                    continue
                if fb is not None:
                    find = (_raising(scanned["error"]) if "error" in scanned
                            else (lambda f=scanned["found"]: f) if "found" in scanned
                            else _in_wheel(path, member, cache))
                    _add(out, f"{path}!{member.name}", member.name, member.name, path, fb, path, find)
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)


def _read_member(archive, member, cache, embedded: bool) -> tuple[Fatbin | None, dict]:
    scanned: dict = {}
    return _member_fatbin(archive, member, cache, scanned if embedded else None), scanned


def _verified_key(data, key: str) -> str | None:
    """The cache key only when the bytes just read hash to it (RECORD's claim). A deflated
    member was hashed while it inflated; a stored one is hashed here. The lookup uses RECORD's
    digest, but nothing is ever stored under a digest the bytes did not produce, so a wheel whose
    RECORD lies cannot change what a later honest wheel's report says."""
    try:
        digest = data.verified_sha256()
    except InputError:
        return None  # RECORD lies: the facts stand for this run, and are not kept
    return key if digest == key else None


CACHE_MIN_MEMBER = 1 << 20  # smaller standalone cubins / PTX / fatbins (flashinfer-cubin's
# 16,000) are read faster than a cache file is found and decoded


STREAM_MIN_MEMBER = 8 << 20  # deflated libraries at least this large are read while they
# inflate (wheeldoc.kernels.stream); smaller ones are inflated into memory, which is as fast


def _streams(member) -> bool:
    """Whether a wheel member is read while it inflates (wheeldoc.kernels.stream)."""
    return (member.compression == "deflated" and member.size >= STREAM_MIN_MEMBER
            and is_library_name(member.name))


def _member_fatbin(archive, member, cache, embedded: dict | None = None) -> Fatbin | None:
    """The fatbin headers of one member, from the cache (keyed by the RECORD sha256) or by
    reading the member: a large deflated library while it inflates, keeping only its headers
    (wheeldoc.kernels.stream); otherwise inflated (into an anonymous temporary file when large,
    whose headers are then read with pread). With `embedded` (a dict), the containers the
    member keeps in its data sections are found in the same pass (wheeldoc.kernels.embedded),
    put under its "found" key and cached like the headers."""
    key = (member.sha256 if cache is not None and
           (member.size >= CACHE_MIN_MEMBER or not is_gpu_code_name(member.name)) else None)
    if key:
        hit = cache.get("fatbin-headers", key, CACHE_VERSION)
        if hit is not None:
            try:
                return decode_fatbin(hit, archive.path, member.name)
            except (KeyError, TypeError, ValueError, IndexError):
                cache.discard("fatbin-headers", key, CACHE_VERSION)
    if _streams(member) and hasattr(archive, "stream"):
        from wheeldoc.kernels.stream import Missing, read_member

        try:
            got = read_member(archive, member.name)
        except Missing:
            got = None  # a byte the headers needed was not kept: read it whole below
        if got is not None:
            fb = got.fatbin
            if key and got.sha256 != key:
                key = None  # (the stream raised already when RECORD disagrees)
            if embedded is not None:
                _embedded(archive, member, fb, got.scan, embedded, cache, key, Missing)
            if key:
                cache.put("fatbin-headers", key, CACHE_VERSION, encode_fatbin(fb))
            return fb
    with archive.open(member.name) as data:
        if not _looks_like_code(bytes(data.buf[:4]), member.name):
            return None
        fd = getattr(data, "fileno", None)
        fb = read_fatbin(data.buf, archive.path, member=member.name, fd=fd)
        if key:
            key = _verified_key(data, key)
        if embedded is not None:
            from wheeldoc.kernels.embedded import scan

            _embedded(archive, member, fb, lambda: scan(data.buf, archive.path, member.name, fd=fd),
                      embedded, cache, key)
    if key:
        cache.put("fatbin-headers", key, CACHE_VERSION, encode_fatbin(fb))
    return fb


def _embedded(archive, member, fb: Fatbin, scan: Callable[[], tuple], embedded: dict, cache,
              key: str | None, missing: type[Exception] | None = None) -> None:
    """Search the member's data sections (`scan()`) when its .nv_fatbin holds loadable code,
    into `embedded` ("found", or "error" with what stopped the search), cached under `key`.
    A `missing` error (the stream did not keep a byte the search needed) leaves `embedded`
    empty: the search then re-reads the member if a verdict ever needs it."""
    if fb.format != "elf" or not any(e.kind in LOADABLE for e in fb.entries):
        return
    try:
        found = tuple((s, c) for s, c in scan() if any(e.kind in LOADABLE for e in c.entries))
    except (InputError, OSError) as e:
        found = ()
        embedded["error"] = e  # a limit or a corrupt container: said in WD301 (embedded_error)
    except Exception as e:
        if missing is None or not isinstance(e, missing):
            raise
        return
    embedded["found"] = found
    if key:
        efb = Fatbin(archive.path, member.name, "embedded", None, None, None, (),
                     tuple(c for _, c in found))
        cache.put("fatbin-embedded", key, CACHE_VERSION,
                  {"sections": [s for s, _ in found], "fatbin": encode_fatbin(efb)})


# -- the header cache (JSON, see wheeldoc/core/cache.py) -------------------------------------------

_ENTRY_FIELDS = tuple(FatbinEntry._fields)
CACHE_VERSION = f"1-{zlib.crc32(','.join(_ENTRY_FIELDS).encode()):08x}"  # new layout, new key


def _encode_entry(e: FatbinEntry) -> list:
    values = [getattr(e, f) for f in _ENTRY_FIELDS]
    values[_ENTRY_FIELDS.index("code_version")] = list(e.code_version)
    values[-1] = None if e.parent is None else _encode_entry(e.parent)
    return values


def _decode_entry(values: list) -> FatbinEntry:
    if len(values) != len(_ENTRY_FIELDS):
        raise ValueError("entry record of another layout")
    values = list(values)
    values[_ENTRY_FIELDS.index("code_version")] = tuple(values[_ENTRY_FIELDS.index("code_version")])
    if values[-1] is not None:
        values[-1] = _decode_entry(values[-1])
    return FatbinEntry(*values)


def encode_fatbin(fb: Fatbin) -> dict:
    return {"fields": list(_ENTRY_FIELDS), "format": fb.format, "section": fb.section,
            "section_offset": fb.section_offset, "section_size": fb.section_size,
            "other_sections": list(fb.other_sections),
            "containers": [[c.index, c.offset, c.version, c.header_size, c.fat_size,
                            [_encode_entry(e) for e in c.entries]] for c in fb.containers]}


def decode_fatbin(doc: dict, path: str, member: str | None) -> Fatbin:
    if tuple(doc["fields"]) != _ENTRY_FIELDS:
        raise ValueError("cached with another FatbinEntry layout")
    containers = tuple(FatbinContainer(i, off, ver, hs, fs, tuple(_decode_entry(e) for e in ents))
                       for i, off, ver, hs, fs, ents in doc["containers"])
    return Fatbin(path, member, doc["format"], doc["section"], doc["section_offset"],
                  doc["section_size"], tuple(doc["other_sections"]), containers)


# -- how each container loads ---------------------------------------------------------------


def cc_of(arch: str) -> tuple[int, int]:
    """"sm_121" -> (12, 1)."""
    return divmod(int(arch[3:].rstrip("af")), 10)


def label(e) -> str:
    """"sm_90a" for a cubin, "compute_80 PTX 9.5" for PTX."""
    if e.kind == "ptx":
        return f"compute_{e.sm}{e.suffix} PTX {e.code_version[0]}.{e.code_version[1]}"
    return f"sm_{e.sm}{e.suffix}"


def counted(labels: Iterable[str]) -> str:
    """"sm_80 ×2, sm_100a ×2" in first-seen order."""
    c = Counter(labels)
    return ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in c.items())


@dataclass(frozen=True)
class ContainerLoad:
    container: FatbinContainer
    prediction: LoadPrediction
    concat_blocked: bool  # fails only because the driver cannot see its --concat images

    @property
    def verdict(self) -> str:
        return self.prediction.verdict


@dataclass(frozen=True)
class LibraryLoad:
    """Every container of one library against one GPU and driver."""

    library: Library
    gpu: str  # "sm_121"
    cc: tuple[int, int]
    driver_isa: tuple[int, int] | None  # None: no driver given, any PTX ISA assumed
    driver_cuda: tuple[int, int] | None
    loads: tuple[ContainerLoad, ...]
    # "nv_fatbin", or "embedded" when nothing in .nv_fatbin loads and the library keeps
    # containers in data sections (then `loads` are theirs and `fatbin_loads` the others)
    source: str = "nv_fatbin"
    fatbin_loads: tuple[ContainerLoad, ...] = ()
    sections: tuple[str, ...] = ()  # data sections holding the embedded containers

    def where(self, verdict: str, error: str | None = None) -> list[ContainerLoad]:
        return [x for x in self.loads if x.verdict == verdict
                and (error is None or x.prediction.cuda_error == error)]

    @property
    def counts(self) -> dict:
        errors = Counter(x.prediction.cuda_error for x in self.loads if x.verdict == "fail")
        return {"containers": len(self.loads), "native": len(self.where("native")),
                "jit": len(self.where("jit")), "fail": len(self.where("fail")),
                "errors": dict(sorted(errors.items()))}

    @property
    def verdict(self) -> str:
        """"native", "jit", "native+jit" (what loads), or "fail" (nothing loads)."""
        native, jit = bool(self.where("native")), bool(self.where("jit"))
        if native and jit:
            return "native+jit"
        return "native" if native else "jit" if jit else "fail"

    @property
    def cuda_error(self) -> str | None:
        """The error some containers fail with: 222 first (it hides code that would run)."""
        errors = [x.prediction.cuda_error for x in self.loads if x.verdict == "fail"]
        for name in (UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_INVALID_PTX", NO_BINARY_FOR_GPU):
            if name in errors:
                return name
        return None

    def chosen(self, verdict: str, error: str | None = None) -> str:
        return counted(label(x.prediction.entry) for x in self.where(verdict, error)
                       if x.prediction.entry is not None)

    def data(self) -> dict:
        return {"library": self.library.name, "gpu": self.gpu, "verdict": self.verdict,
                "cuda_error": self.cuda_error, "counts": self.counts, "source": self.source}


def _loads(fmt: str, containers, cc, driver_isa, driver_cuda) -> tuple[ContainerLoad, ...]:
    loads = []
    for c in containers:
        pred = predict_image(fmt, c.entries, cc, driver_isa, driver_cuda)
        blocked = False
        if pred.verdict == "fail" and fmt != "ptx" and \
                len(visible_entries(c.entries, driver_isa, driver_cuda)) < len(c.entries):
            blocked = predict_image(fmt, c.entries, cc, driver_isa, (99, 9)).verdict != "fail"
        loads.append(ContainerLoad(c, pred, blocked))
    return tuple(loads)


def predict_library(lib: Library, cc: tuple[int, int], driver_isa: tuple[int, int] | None,
                    driver_cuda: tuple[int, int] | None, gpu: str | None = None) -> LibraryLoad:
    """Every container of `.nv_fatbin`; when none of them loads on the GPU, the containers the
    library keeps in its data sections instead (see wheeldoc.kernels.embedded)."""
    gpu = gpu or f"sm_{cc[0]}{cc[1]}"
    loads = _loads(lib.fatbin.format, lib.containers, cc, driver_isa, driver_cuda)
    if lib.fatbin.format == "elf" and not any(x.verdict != "fail" for x in loads):
        found = lib.embedded()
        if found:
            emb = _loads("elf", [c for _, c in found], cc, driver_isa, driver_cuda)
            return LibraryLoad(lib, gpu, cc, driver_isa, driver_cuda, emb, "embedded", loads,
                               tuple(s for s, _ in found))
    return LibraryLoad(lib, gpu, cc, driver_isa, driver_cuda, loads)


def coverage_cell(load: LibraryLoad) -> dict:
    """One cell of the coverage table: the best way the library's code runs on that GPU."""
    n = load.counts
    if n["native"] and n["jit"]:
        mode = "native+jit"
    elif n["native"]:
        mode = "native"
    elif n["jit"]:
        mode = "jit"
    elif n["errors"].get(UNSUPPORTED_PTX_VERSION):
        mode = "ptx-too-new"
    else:
        mode = "none"
    return {"mode": mode, "native": n["native"], "jit": n["jit"], "fail": n["fail"]}


def per_arch_module(lib: Library) -> bool:
    """Whether every cubin and PTX entry of the library is arch-specific (`sm_90a`) or
    family-specific (`sm_100f`): a module built for chosen GPUs only (FlashAttention-3 for
    Hopper, FlashMLA for Hopper and Blackwell, flashinfer's per-arch cubins), which its callers
    load only on those GPUs."""
    entries = [e for c in lib.containers for e in c.entries if e.kind in LOADABLE]
    return bool(entries) and all(e.suffix in ("a", "f") for e in entries)


def arch_specific(lib: Library) -> list[FatbinEntry]:
    return [e for c in lib.containers for e in c.entries if e.suffix == "a" and e.kind in LOADABLE]


def newest_ptx(libs: Iterable[Library]) -> tuple[int, int] | None:
    isas = [e.code_version for lib in libs for c in lib.containers for e in c.entries
            if e.kind == "ptx"]
    return max(isas) if isas else None


def iter_entries(lib: Library) -> Iterator[FatbinEntry]:
    for c in lib.fatbin.containers:
        yield from c.entries
