"""Installed distributions (`*.dist-info`) and the torch build, read as text, never imported.

- `read_distributions(fs, site_packages)`: every `NAME-VERSION.dist-info` of one folder:
  METADATA headers (name, version, Requires-Dist, Provides-Extra, Requires-Python), RECORD
  (path, sha256, size), INSTALLER and direct_url.json. Each file is read with a size bound.
- `read_torch_build(fs, site_packages, dist)`: `torch/version.py` parsed with `ast` (its
  `__version__`, `cuda`, `hip`, `rocm`, `xpu`, `git_version`, `debug`), the C++11 ABI flag where
  torch's CMake config records it (`-D_GLIBCXX_USE_CXX11_ABI=N`, torch < 2.7), and the CUDA pins
  of its METADATA.

A broken dist-info never stops the listing: what could not be read goes into the
distribution's `problems` (or the environment's skipped files), the rest is still reported.
"""

from __future__ import annotations

import csv
import posixpath
import re
from dataclasses import dataclass, field
from functools import cached_property

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.core.safeload import parse_version_py, small_int
from wheeldoc.environment.fs import FileSystem
from wheeldoc.lockfile.source import canonical_name

MAX_METADATA_BYTES = 16 * 1024 * 1024
METADATA_HEAD = 64 * 1024  # headers end well before this in real METADATA files
MAX_RECORD_BYTES = 64 * 1024 * 1024  # torch's RECORD is 1.4 MB for 12k files
MAX_SMALL_FILE = 1024 * 1024  # INSTALLER, direct_url.json, version.py, CMake configs
MAX_DISTRIBUTIONS = 100_000

_DIST_INFO = re.compile(r"^(?P<name>[^-]+)-(?P<version>[^-]+)\.dist-info$")
_CXX11_ABI = re.compile(rb"_GLIBCXX_USE_CXX11_ABI=([01])")
_CUDA_REQ = re.compile(r"^(nvidia-|cuda-)")
_RECORD_SHARED = re.compile(r'^(?:"((?:[^"]|"")*\.(?:so(?:\.[0-9][0-9.]*)?|pyd))"|([^",\n]*\.(?:so(?:\.[0-9][0-9.]*)?|pyd))),',
                            re.MULTILINE)


@dataclass(frozen=True, slots=True)
class RecordEntry:
    """One RECORD row: a path relative to site-packages (may start with `../`)."""

    path: str
    sha256: str | None  # urlsafe base64 digest as recorded, without the `sha256=` prefix
    size: int | None


@dataclass(frozen=True)
class DirectUrl:
    """`direct_url.json` (PEP 610): how a distribution was installed when not from an index."""

    url: str
    editable: bool = False
    vcs: str | None = None
    commit: str | None = None


@dataclass(frozen=True)
class Distribution:
    name: str  # canonical name: "nvidia-cudnn-cu13"
    display_name: str  # as METADATA spells it
    version: str  # as METADATA says it: "2.13.0+cpu"
    site_packages: str
    dist_info: str  # folder name inside site_packages
    requires: tuple[str, ...] = ()  # Requires-Dist, as written
    provides_extras: tuple[str, ...] = ()
    requires_python: str | None = None
    installer: str | None = None
    direct_url: DirectUrl | None = None
    problems: tuple[str, ...] = ()  # what could not be read, e.g. "RECORD missing"
    record_text: str = field(default="", repr=False, compare=False)  # RECORD as read; see `record`

    @cached_property
    def record(self) -> tuple[RecordEntry, ...]:
        """RECORD rows, parsed on first use (torch's has 12k rows)."""
        return parse_record(self.record_text)

    def shared_objects(self) -> tuple[str, ...]:
        """RECORD paths of `.so` / `.so.N` / `.pyd` files, found without parsing every row."""
        return tuple(m[2] or m[1].replace('""', '"') for m in _RECORD_SHARED.finditer(self.record_text))

    @property
    def dist_info_path(self) -> str:
        return posixpath.join(self.site_packages, self.dist_info)

    @property
    def local(self) -> str | None:
        """The local version label (`cpu` of `2.13.0+cpu`), None without one."""
        _, _, local = self.version.partition("+")
        return local or None

    def file_path(self, entry: RecordEntry | str) -> str:
        """The absolute path of a RECORD entry."""
        rel = entry.path if isinstance(entry, RecordEntry) else entry
        return posixpath.normpath(posixpath.join(self.site_packages, rel))


