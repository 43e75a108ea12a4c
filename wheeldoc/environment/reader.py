"""A Python environment, inspected without importing or loading anything from it.

    loc = locate_environment()                           # the running interpreter
    loc = locate_environment(python="/srv/venv/bin/python")   # another interpreter
    loc = locate_environment(site_packages="/srv/venv/lib/python3.11/site-packages")
    env = inspect_environment(loc)                       # Environment (frozen)
    env.torch.cuda, env.requirement_checks, env.torch_linked, env.gpu_libraries

`--python PATH` runs that interpreter once, as `PATH -I -S -c <snippet>` with a timeout: the
snippet imports only the standard library (`-S`: no site-packages on `sys.path`, no `.pth`
files) and prints its sysconfig paths and PEP 508 marker values as JSON. Everything else is
read as files: `*.dist-info` (see `environment_dist`), `torch/version.py` parsed with `ast`,
ELF headers of every shared object listed in RECORD (see `environment_libs`).

The same reader works on a container image: pass `fs=image.files` and a location from
`wheeldoc.image.reader.find_python_environments`.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import stat
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.core.target import interpreter_markers as marker_environment
from wheeldoc.environment.dist import (
    DirectUrl,
    Distribution,
    RecordEntry,
    TorchBuild,
    read_distributions,
    read_torch_build,
)
from wheeldoc.environment.fs import HOST, FileSystem, HostFileSystem
from wheeldoc.environment.libs import (
    SharedLibrary,
    is_shared_object,
    scan_library,
)

__all__ = [
    "CudaPackage", "DirectUrl", "Distribution", "Environment", "EnvironmentLocation", "FileSystem",
    "HostFileSystem", "RecordEntry", "RequirementCheck", "SharedLibrary", "SkippedFile", "TorchBuild",
    "inspect_environment", "locate_environment", "marker_environment", "query_interpreter",
]

PYTHON_TIMEOUT = 20.0  # seconds for `python -I -S -c`; a cold interpreter on a slow disk takes ~1 s
MAX_QUERY_OUTPUT = 64 * 1024
MAX_LIBRARIES = 200_000
MAX_EXTRA_DEPTH = 3

Origin = Literal["running", "python", "directory", "image"]

# Run as `python -I -S -c`: standard library only; prints what `packaging.markers.default_environment`
# would compute there, plus the install paths. Keep it Python 3.6-compatible (old interpreters).
_QUERY = r"""
import json, os, platform, sys, sysconfig
# What site.venv() would do, without importing site (which would run .pth files).
exe_dir = os.path.dirname(os.path.abspath(sys.executable))
venv, system_site = None, True
for d in (exe_dir, os.path.dirname(exe_dir)):
    cfg = os.path.join(d, "pyvenv.cfg")
    if os.path.isfile(cfg):
        venv, system_site = d, False
        with open(cfg, encoding="utf-8", errors="replace") as f:
            for line in f:
                k, sep, v = line.partition("=")
                if sep and k.strip().lower() == "include-system-site-packages":
                    system_site = v.strip().lower() == "true"
        break
paths = []
if venv:
    try:
        p = sysconfig.get_paths(scheme="venv", vars={"base": venv, "platbase": venv})
    except KeyError:
        p = sysconfig.get_paths(vars={"base": venv, "platbase": venv})
    paths += [p.get("purelib"), p.get("platlib")]
if system_site:
    p = sysconfig.get_paths()
    paths += [p.get("purelib"), p.get("platlib")]
    try:
        import site
        paths += list(site.getsitepackages([sys.base_prefix]))
    except Exception:
        pass
iv = sys.implementation.version
impl = "%d.%d.%d" % (iv.major, iv.minor, iv.micro)
if iv.releaselevel != "final":
    impl += iv.releaselevel[0] + str(iv.serial)
