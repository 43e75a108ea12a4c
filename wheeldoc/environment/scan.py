"""The shared objects of an installed environment, read once and cached by content hash.

For every `.so` a distribution's RECORD lists (and every file of a top-level `*.libs/`
folder), the same facts `environment.libs.scan_library` reads (DT_NEEDED, soname,
RPATH/RUNPATH, GPU sections) plus, for a library with GPU code, its fatbin headers
(`kernels.fatbin`). Nothing is loaded or executed.

Cache keys (wheeldoc/core/cache.py): the RECORD sha256 of the file, with its size and, on the
host, its mtime (a file changed after installation gets a new key); a file no RECORD lists
is keyed by path, size and mtime. A warm run reads one composite entry for the whole
environment (keyed by every library's key) instead of one per library.
"""

from __future__ import annotations

import base64
import hashlib
import os
import posixpath
import re
import struct
from dataclasses import dataclass, field
from typing import Callable

from wheeldoc.core.errors import InputError
from wheeldoc.environment.reader import Distribution, FileSystem, HostFileSystem, SkippedFile
from wheeldoc.environment.libs import SharedLibrary, is_shared_object, library_kind, read_dynamic
from wheeldoc.kernels.fatbin import Fatbin
from wheeldoc.core.files import open_regular

SCAN_VERSION = "2"
MAX_LIBRARIES = 200_000
_RECORD_ROW = re.compile(r'^(?:"((?:[^"]|"")*)"|([^",\n]*)),sha256=([A-Za-z0-9_\-]+=*),', re.MULTILINE)

Progress = Callable[[str, int, int, int], None]  # (path, bytes done, bytes total, files done)


@dataclass
class Scan:
    libraries: list[SharedLibrary] = field(default_factory=list)
    fatbins: dict[str, dict] = field(default_factory=dict)  # path -> encoded fatbin (see `fatbin`)
    keys: dict[str, str] = field(default_factory=dict)  # path -> cache key (content hash based)
    machines: dict[int, int] = field(default_factory=dict)  # ELF e_machine -> how many libraries
    skipped: list[SkippedFile] = field(default_factory=list)
    cache_hits: int = 0
    cache_misses: int = 0
    composite_hit: bool = False
    bytes_read: int = 0  # sizes of the libraries read (not from the cache)
    where: dict[str, str] = field(default_factory=dict)
    _decoded: dict[str, Fatbin] = field(default_factory=dict)

    fs: object = None
    cache: object = None

    def fatbin(self, path: str) -> Fatbin | None:
        """The fatbin headers of a library with GPU code, decoded on first use (from the
        library's cache entry, or read again when the cache no longer has it)."""
        fb = self._decoded.get(path)
        if fb is None and path in self.fatbins:
            from wheeldoc.kernels.facts import decode_fatbin

            doc = self.fatbins[path]
            if doc is True:
                key = self.keys.get(path)
                value = self.cache.get("doctor-lib", key, SCAN_VERSION) if self.cache is not None and key else None
                if not _valid(value) or not isinstance(value.get("fatbin"), dict):
                    value = read_library(self.fs, path)
                doc = value["fatbin"]
            if doc is None:
                return None
            fb = self._decoded[path] = decode_fatbin(doc, self.where[path], None)
        return fb


def record_digests(dist: Distribution) -> dict[str, str]:
    """RECORD path -> sha256 hex, for the shared objects only (one regex pass over RECORD)."""
    out = {}
    for m in _RECORD_ROW.finditer(dist.record_text):
        rel = m[2] if m[2] is not None else m[1].replace('""', '"')
        if is_shared_object(rel):
            try:
                out[rel] = base64.urlsafe_b64decode(m[3] + "=" * (-len(m[3]) % 4)).hex()
            except ValueError:
                continue
    return out


def outside_site_packages(rel: str) -> bool:
    """A RECORD path that is absolute or climbs out of site-packages (`../`)."""
    norm = posixpath.normpath(rel.replace("\\", "/"))
    return norm.startswith(("/", "../")) or norm == ".." or (len(norm) > 1 and norm[1] == ":")


