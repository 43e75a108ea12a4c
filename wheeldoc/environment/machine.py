"""The host's GPU facts, read only when asked: the NVIDIA driver, its GPUs, the library path.

    driver = read_driver()          # NvidiaDriver: present / version / CUDA / GPUs, or why not
    libs = read_library_path()      # LibraryPath: libcudart / libcublas / libcudnn / libnccl
                                    # on LD_LIBRARY_PATH and in the loader cache

The driver comes from NVML (`nvidia-ml-py`, an optional extra, imported lazily) and, without
it, from `/proc/driver/nvidia/version` (driver version only: the CUDA version it supports is
then for the tables to say). No driver is a fact (`present=False` and the reason), not an
error. The loader cache is read directly (`glibc-ld.so.cache1.1`, with or without the old
`ld.so-1.7.0` part in front), `ldconfig -p` only when it cannot be parsed. Both readers take
a `FileSystem` and an environment mapping, so a container image's `/etc/ld.so.cache` and
`ENV LD_LIBRARY_PATH` are read the same way.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import shutil
import struct
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.environment.fs import HOST, FileSystem

PROC_VERSION = "/proc/driver/nvidia/version"
LD_SO_CACHE = "/etc/ld.so.cache"
MAX_CACHE_BYTES = 64 * 1024 * 1024
MAX_CACHE_ENTRIES = 1 << 18  # 262,144 (a desktop Linux lists about 500)
STRING_FACTOR, STRING_FLOOR = 4, 1 << 20  # names decoded from a loader cache: 4x its size + 1 MiB
MAX_PROC_BYTES = 64 * 1024
LDCONFIG_TIMEOUT = 10.0

# The CUDA libraries whose copies on the library path can shadow the ones a wheel brings.
CUDA_LIBRARY = re.compile(
    r"^lib(?P<family>cudart|cublasLt|cublas|cudnn(?:_[a-z_]+)?|nccl|nvrtc|nvJitLink|cufft|cusparse|cusolver"
    r"|curand|cupti|cuda)\.so(?:\.(?P<major>\d+)(?:\.[0-9.]+)?)?$")

_NVRM = re.compile(r"NVRM version:\s*(?P<what>.*?Kernel Module(?: for \S+)?)\s+(?P<version>\d+\.\d+(?:\.\d+)?)")

_OLD_MAGIC = b"ld.so-1.7.0"
_NEW_MAGIC = b"glibc-ld.so.cache1.1"
_NEW_HEADER = struct.Struct("<20sIIB3xI12x")  # magic+version, nlibs, len_strings, flags, extension_offset
_NEW_ENTRY = struct.Struct("<iIIIQ")  # flags, key, value, osversion, hwcap
_OLD_ENTRY = struct.Struct("<iII")
_ARCH = {0x0000: "", 0x0100: "64bit", 0x0200: "IA-64", 0x0300: "x86-64", 0x0400: "64bit", 0x0500: "64bit",
         0x0600: "N32", 0x0700: "N64", 0x0800: "x32", 0x0900: "hard-float", 0x0A00: "AArch64",
         0x0B00: "soft-float", 0x0F00: "riscv64-lp64", 0x1000: "riscv64-lp64d"}
_TYPE = {0: "libc4", 1: "ELF", 2: "libc5", 3: "libc6"}


@dataclass(frozen=True)
class GpuDevice:
    index: int
    name: str  # "NVIDIA H200"
    compute_capability: tuple[int, int] | None  # (9, 0)
    uuid: str | None = None
    memory_total: int | None = None  # bytes

    @property
    def arch(self) -> str | None:
        cc = self.compute_capability
        return f"sm_{cc[0]}{cc[1]}" if cc else None


@dataclass(frozen=True)
class NvidiaDriver:
    """The NVIDIA driver of this machine, or why there is none."""

    present: bool
    reason: str  # where the facts came from, or why there are none
    version: str | None = None  # "580.95.05"
    cuda: tuple[int, int] | None = None  # the CUDA version the driver supports (NVML), e.g. (13, 0)
    kernel_module: Literal["open", "proprietary"] | None = None
    source: Literal["nvml", "proc"] | None = None
    gpus: tuple[GpuDevice, ...] = ()
    notes: tuple[str, ...] = ()  # what could not be read (e.g. "nvidia-ml-py not installed")

    @property
    def cuda_str(self) -> str | None:
        return f"{self.cuda[0]}.{self.cuda[1]}" if self.cuda else None


@dataclass(frozen=True)
class CacheEntry:
    """One loader-cache row, as `ldconfig -p` prints it: `name (flags) => path`."""

    name: str
    path: str
    flags: str  # "libc6,x86-64"
    hwcap: int = 0


@dataclass(frozen=True)
class FoundLibrary:
    """A CUDA library the dynamic loader can find outside any wheel."""

    name: str  # "libcudart.so.12"
    family: str  # "cudart", "cublas", "cublasLt", "cudnn", "cudnn_ops", "nccl", ...
    major: int | None  # 12; None for an unversioned `libcudart.so`
    path: str
    source: Literal["LD_LIBRARY_PATH", "ld.so.cache", "ldconfig -p"]
    flags: str = ""  # cache flags ("libc6,x86-64"); empty for LD_LIBRARY_PATH


@dataclass(frozen=True)
class LibraryPath:
    ld_library_path: tuple[str, ...]  # as set; "" entries mean the current directory
    libraries: tuple[FoundLibrary, ...]  # in loader order: LD_LIBRARY_PATH first, then the cache
    cache: str | None  # the cache read, None when none
    notes: tuple[str, ...] = ()  # what could not be read

    def family(self, family: str) -> tuple[FoundLibrary, ...]:
        return tuple(lib for lib in self.libraries if lib.family == family)


# -- the driver ----------------------------------------------------------------------------

def read_driver(*, fs: FileSystem = HOST, proc_version: str = PROC_VERSION, nvml: bool = True) -> NvidiaDriver:
    """NVML first (version, CUDA, GPUs); `/proc/driver/nvidia/version` for the version without it."""
    notes: list[str] = []
    proc = _read_proc(fs, proc_version, notes)
    if nvml:
        found = _read_nvml(notes)
        if found is not None:
            version, cuda, gpus = found
            module = proc[1] if proc and proc[0] == version else None
            return NvidiaDriver(True, "NVML", version, cuda, module, "nvml", gpus, tuple(notes))
    if proc is not None:
        return NvidiaDriver(True, proc_version, proc[0], None, proc[1], "proc", (), tuple(notes))
    why = f"no NVIDIA kernel module loaded ({proc_version} is missing)"
    return NvidiaDriver(False, why, notes=tuple(notes))


def parse_proc_version(text: str) -> tuple[str, Literal["open", "proprietary"]] | None:
    """The driver version and kernel module flavour from `/proc/driver/nvidia/version`."""
    m = _NVRM.search(text)
    if not m:
        return None
    return m["version"], "open" if "Open Kernel Module" in m["what"] else "proprietary"


def _read_proc(fs: FileSystem, path: str, notes: list[str]) -> tuple[str, Literal["open", "proprietary"]] | None:
    if not fs.is_file(path):
        return None
    try:
        text = fs.read(path, MAX_PROC_BYTES).decode("utf-8", "replace")
    except InputError as e:
        notes.append(f"{path}: {e.message}")
        return None
    parsed = parse_proc_version(text)
    if parsed is None:
        first = text.strip().splitlines()[0][:120] if text.strip() else "(empty)"
        notes.append(f"{path}: no driver version in {first!r}")
    return parsed


def _read_nvml(notes: list[str]) -> tuple[str, tuple[int, int] | None, tuple[GpuDevice, ...]] | None:
    try:
        import pynvml  # nvidia-ml-py
    except ImportError:
        notes.append("nvidia-ml-py is not installed: GPU names and compute capabilities are unknown "
                     "(pip install 'wheeldoc[nvml]')")
        return None
    errors = (getattr(pynvml, "NVMLError", RuntimeError), RuntimeError, AttributeError, OSError, TypeError,
              ValueError)  # NVMLError subclasses; AttributeError from an old nvidia-ml-py
    try:
        pynvml.nvmlInit()
    except errors as e:  # NVMLError_LibraryNotFound, _DriverNotLoaded, ...
        notes.append(f"NVML unavailable: {_nvml_error(e)}")
        return None
    try:
        version = _text(pynvml.nvmlSystemGetDriverVersion())
        cuda = None
        try:
            cuda = _cuda_int(pynvml.nvmlSystemGetCudaDriverVersion())
        except errors as e:
            notes.append(f"NVML: CUDA driver version unknown: {_nvml_error(e)}")
        gpus = []
        for i in range(pynvml.nvmlDeviceGetCount()):
            try:
                gpus.append(_device(pynvml, i, notes, errors))
            except errors as e:
                notes.append(f"NVML: GPU {i} unreadable: {_nvml_error(e)}")
        return version, cuda, tuple(gpus)
    except errors as e:
        notes.append(f"NVML query failed: {_nvml_error(e)}")
        return None
    finally:
        with contextlib.suppress(*errors):
            pynvml.nvmlShutdown()


def _device(pynvml, i: int, notes: list[str], errors: tuple[type[BaseException], ...]) -> GpuDevice:
    h = pynvml.nvmlDeviceGetHandleByIndex(i)
    name = _text(pynvml.nvmlDeviceGetName(h))
    cc = None
    try:
        major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(h)
        cc = (int(major), int(minor))
    except errors as e:
        notes.append(f"NVML: compute capability of GPU {i} unknown: {_nvml_error(e)}")
    uuid = mem = None
    with contextlib.suppress(*errors):
        uuid = _text(pynvml.nvmlDeviceGetUUID(h))
    with contextlib.suppress(*errors):
        mem = int(pynvml.nvmlDeviceGetMemoryInfo(h).total)
    return GpuDevice(i, name, cc, uuid, mem)


def _cuda_int(v: int) -> tuple[int, int]:
    return int(v) // 1000, (int(v) % 1000) // 10  # 13000 -> (13, 0); 12040 -> (12, 4)


def _text(v) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def _nvml_error(e: Exception) -> str:
    return f"{type(e).__name__}: {e}".strip()


# -- the library path ----------------------------------------------------------------------

def read_library_path(environ: Mapping[str, str] | None = None, *, fs: FileSystem = HOST,
                      cache: str = LD_SO_CACHE, ldconfig: bool = True) -> LibraryPath:
    """CUDA libraries on `LD_LIBRARY_PATH` and in the loader cache (`ldconfig -p` as a fallback)."""
    environ = os.environ if environ is None else environ
    raw = environ.get("LD_LIBRARY_PATH", "")
    dirs = tuple(raw.split(":")) if raw else ()
    found: list[FoundLibrary] = []
    notes: list[str] = []
    for d in dirs:
        if not d:
            notes.append("LD_LIBRARY_PATH has an empty entry: the current directory is searched")
            continue
        try:
            names = sorted(fs.listdir(d))
        except InputError as e:  # an image folder that is a symbolic link loop, say
            notes.append(f"LD_LIBRARY_PATH entry {fs.where(d)}: {e.message}")
            continue
        for name in names:
            m = CUDA_LIBRARY.match(name)
            if m:
                found.append(_found(m, name, posixpath.join(d, name), "LD_LIBRARY_PATH"))
    entries, source, cache_used = _cache_entries(fs, cache, ldconfig, notes)
    for e in entries:
        m = CUDA_LIBRARY.match(e.name)
        if m:
            found.append(_found(m, e.name, e.path, source, e.flags))
    return LibraryPath(dirs, tuple(found), cache_used, tuple(notes))


def _found(m: re.Match, name: str, path: str, source, flags: str = "") -> FoundLibrary:
    return FoundLibrary(name, m["family"], int(m["major"]) if m["major"] else None, path, source, flags)


def _cache_entries(fs: FileSystem, cache: str, ldconfig: bool, notes: list[str]):
    if fs.is_file(cache):
        try:
            return parse_ld_so_cache(fs.read(cache, MAX_CACHE_BYTES), fs.where(cache)), "ld.so.cache", cache
        except InputError as e:
            notes.append(f"{e.one_line()}")
    else:
        notes.append(f"no loader cache at {fs.where(cache)}")
    if ldconfig and fs is HOST:
        try:
            return parse_ldconfig_p(_run_ldconfig()), "ldconfig -p", "ldconfig -p"
        except InputError as e:
            notes.append(e.one_line())
    return [], "ld.so.cache", None


def _run_ldconfig() -> str:
    exe = shutil.which("ldconfig") or next((p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig")
                                            if os.path.exists(p)), None)
    if exe is None:
        raise InputError("ldconfig", "not found")
    try:
        proc = subprocess.run([exe, "-p"], capture_output=True, timeout=LDCONFIG_TIMEOUT, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InputError(exe, f"ldconfig -p failed: {e}") from None
    if proc.returncode != 0:
        raise InputError(exe, f"ldconfig -p exited with {proc.returncode}")
    return proc.stdout[:MAX_CACHE_BYTES].decode("utf-8", "replace")


def parse_ld_so_cache(data: bytes, where: str = LD_SO_CACHE) -> list[CacheEntry]:
    """The entries of a glibc loader cache (new format; the old one only to skip over it)."""
    base = 0
    if data.startswith(_OLD_MAGIC):
        if len(data) < 16:
            raise InputError(where, "truncated loader cache header", offset=0)
        (nold,) = struct.unpack_from("<I", data, 12)
        if nold > MAX_CACHE_ENTRIES:
            raise LimitExceeded(where, f"{nold:,} entries declared (limit {MAX_CACHE_ENTRIES:,})", offset=12)
        base = 16 + nold * _OLD_ENTRY.size
        base = (base + 7) & ~7  # the new table is aligned after the old one
        if not data.startswith(_NEW_MAGIC, base):
            raise InputError(where, "old-format-only loader cache (ld.so-1.7.0) is not supported", offset=0)
    elif not data.startswith(_NEW_MAGIC):
        raise InputError(where, f"not a glibc loader cache (magic {data[:20]!r})", offset=0)
    if len(data) < base + _NEW_HEADER.size:
        raise InputError(where, "truncated loader cache header", offset=base)
    _, nlibs, _len_strings, endian, _ext = _NEW_HEADER.unpack_from(data, base)
    if endian == 3:  # big-endian cache (glibc >= 2.33 records this)
        raise InputError(where, "big-endian loader cache is not supported", offset=base + 28)
    if nlibs > MAX_CACHE_ENTRIES:
        raise LimitExceeded(where, f"{nlibs:,} entries declared (limit {MAX_CACHE_ENTRIES:,})", offset=base + 20)
    table = base + _NEW_HEADER.size
    if table + nlibs * _NEW_ENTRY.size > len(data):
        raise InputError(where, f"{nlibs} entries declared but the file ends at {len(data):#x}", offset=table)
    # Entries may share strings (a crafted cache points a million of them at one 4 KB name, 8 GB
    # when decoded one by one): a string is decoded once per offset, and the bytes decoded in all
    # are bounded by the cache's own size (STRING_FACTOR x it + STRING_FLOOR).
    strings: dict[int, str] = {}
    flag_texts: dict[int, str] = {}
    budget = [STRING_FACTOR * len(data) + STRING_FLOOR]

    def text(offset: int) -> str:
        got = strings.get(offset)
        if got is None:
            got = strings[offset] = _cstr(data, offset, where)
            budget[0] -= len(got) + 1
            if budget[0] < 0:
                raise LimitExceeded(where, f"names read from the cache exceed {STRING_FACTOR}x its "
                                           f"{len(data):,} bytes + {STRING_FLOOR:,} (entries that share "
                                           "overlapping names?)", offset=offset)
        return got

    out = []
    for i in range(nlibs):
        flags, key, value, _osv, hwcap = _NEW_ENTRY.unpack_from(data, table + i * _NEW_ENTRY.size)
        flag = flag_texts.get(flags)
        if flag is None:
            flag = flag_texts[flags] = _flag_text(flags)
        out.append(CacheEntry(text(base + key), text(base + value), flag, hwcap))
    return out


def _cstr(data: bytes, offset: int, where: str) -> str:
    if not 0 <= offset < len(data):
        raise InputError(where, f"string offset {offset:#x} lies past the end of the cache", offset=offset)
    end = data.find(b"\0", offset, offset + 4096)
    if end < 0:
        raise InputError(where, "unterminated string", offset=offset)
    return data[offset:end].decode("utf-8", "replace")


def _flag_text(flags: int) -> str:
    kind = _TYPE.get(flags & 0xFF, f"type {flags & 0xFF:#x}")
    arch = _ARCH.get(flags & 0xFF00, f"arch {flags & 0xFF00:#x}")
    return f"{kind},{arch}" if arch else kind


_LDCONFIG_LINE = re.compile(r"^\s+(?P<name>\S+) \((?P<flags>[^)]*)\) => (?P<path>.+)$")


def parse_ldconfig_p(text: str) -> list[CacheEntry]:
    """`ldconfig -p` output: `\\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1`."""
    out = []
    for line in text.splitlines():
        m = _LDCONFIG_LINE.match(line)
        if m:
            flags = m["flags"].split(", hwcap:")[0].split(", OS ABI:")[0]
            out.append(CacheEntry(m["name"], m["path"], flags))
    return out