print(json.dumps({
    "executable": sys.executable, "prefix": venv or sys.prefix, "base_prefix": sys.base_prefix,
    "paths": [x for x in paths if x],
    "markers": {
        "implementation_name": sys.implementation.name, "implementation_version": impl,
        "os_name": os.name, "platform_machine": platform.machine(),
        "platform_release": platform.release(), "platform_system": platform.system(),
        "platform_version": platform.version(), "python_full_version": platform.python_version(),
        "platform_python_implementation": platform.python_implementation(),
        "python_version": ".".join(platform.python_version_tuple()[:2]), "sys_platform": sys.platform,
    },
}))
"""

_PY_DIR = re.compile(r"/lib(?:64)?/python(\d+)\.(\d+)t?/(?:site|dist)-packages/?$")


@dataclass(frozen=True)
class EnvironmentLocation:
    """Where an environment's packages are, and the marker values to evaluate requirements with."""

    site_packages: tuple[str, ...]  # in import order; only folders that exist
    markers: Mapping[str, str]  # PEP 508 marker environment (every key set)
    origin: Origin
    executable: str | None = None  # the interpreter, when known
    prefix: str | None = None  # sys.prefix / the venv or conda prefix
    kind: Literal["system", "venv", "conda", "unknown"] = "unknown"
    markers_source: str = ""  # "interpreter", or what the values were inferred from
    chosen_by: str = ""  # why this environment was read ("--python", "the active VIRTUAL_ENV", …)

    @property
    def python_version(self) -> str:
        return self.markers.get("python_full_version", "")


@dataclass(frozen=True)
class SkippedFile:
    """A file that could not be read; everything else was still analyzed."""

    path: str
    reason: str


@dataclass(frozen=True)
class RequirementCheck:
    """One requirement a distribution declares, checked against what is installed."""

    requirement: str  # as written in Requires-Dist
    required_by: str  # "torch", or a chain through extras: "torch > cuda-toolkit[cublas]"
    name: str  # canonical name of the required distribution ("" when unparsable)
    applies: bool  # its marker is true for this environment
    installed: str | None  # the installed version, None when not installed
    satisfied: bool | None  # None when it does not apply or cannot be evaluated
    problem: str | None = None  # why it cannot be evaluated


@dataclass(frozen=True)
class CudaPackage:
    """An installed CUDA runtime package (`nvidia-*`, `cuda-*`) and the libraries it provides."""

    name: str
    version: str
    cuda_major: int | None  # the CUDA major it belongs to, None when unknown
    libraries: tuple[str, ...]  # absolute paths of its shared objects (from RECORD)


@dataclass(frozen=True)
class Environment:
    location: EnvironmentLocation
    distributions: tuple[Distribution, ...]  # in site-packages order; duplicates kept
    torch: TorchBuild | None
    cuda_packages: tuple[CudaPackage, ...]
    requirement_checks: tuple[RequirementCheck, ...]  # torch's Requires-Dist, through extras
    libraries: tuple[SharedLibrary, ...]  # every shared object listed in RECORD or in *.libs/
    skipped: tuple[SkippedFile, ...] = ()

    def distribution(self, name: str) -> Distribution | None:
        """The distribution Python would import (the first of that name)."""
        from wheeldoc.lockfile.source import canonical_name

        key = canonical_name(name)
        return next((d for d in self.distributions if d.name == key), None)

    @property
    def duplicates(self) -> dict[str, tuple[Distribution, ...]]:
        """Names installed more than once (stale dist-info folders, or several site-packages)."""
        seen: dict[str, list[Distribution]] = {}
        for d in self.distributions:
            seen.setdefault(d.name, []).append(d)
        return {k: tuple(v) for k, v in seen.items() if len(v) > 1}

    @property
    def extensions(self) -> tuple[SharedLibrary, ...]:
        return tuple(lib for lib in self.libraries if lib.kind == "extension")

    @property
    def torch_linked(self) -> tuple[SharedLibrary, ...]:
        """Shared objects outside torch itself that link libtorch* / libc10*."""
        return tuple(lib for lib in self.libraries if lib.links_torch and lib.distribution != "torch")

    @property
    def gpu_libraries(self) -> tuple[SharedLibrary, ...]:
        return tuple(lib for lib in self.libraries if lib.has_gpu_code)

    @property
    def unmet_requirements(self) -> tuple[RequirementCheck, ...]:
        return tuple(c for c in self.requirement_checks if c.applies and c.satisfied is False)