def _todo(fs: FileSystem, site_packages: tuple[str, ...], dists: tuple[Distribution, ...],
          refused: list | None = None):
    """(path, owner, vendored, RECORD sha256 hex or None), as `scan_libraries` orders them;
    RECORD rows outside site-packages go to `refused` as (distribution, row)."""
    refused = refused if refused is not None else []
    from wheeldoc.environment.reader import _in_libs_dir, _owner_of

    todo: dict[str, tuple[str | None, bool, str | None]] = {}
    for d in dists:
        digests = record_digests(d)
        for rel in d.shared_objects():
            if is_shared_object(rel):
                if outside_site_packages(rel):
                    refused.append((d, rel))  # never read from wherever it points on the host
                    continue
                path = d.file_path(rel)
                todo.setdefault(path, (d.name, _in_libs_dir(path, d.site_packages), digests.get(rel)))
    for sp in site_packages:
        for name in sorted(fs.listdir(sp)):
            if name.endswith(".libs"):
                libdir = posixpath.join(sp, name)
                owner = _owner_of(libdir, dists)
                for f in sorted(fs.listdir(libdir)):
                    if is_shared_object(f):
                        todo.setdefault(posixpath.join(libdir, f), (owner, True, None))
    return todo


def _key(fs: FileSystem, path: str, digest: str | None) -> tuple[str | None, int | None]:
    """The cache key of one file and its size; (None, None) when it is missing."""
    if isinstance(fs, HostFileSystem):
        try:
            st = os.stat(path)
        except OSError:
            return None, None
        stamp = f"{st.st_size}|{st.st_mtime_ns}"
        if not digest:  # no claim to verify: the file's identity on this host (ctime: set by the kernel)
            stamp += f"|{st.st_dev}|{st.st_ino}|{st.st_ctime_ns}"
        size = st.st_size
    else:
        if not fs.is_file(path):
            return None, None
        size = fs.size(path)
        stamp = str(size)
        if digest is None:  # an image's file outside RECORD: no content hash, do not cache
            return "", size
    base = digest if digest else f"path:{path}"
    return hashlib.sha256(f"{SCAN_VERSION}|{base}|{stamp}".encode()).hexdigest(), size


def scan(fs: FileSystem, site_packages: tuple[str, ...], dists: tuple[Distribution, ...], cache=None,
         progress: Progress | None = None) -> Scan:
    """Every shared object of the environment, with the fatbin headers of those with GPU code."""
    from wheeldoc.core.errors import LimitExceeded

    refused: list = []
    todo = _todo(fs, site_packages, dists, refused)
    if len(todo) > MAX_LIBRARIES:
        raise LimitExceeded(fs.where(site_packages[0]), f"{len(todo):,} shared objects (limit {MAX_LIBRARIES:,})")
    out = Scan(fs=fs, cache=cache)
    for d, rel in refused:
        out.skipped.append(SkippedFile(fs.where(d.dist_info_path),
                                       f"RECORD row {rel[:200]!r} points outside site-packages: refused, not read"))
    keyed = []
    for path, (owner, vendored, digest) in todo.items():
        key, size = _key(fs, path, digest)
        if key is None:
            out.skipped.append(SkippedFile(fs.where(path), "listed in RECORD but missing"))
            continue
        keyed.append((path, owner, vendored, key, size))
        if key:
            out.keys[path] = key
    composite = None
    if cache is not None and keyed and all(k for *_, k, _ in keyed):
        composite = hashlib.sha256("\n".join(f"{p}|{k}" for p, _, _, k, _ in keyed).encode()).hexdigest()
        hit = cache.get("doctor-scan", composite, SCAN_VERSION)
        if hit is not None and _restore(out, keyed, hit, fs):
            out.composite_hit = True
            return out
    total = sum(size or 0 for *_, size in keyed)
    values: dict[str, dict | None] = {}
    misses = []
    for path, owner, vendored, key, size in keyed:
        value = cache.get("doctor-lib", key, SCAN_VERSION) if cache is not None and key else None
        if value is not None and _valid(value):
            out.cache_hits += 1
            values[path] = value
        else:
            misses.append((path, key, size or 0))
    out.cache_misses = len(misses)
    done = total - sum(size for *_, size in misses)
    from wheeldoc.environment.pool import read_libraries

    expect = {path: todo[path][2] for path, _, _ in misses if todo[path][2]}
    lying = False  # a file whose bytes do not hash to its RECORD digest: nothing composite is cached
    for path, value, error in read_libraries(fs, misses, cache, progress, done, total, len(keyed), expect):
        if error is not None:
            out.skipped.append(SkippedFile(fs.where(path), error))
            values[path] = None
            continue
        if value.pop("digest_ok", True) is False:
            lying = True
            out.keys.pop(path, None)  # no later cache (doctor's ABI and kernel rows) keys on it
        values[path] = value
    out.bytes_read = sum(size for p, _, size in misses if values.get(p) is not None)
    if progress:
        progress("", total, total, len(keyed))
    slim = []
    for path, owner, vendored, key, size in keyed:
        value = values.get(path)
        slim.append(_slim(value))
        if value is not None:
            _add(out, path, owner, vendored, size or 0, value, fs)
    if composite is not None and not out.skipped and not lying:
        cache.put("doctor-scan", composite, SCAN_VERSION, slim)
    return out