@dataclass(frozen=True)
class TorchBuild:
    """What `torch/version.py` and torch's metadata say about the installed build."""

    version: str  # torch.version.__version__: "2.14.1+cu130" (PyPI's METADATA says "2.14.1")
    dist_version: str | None  # the METADATA Version
    cuda: str | None  # "13.0"; None for a CPU (or ROCm / XPU) build
    hip: str | None = None
    rocm: str | None = None
    xpu: str | None = None
    git_version: str | None = None
    debug: bool | None = None
    cxx11_abi: bool | None = None  # None: not recorded as text (torch >= 2.7 always uses 1)
    cxx11_abi_source: str | None = None  # the file that recorded it
    cuda_requirements: tuple[str, ...] = ()  # METADATA Requires-Dist on nvidia-* / cuda-*
    version_file: str = ""

    @property
    def kind(self) -> str:
        """"cuda", "rocm", "xpu" or "cpu", from the version.py fields."""
        if self.cuda:
            return "cuda"
        if self.hip or self.rocm:
            return "rocm"
        if self.xpu:
            return "xpu"
        return "cpu"

    @property
    def local(self) -> str | None:
        _, _, local = self.version.partition("+")
        return local or None

    @property
    def cuda_tuple(self) -> tuple[int, int] | None:
        m = re.match(r"^(\d+)\.(\d+)", self.cuda or "")
        return (int(m[1]), int(m[2])) if m else None


# -- dist-info -----------------------------------------------------------------------------

def read_distributions(fs: FileSystem, site_packages: str) -> tuple[list[Distribution], list[tuple[str, str]]]:
    """Every dist-info of one folder, sorted by folder name; and (path, reason) for unreadable ones."""
    dists: list[Distribution] = []
    skipped: list[tuple[str, str]] = []
    names = sorted(n for n in fs.listdir(site_packages) if n.endswith(".dist-info"))
    if len(names) > MAX_DISTRIBUTIONS:
        raise LimitExceeded(fs.where(site_packages), f"{len(names):,} dist-info folders (limit {MAX_DISTRIBUTIONS:,})")
    for name in names:
        path = posixpath.join(site_packages, name)
        if not fs.is_dir(path):
            continue
        try:
            dists.append(read_distribution(fs, site_packages, name))
        except InputError as e:
            skipped.append((fs.where(path), e.message))
    return dists, skipped


def read_distribution(fs: FileSystem, site_packages: str, dist_info: str) -> Distribution:
    base = posixpath.join(site_packages, dist_info)
    problems: list[str] = []
    meta_path = posixpath.join(base, "METADATA")
    if not fs.is_file(meta_path):
        raise InputError(fs.where(base), "no METADATA file: not an installed distribution")
    headers = parse_metadata_headers(_read_metadata_head(fs, meta_path))
    m = _DIST_INFO.match(dist_info)
    display = _first(headers, "name") or (m["name"] if m else "")
    version = _first(headers, "version") or (m["version"] if m else "")
    if not display or not version:
        raise InputError(fs.where(meta_path), "METADATA has no Name or Version")
    record = ""
    record_path = posixpath.join(base, "RECORD")
    if fs.is_file(record_path):
        try:
            record = fs.read(record_path, MAX_RECORD_BYTES).decode("utf-8", "replace")
        except InputError as e:
            problems.append(f"RECORD unreadable: {e.message}")
    else:
        problems.append("RECORD missing (files of this distribution are unknown)")
    installer = _small_text(fs, posixpath.join(base, "INSTALLER"), problems)
    direct_url = None
    du_text = _small_text(fs, posixpath.join(base, "direct_url.json"), problems)
    if du_text is not None:
        direct_url = _parse_direct_url(du_text, problems)
    return Distribution(
        name=canonical_name(display), display_name=display, version=version,
        site_packages=site_packages, dist_info=dist_info,
        requires=tuple(headers.get("requires-dist", ())),
        provides_extras=tuple(headers.get("provides-extra", ())),
        requires_python=_first(headers, "requires-python"),
        installer=installer.strip() or None if installer is not None else None,
        direct_url=direct_url, problems=tuple(problems), record_text=record)


def _read_metadata_head(fs: FileSystem, path: str) -> str:
    """The header block of METADATA (up to the first blank line), read in bounded steps."""
    size = fs.size(path)  # the limit holds for the file, even where its headers end early
    if size > MAX_METADATA_BYTES:
        raise LimitExceeded(fs.where(path), f"METADATA is {size:,} bytes (limit {MAX_METADATA_BYTES:,})")
    n = METADATA_HEAD
    while True:
        data = fs.head(path, n)
        text = data.decode("utf-8", "replace").replace("\r\n", "\n")
        end = text.find("\n\n")
        if end >= 0:
            return text[:end]
        if len(data) < n:
            return text
        if n >= MAX_METADATA_BYTES:
            raise LimitExceeded(fs.where(path), f"METADATA headers longer than {MAX_METADATA_BYTES:,} bytes")
        n *= 8