# -- locating ------------------------------------------------------------------------------

def locate_environment(*, python: str | None = None, site_packages: str | None = None,
                       timeout: float | None = None) -> EnvironmentLocation:
    """The running interpreter's environment, another interpreter's, or one folder's."""
    if python and site_packages:
        raise ValueError("give either python or site_packages, not both")
    if site_packages:
        return location_for_directory(site_packages)
    if python:
        return _location_from_query(query_interpreter(python, timeout=timeout), "python")
    return _location_from_query(_running_interpreter(), "running")


def query_interpreter(python: str, *, timeout: float | None = None) -> dict:
    """Run `python -I -S -c <snippet>` (stdlib only) and return its sysconfig facts.

    This is the one place wheeldoc runs a program it was pointed at (`--python`), and the user
    named it. It runs in a session of its own, with no stdin, for at most `timeout` seconds
    (PYTHON_TIMEOUT, or WHEELDOC_PYTHON_TIMEOUT), and its output is read up to MAX_QUERY_OUTPUT
    bytes; when it ends (or is stopped), every process left in its process group is killed, and
    on Linux every other descendant too (one that called setsid() included: wheeldoc is a child
    subreaper meanwhile, `reaper.Reaper`), so nothing it forked outlives the query."""
    import selectors
    import signal
    import time

    if timeout is None:
        try:
            timeout = float(os.environ.get("WHEELDOC_PYTHON_TIMEOUT", PYTHON_TIMEOUT))
        except ValueError:
            timeout = PYTHON_TIMEOUT
    from wheeldoc.core.files import kind

    try:
        st = os.stat(python)
    except OSError:
        raise InputError(python, "no such interpreter") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(python, f"not an interpreter: {kind(st.st_mode)}")
    from wheeldoc.environment.reaper import Reaper

    with Reaper() as reaper:  # orphans of the query come to us, not to init: see reaper.py
        try:
            proc = subprocess.Popen([python, "-I", "-S", "-c", _QUERY], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        except OSError as e:
            raise InputError(python, f"cannot run interpreter: {e.strerror or e}") from None
        chunks: dict = {proc.stdout: [], proc.stderr: []}
        sizes = {proc.stdout: 0, proc.stderr: 0}
        caps = {proc.stdout: MAX_QUERY_OUTPUT + 1, proc.stderr: 2000}
        deadline = time.monotonic() + timeout
        timed_out = too_long = False
        try:
            with selectors.DefaultSelector() as sel:
                for f in chunks:
                    sel.register(f, selectors.EVENT_READ)
                while sel.get_map() and not too_long:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        timed_out = True
                        break
                    if proc.poll() is not None:  # it answered; what it forked may still hold the pipes
                        try:
                            os.killpg(proc.pid, signal.SIGKILL)
                        except (ProcessLookupError, PermissionError):
                            pass
                        reaper.kill_rest()  # and what left the group (setsid), now re-parented to us
                    for key, _ in sel.select(min(left, 0.1)):
                        piece = os.read(key.fd, 65536)
                        if not piece:
                            sel.unregister(key.fileobj)
                            continue
                        f = key.fileobj
                        if sizes[f] < caps[f]:
                            chunks[f].append(piece[: caps[f] - sizes[f]])
                        sizes[f] += len(piece)
                        if sizes[proc.stdout] > MAX_QUERY_OUTPUT:
                            too_long = True  # enough: the answer is too long already
                            break
            if not timed_out and not too_long:
                try:
                    proc.wait(max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    timed_out = True
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the interpreter, if still there, and all it forked
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
            reaper.kill_rest()  # after the wait: Popen reaps its own child
            proc.stdout.close()
            proc.stderr.close()
    if timed_out:
        raise InputError(python, f"interpreter did not answer within {timeout:g} s (killed)")
    data = b"".join(chunks[proc.stdout])
    tail = b"".join(chunks[proc.stderr]).decode("utf-8", "replace").strip().splitlines()
    if sizes[proc.stdout] > MAX_QUERY_OUTPUT:
        raise LimitExceeded(python, f"interpreter printed more than {MAX_QUERY_OUTPUT:,} bytes")
    if proc.returncode != 0:
        why = tail[-1] if tail else f"exit status {proc.returncode}"
        raise InputError(python, f"interpreter query failed: {why}")
    try:
        facts = json.loads(data)
        if not isinstance(facts, dict) or not isinstance(facts.get("markers"), dict):
            raise ValueError
    except (ValueError, RecursionError):
        raise InputError(python, "interpreter query printed no JSON (is this a Python interpreter?)") from None
    return facts


def _running_interpreter() -> dict:
    import site
    import sysconfig

    from packaging.markers import default_environment

    p = sysconfig.get_paths()
    paths = [p.get("purelib"), p.get("platlib")]
    if sys.prefix == sys.base_prefix or _system_site_enabled(sys.prefix):
        paths += list(getattr(site, "getsitepackages", list)())
    return {"executable": sys.executable, "prefix": sys.prefix, "base_prefix": sys.base_prefix,
            "paths": paths, "markers": dict(default_environment())}


def _system_site_enabled(prefix: str) -> bool:
    try:
        from wheeldoc.core.files import read_text

        text = read_text(os.path.join(prefix, "pyvenv.cfg"), errors="replace")
        return any(k.strip().lower() == "include-system-site-packages" and v.strip().lower() == "true"
                   for k, _, v in (line.partition("=") for line in text.splitlines()))
    except OSError:
        return False


def _location_from_query(facts: dict, origin: Origin) -> EnvironmentLocation:
    paths: list[str] = []
    raw = facts.get("paths")
    for p in raw if isinstance(raw, list) else []:
        if isinstance(p, str) and p and os.path.isdir(p):
            real = os.path.normpath(p)
            if real not in paths:
                paths.append(real)
    prefix = facts.get("prefix") if isinstance(facts.get("prefix"), str) else None
    kind: Literal["system", "venv", "conda", "unknown"] = "unknown"
    if prefix and os.path.isfile(os.path.join(prefix, "pyvenv.cfg")):
        kind = "venv"
    elif prefix and os.path.isdir(os.path.join(prefix, "conda-meta")):
        kind = "conda"
    elif prefix:
        kind = "system"
    markers = {str(k): str(v) for k, v in facts["markers"].items()}
    return EnvironmentLocation(tuple(paths), markers, origin, facts.get("executable"), prefix, kind,
                               "interpreter")


def location_for_directory(site_packages: str, *, fs: FileSystem = HOST, machine: str | None = None,
                           origin: Origin = "directory", prefix: str | None = None,
                           kind: Literal["system", "venv", "conda", "unknown"] = "unknown",
                           python_version: str | None = None) -> EnvironmentLocation:
    """A site-packages folder given directly; markers inferred from its path and `pyvenv.cfg`."""
    path = site_packages.rstrip("/") or "/"
    if not fs.is_dir(path):
        raise InputError(fs.where(path), "no such site-packages folder")
    version, source = python_version, "given" if python_version else ""
    m = _PY_DIR.search(path + "/")
    if prefix is None and m:
        prefix = path[: m.start()] or "/"
    if version is None and prefix:
        version = _pyvenv_version(fs, prefix)
        source = "pyvenv.cfg" if version else ""
    if version is None and m:
        version, source = f"{m[1]}.{m[2]}", "folder name"
    if kind == "unknown" and prefix:
        if fs.is_file(posixpath.join(prefix, "pyvenv.cfg")):
            kind = "venv"
        elif fs.is_dir(posixpath.join(prefix, "conda-meta")):
            kind = "conda"
    markers = marker_environment(version, machine=machine)
    how = f"python {version} from the {source}" if version else "python version unknown: the host's"
    how += f", {machine or 'host'} platform"
    return EnvironmentLocation((path,), markers, origin, None, prefix, kind, how)


def _pyvenv_version(fs: FileSystem, prefix: str) -> str | None:
    cfg = posixpath.join(prefix, "pyvenv.cfg")
    if not fs.is_file(cfg):
        return None
    try:
        text = fs.read(cfg, 64 * 1024).decode("utf-8", "replace")
    except InputError:
        return None
    for line in text.splitlines():
        k, sep, v = line.partition("=")
        if sep and k.strip() in ("version_info", "version") and re.match(r"^\d+\.\d+", v.strip()):
            return v.strip()
    return None


# -- inspecting ----------------------------------------------------------------------------

Progress = Callable[[str, int, int], None]  # (path, done, total)


def inspect_environment(location: EnvironmentLocation, *, fs: FileSystem = HOST, libraries: bool = True,
                        progress: Progress | None = None) -> Environment:
    """Everything `doctor` needs to know about one environment, read from its files."""
    dists: list[Distribution] = []
    skipped: list[SkippedFile] = []
    for sp in location.site_packages:
        found, bad = read_distributions(fs, sp)
        dists.extend(found)
        skipped.extend(SkippedFile(p, r) for p, r in bad)
    first: dict[str, Distribution] = {}
    for d in dists:
        first.setdefault(d.name, d)
    torch = None
    if "torch" in first:
        try:
            torch = read_torch_build(fs, first["torch"])
        except InputError as e:
            skipped.append(SkippedFile(e.path, e.message))
    checks = check_requirements(first["torch"], first, location.markers) if "torch" in first else ()
    libs: tuple[SharedLibrary, ...] = ()
    if libraries:
        libs, bad_libs = scan_libraries(fs, location.site_packages, tuple(first.values()), progress)
        skipped.extend(bad_libs)
    return Environment(location, tuple(dists), torch, cuda_packages(first.values()), tuple(checks), libs,
                       tuple(skipped))


def cuda_packages(dists) -> tuple[CudaPackage, ...]:
    from wheeldoc.core.torchbuild import is_cuda_library, library_cuda_major

    out = []
    for d in sorted(dists, key=lambda d: d.name):
        if not (is_cuda_library(d.name) or d.name.startswith("cuda-")):
            continue
        libs = tuple(d.file_path(rel) for rel in d.shared_objects())
        out.append(CudaPackage(d.name, d.version, library_cuda_major(d.name, d.version), libs))
    return tuple(out)


def check_requirements(dist: Distribution, installed: Mapping[str, Distribution], markers: Mapping[str, str],
                       extras: tuple[str, ...] = (), chain: str = "", depth: int = 0) -> list[RequirementCheck]:
    """Each Requires-Dist of `dist` against the installed versions; requirements with extras are
    followed into what those extras add (torch > cuda-toolkit[cublas] > nvidia-cublas==13.1.1.3.*)."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name
    from packaging.version import InvalidVersion, Version

    by = chain or dist.name
    out: list[RequirementCheck] = []
    seen: set[tuple[str, str]] = set()
    for text in dist.requires:
        try:
            req = Requirement(text)
        except InvalidRequirement as e:
            out.append(RequirementCheck(text, by, "", False, None, None, f"unparsable requirement: {e}"))
            continue
        name = str(canonicalize_name(req.name))
        if extras:  # only what the extras add, not the distribution's own base requirements
            applies = req.marker is not None and any(_marker(req, markers, e) for e in extras) \
                and not _marker(req, markers, "")
        else:
            applies = req.marker is None or _marker(req, markers, "")
        if not applies:
            if not extras:
                out.append(RequirementCheck(text, by, name, False, None, None))
            continue
        if extras:  # the same pin repeated under several extras is checked once
            if (name, str(req.specifier)) in seen:
                continue
            seen.add((name, str(req.specifier)))
        have = installed.get(name)
        satisfied: bool | None = None
        problem = None
        if have is not None:
            try:
                satisfied = req.specifier.contains(Version(have.version), prereleases=True)
            except InvalidVersion:
                problem = f"installed version {have.version!r} is not a valid version"
        else:
            satisfied = False
        out.append(RequirementCheck(text, by, name, True, have.version if have else None, satisfied, problem))
        if have is not None and req.extras and depth < MAX_EXTRA_DEPTH:
            sub = f"{by} > {name}[{','.join(sorted(req.extras))}]"
            out.extend(check_requirements(have, installed, markers, tuple(sorted(req.extras)), sub, depth + 1))
    return out


def _marker(req, markers: Mapping[str, str], extra: str) -> bool:
    if req.marker is None:
        return True
    from packaging.markers import UndefinedComparison, UndefinedEnvironmentName

    try:
        return bool(req.marker.evaluate({**markers, "extra": extra}))
    except (UndefinedComparison, UndefinedEnvironmentName, ValueError):  # odd markers: not for us
        return False


def scan_libraries(fs: FileSystem, site_packages: tuple[str, ...], dists: tuple[Distribution, ...],
                   progress: Progress | None = None) -> tuple[tuple[SharedLibrary, ...], list[SkippedFile]]:
    """The headers of every shared object a distribution's RECORD lists, plus unlisted ones in
    top-level `*.libs/` folders (auditwheel's vendored libraries)."""
    from wheeldoc.environment.scan import outside_site_packages

    todo: dict[str, tuple[str | None, bool]] = {}
    skipped: list[SkippedFile] = []
    for d in dists:
        for rel in d.shared_objects():
            if is_shared_object(rel):
                if outside_site_packages(rel):  # never read from wherever it points on the host
                    skipped.append(SkippedFile(fs.where(d.dist_info_path), f"RECORD row {rel[:200]!r} "
                                               "points outside site-packages: refused, not read"))
                    continue
                path = d.file_path(rel)
                todo.setdefault(path, (d.name, _in_libs_dir(path, d.site_packages)))
    for sp in site_packages:
        for name in sorted(fs.listdir(sp)):
            if name.endswith(".libs"):
                libdir = posixpath.join(sp, name)
                owner = _owner_of(libdir, dists)
                for f in sorted(fs.listdir(libdir)):
                    if is_shared_object(f):
                        todo.setdefault(posixpath.join(libdir, f), (owner, True))
    if len(todo) > MAX_LIBRARIES:
        raise LimitExceeded(fs.where(site_packages[0]), f"{len(todo):,} shared objects (limit {MAX_LIBRARIES:,})")
    libs: list[SharedLibrary] = []
    for i, (path, (owner, vendored)) in enumerate(todo.items()):
        if progress:
            progress(path, i, len(todo))
        if not fs.is_file(path):
            skipped.append(SkippedFile(fs.where(path), "listed in RECORD but missing"))
            continue
        try:
            libs.append(scan_library(fs, path, owner, vendored=vendored))
        except InputError as e:
            skipped.append(SkippedFile(fs.where(path), e.message))
    if progress:
        progress("", len(todo), len(todo))
    return tuple(libs), skipped


def _in_libs_dir(path: str, site: str) -> bool:
    rel = posixpath.relpath(path, site)
    return rel.split("/", 1)[0].endswith(".libs")


def _owner_of(libdir: str, dists: tuple[Distribution, ...]) -> str | None:
    prefix = posixpath.basename(libdir) + "/"
    for d in dists:
        if d.site_packages == posixpath.dirname(libdir) and (
                d.record_text.startswith(prefix) or f"\n{prefix}" in d.record_text):
            return d.name
    return None