def _valid(value) -> bool:
    return isinstance(value, dict) and isinstance(value.get("format"), str)


def _slim(value: dict | None) -> dict | None:
    """A library's facts without its fatbin encoding (the composite entry stays small: a warm
    run needs no fatbin unless a kernel row is not cached)."""
    if value is None or value.get("fatbin") is None:
        return value
    return {**value, "fatbin": True}


def _restore(out: Scan, keyed, values, fs: FileSystem) -> bool:
    if not isinstance(values, list) or len(values) != len(keyed) or any(v is None for v in values):
        return False
    try:
        for (path, owner, vendored, _key, size), value in zip(keyed, values):
            _add(out, path, owner, vendored, size or 0, value, fs)
    except (KeyError, TypeError, ValueError, IndexError):
        out.libraries.clear()
        out.fatbins.clear()
        return False
    return True


def read_library(fs: FileSystem, path: str, expect: str | None = None) -> dict:
    """The facts of one file, as a JSON value (what the cache stores). With `expect` (the sha256
    hex RECORD claims), the bytes read are hashed too, and `digest_ok` says whether they match:
    the caller caches the facts under a key made from that claim only when they do."""
    from wheeldoc.kernels.facts import encode_fatbin
    from wheeldoc.binary.elffile import is_elf
    from wheeldoc.kernels.fatbin import open_fatbin, read_fatbin

    where = fs.where(path)
    extra: dict = {}
    # The digest is taken last, once the file has parsed: a file refused by a limit costs no hash.
    with fs.open_buffer(path) as buf:
        if path.endswith(".pyd"):
            if expect is not None:
                extra["digest_ok"] = hashlib.sha256(buf).hexdigest() == expect
            return {"format": "pe" if bytes(buf[:2]) == b"MZ" else "other", **extra}
        if not is_elf(buf):
            raise InputError(where, "not an ELF file (bad magic)", offset=0)
        info = read_dynamic(buf, where)
        machine = struct.unpack_from("<H" if buf[5] == 1 else ">H", buf, 18)[0]  # e_machine
        fb = None
        if info.gpu_sections and not isinstance(fs, HostFileSystem):
            fb = read_fatbin(buf, where)
        if expect is not None and not isinstance(fs, HostFileSystem):
            extra["digest_ok"] = hashlib.sha256(buf).hexdigest() == expect
    if info.gpu_sections and isinstance(fs, HostFileSystem):
        fb = open_fatbin(path)  # pread: keeps the resident set small on 1 GB libraries
    if expect is not None and isinstance(fs, HostFileSystem):
        from wheeldoc.core.cache import sha256_file

        try:  # streamed in blocks: the resident set stays small (hashlib.file_digest is 3.11+)
            extra["digest_ok"] = sha256_file(path) == expect
        except OSError:
            extra["digest_ok"] = False
    return {"format": "elf", "needed": list(info.needed), "soname": info.soname, "rpath": list(info.rpath),
            "runpath": list(info.runpath), "gpu": list(info.gpu_sections), "machine": machine,
            "fatbin": encode_fatbin(fb) if fb is not None and fb.containers else None, **extra}


def _add(out: Scan, path: str, owner, vendored: bool, size: int, value: dict | None, fs: FileSystem) -> None:
    if value is None:
        return
    fmt = value["format"]
    kind = library_kind(path)
    if fmt != "elf":
        out.libraries.append(SharedLibrary(path, owner, kind, size, vendored, fmt))
        return
    lib = SharedLibrary(path, owner, kind, size, vendored, "elf", tuple(value["needed"]), value["soname"],
                        tuple(value["rpath"]), tuple(value["runpath"]), tuple(value["gpu"]))
    machine = value["machine"]
    if not isinstance(machine, int):
        raise ValueError("machine is not an ELF e_machine")
    out.machines[machine] = out.machines.get(machine, 0) + 1
    doc = value["fatbin"]
    if doc is not None:
        if doc is not True and (not isinstance(doc, dict) or not isinstance(doc.get("containers"), list)):
            raise ValueError("not an encoded fatbin")
        out.fatbins[path] = doc  # True: in the library's own cache entry (see Scan.fatbin)
        out.where[path] = fs.where(path)
    out.libraries.append(lib)