def parse_metadata_headers(text: str) -> dict[str, list[str]]:
    """RFC 822-style headers, keys lower-cased, continuation lines joined."""
    out: dict[str, list[str]] = {}
    key = None
    for line in text.split("\n"):
        if not line:
            break
        if line[0] in " \t" and key is not None:
            out[key][-1] += "\n" + line.strip()
            continue
        k, sep, v = line.partition(":")
        if not sep:
            key = None
            continue
        key = k.strip().lower()
        out.setdefault(key, []).append(v.strip())
    return out


def parse_record(text: str) -> tuple[RecordEntry, ...]:
    """RECORD rows (CSV; only rows with a quote go through the csv module)."""
    out: list[RecordEntry] = []
    for line in text.splitlines():
        if '"' in line:
            rows = list(csv.reader([line]))
            row = rows[0] if rows else []
        else:
            row = line.rsplit(",", 2)
        if not row or not row[0]:
            continue
        digest = row[1] if len(row) > 1 else ""
        size_s = row[2] if len(row) > 2 else ""
        out.append(RecordEntry(row[0], digest[7:] if digest.startswith("sha256=") else None,
                               small_int(size_s)))
    return tuple(out)


def _small_text(fs: FileSystem, path: str, problems: list[str]) -> str | None:
    if not fs.is_file(path):
        return None
    try:
        return fs.read(path, MAX_SMALL_FILE).decode("utf-8", "replace")
    except InputError as e:
        problems.append(f"{posixpath.basename(path)} unreadable: {e.message}")
        return None


def _parse_direct_url(text: str, problems: list[str]) -> DirectUrl | None:
    from wheeldoc.core.safeload import load_json

    try:
        raw = load_json(text, "direct_url.json")
        url = raw["url"]
        if not isinstance(url, str):
            raise TypeError
    except (InputError, KeyError, TypeError):
        problems.append("direct_url.json is not valid PEP 610 JSON")
        return None
    dir_info = raw.get("dir_info") if isinstance(raw.get("dir_info"), dict) else {}
    vcs_info = raw.get("vcs_info") if isinstance(raw.get("vcs_info"), dict) else {}
    return DirectUrl(url, bool(dir_info.get("editable", False)),
                     vcs_info.get("vcs") if isinstance(vcs_info.get("vcs"), str) else None,
                     vcs_info.get("commit_id") if isinstance(vcs_info.get("commit_id"), str) else None)


def _first(headers: dict[str, list[str]], key: str) -> str | None:
    values = headers.get(key)
    return values[0] if values else None


# -- torch ---------------------------------------------------------------------------------

def read_torch_build(fs: FileSystem, dist: Distribution) -> TorchBuild | None:
    """The torch build of an installed torch distribution; None when it has no version.py."""
    version_file = posixpath.join(dist.site_packages, "torch", "version.py")
    if not fs.is_file(version_file):
        return None
    fields = parse_version_py(fs.read(version_file, MAX_SMALL_FILE), fs.where(version_file))
    abi, abi_source = None, None
    for rel in ("torch/share/cmake/Torch/TorchConfig.cmake", "torch/share/cmake/Caffe2/Caffe2Config.cmake"):
        path = posixpath.join(dist.site_packages, rel)
        if fs.is_file(path):
            m = _CXX11_ABI.search(fs.read(path, MAX_SMALL_FILE))
            if m:
                abi, abi_source = m[1] == b"1", path
                break
    version = fields.get("__version__")
    return TorchBuild(
        version=version if isinstance(version, str) else dist.version,
        dist_version=dist.version,
        cuda=_str_or_none(fields.get("cuda")), hip=_str_or_none(fields.get("hip")),
        rocm=_str_or_none(fields.get("rocm")), xpu=_str_or_none(fields.get("xpu")),
        git_version=_str_or_none(fields.get("git_version")),
        debug=fields.get("debug") if isinstance(fields.get("debug"), bool) else None,
        cxx11_abi=abi, cxx11_abi_source=abi_source,
        cuda_requirements=tuple(r for r in dist.requires if _CUDA_REQ.match(r.strip().lower())),
        version_file=version_file)


def _str_or_none(v: object) -> str | None:
    return v if isinstance(v, str) and v else None
