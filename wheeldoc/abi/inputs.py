"""The two sides of `wheeldoc abi EXT [TORCH]`, from what the user typed.

EXT: a wheel, a `.so`, a directory (a site-packages-like tree), an installed `*.dist-info`, or
the name of a distribution installed in the environment of `--python` / `--site-packages`.
TORCH: a requirement (`torch==2.11.0+cu130`, resolved by uv), a torch wheel, a directory holding
`torch/` (or a site-packages with torch installed), or, when omitted, the environment of
`--python` / `--site-packages` (else the running interpreter's).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wheeldoc.core.errors import InputError
from wheeldoc.core.files import open_regular

if TYPE_CHECKING:
    from wheeldoc.abi.facts import Side
    from wheeldoc.binary.members import MemberSource

_REQUIREMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\s*(\[[^\]]*\])?\s*([<>=!~]=?|===)")


@dataclass(frozen=True)
class Environment:
    site_packages: tuple[str, ...]
    label: str


def is_requirement(text: str) -> bool:
    return not os.path.exists(text) and bool(_REQUIREMENT.match(text.strip()))


def is_range(text: str) -> bool:
    """A requirement that names more than one release (not a single `==` pin)."""
    from packaging.requirements import Requirement

    spec = list(Requirement(text).specifier)
    return not (len(spec) == 1 and spec[0].operator in ("==", "===") and "*" not in spec[0].version)


def environment(python: str | None, site_packages: str | None) -> Environment:
    from wheeldoc.environment.reader import locate_environment

    loc = locate_environment(python=python, site_packages=site_packages)
    label = python or site_packages or (loc.executable or "the running interpreter")
    return Environment(tuple(loc.site_packages), label)


def open_extension(arg: str, cache=None) -> MemberSource | None:
    """EXT opened as soon as the command starts, when it is a file or directory, with the reads
    of its libraries started (abi/site.py `read_ahead`: a big wheel's members inflate while the
    torch side is built); None otherwise. An unreadable EXT raises `InputError`."""
    from wheeldoc.abi.listing import open_wheel
    from wheeldoc.abi.site import read_ahead
    from wheeldoc.binary.members import open_source

    if not os.path.exists(arg):
        return None
    if arg.endswith((".whl", ".zip")) and os.path.isfile(arg):
        return open_wheel(arg, cache, on_open=lambda source: read_ahead(source, cache))
    source = open_source(arg)
    read_ahead(source, cache)
    return source


def extension_side(arg: str, env_factory, cache=None, opened: MemberSource | None = None) -> Side:
    """EXT's side; `opened`: EXT's source from `open_extension`, when it was opened already."""
    from wheeldoc.abi.facts import Side
    from wheeldoc.abi.listing import ListedWheel
    from wheeldoc.binary.members import InstalledDistribution, SingleFile, WheelArchive, find_distribution

    if os.path.exists(arg):
        source = opened if opened is not None else open_extension(arg, cache)
        side = Side(arg)
        if isinstance(source, SingleFile):
            side.sources.append((source, os.path.basename(arg)))
            return side
        _describe(side, source)
        side.sources.append((source, side.name or os.path.basename(arg.rstrip("/"))))
        if isinstance(source, (WheelArchive, ListedWheel)):
            info = source.wheel_info()
            side.platform_tags, side.python_tags = _tags(info.tags + info.wheel_tags)
        elif isinstance(source, InstalledDistribution):
            side.platform_tags, side.python_tags = _installed_tags(source)
        return side
    if "/" in arg or arg.endswith((".whl", ".so")):
        raise InputError(arg, "no such file or directory")
    env = env_factory()
    for site in env.site_packages:
        dist = find_distribution(site, arg)
        if dist is not None:
            side = Side(f"{arg} (installed in {env.label})")
            _describe(side, dist)
            side.sources.append((dist, side.name or arg))
            side.platform_tags, side.python_tags = _installed_tags(dist)
            return side
    raise InputError(arg, f"not a file, and no distribution of that name is installed in {env.label}")


def torch_from_path(arg: str, cache=None) -> tuple[Side, list[str] | None]:
    """A torch wheel or directory; also returns the site-packages folders when it is an
    installed environment (so the CUDA distributions beside it are used)."""
    from wheeldoc.abi.facts import Side
    from wheeldoc.abi.listing import open_wheel
    from wheeldoc.binary.members import DirectoryTree

    if os.path.isdir(arg):
        if _torch_distribution(arg) is not None:
            return torch_from_environment(Environment((arg,), arg)), [arg]
        if os.path.isdir(os.path.join(arg, "torch", "lib")):
            side = Side(arg, name="torch")
            side.sources.append((DirectoryTree(arg), "torch"))
            return side, [arg]
        raise InputError(arg, "neither a site-packages with torch installed nor a folder holding torch/lib")
    source = open_wheel(arg, cache)
    side = Side(arg)
    _describe(side, source)
    info = source.wheel_info()
    side.platform_tags, side.python_tags = _tags(info.tags + info.wheel_tags)
    side.sources.append((source, side.name or "torch"))
    return side, None


def torch_from_source(source, label: str) -> Side:
    """A torch wheel given as a member view (an `IndexedWheel` of the torch index)."""
    from wheeldoc.abi.facts import Side

    side = Side(label)
    _describe(side, source)
    info = source.wheel_info()
    side.platform_tags, side.python_tags = _tags(info.tags + info.wheel_tags)
    side.sources.append((source, side.name or "torch"))
    return side


def torch_from_environment(env: Environment) -> Side:
    from wheeldoc.abi.facts import Side

    for site in env.site_packages:
        dist = _torch_distribution(site)
        if dist is not None:
            side = Side(f"torch installed in {env.label}")
            _describe(side, dist)
            side.sources.append((dist, side.name or "torch"))
            side.platform_tags, side.python_tags = _installed_tags(dist)
            return side
    raise InputError(env.label, "no torch installed in this environment (give TORCH explicitly)")


def cuda_distributions(site_packages: list[str]):
    """The installed CUDA distributions of an environment (named `nvidia-*`, `cuda-*`, `*-nvidia-*`)."""
    from wheeldoc.binary.members import InstalledDistribution

    out = []
    for site in site_packages:
        try:
            names = sorted(e.name for e in os.scandir(site) if e.name.endswith(".dist-info"))
        except OSError:
            continue
        for n in names:
            project = n[: -len(".dist-info")].rsplit("-", 1)[0].lower()
            if re.search(r"(^|[_.-])(nvidia|cuda)([_.-]|$)", project) and project not in ("cuda_bindings", "cuda_python") \
                    and os.path.isfile(os.path.join(site, n, "RECORD")):
                dist = InstalledDistribution(os.path.join(site, n))
                out.append((dist, n[: -len(".dist-info")]))
    return out


# -- helpers --------------------------------------------------------------------------------------
def _torch_distribution(site: str):
    """The distribution that installed `torch/` here: `torch` itself, or another name whose RECORD
    lists `torch/lib/` (a renamed build such as the fixtures' `fake-torch`)."""
    from wheeldoc.binary.members import InstalledDistribution, find_distribution

    dist = find_distribution(site, "torch")
    if dist is not None:
        return dist
    try:
        names = sorted(e.name for e in os.scandir(site) if e.name.endswith(".dist-info") and "torch" in e.name.lower())
    except OSError:
        return None
    for n in names:
        if re.match(r"^torch(vision|audio|text|data)\b", n, re.IGNORECASE):
            continue
        record = os.path.join(site, n, "RECORD")
        try:
            with open_regular(record) as f:
                head = f.read(1 << 20)
        except OSError:
            continue
        if b"\ntorch/lib/" in b"\n" + head or head.startswith(b"torch/lib/"):
            return InstalledDistribution(os.path.join(site, n))
    return None


def _describe(side: Side, source) -> None:
    from packaging.utils import canonicalize_name

    try:
        meta = source.metadata()
    except InputError:
        meta = None
    if meta is not None:
        side.metadata = meta
        side.name = canonicalize_name(meta.name)
        side.version = meta.version


def _tags(tags: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(platform tags, the Python tags that pin one interpreter). A `cp38-abi3` or `py3-none` tag
    names a floor (any later CPython loads it), so it pins nothing: only a `cpXY-cpXY` tag does."""
    platforms, pythons = [], []
    for tag in tags:
        parts = tag.split("-")
        if len(parts) != 3:
            continue
        abis = parts[1].split(".")
        pythons += [py for py in parts[0].split(".") if py in abis or f"{py}m" in abis]
        platforms += parts[2].split(".")
    return tuple(dict.fromkeys(platforms)), tuple(dict.fromkeys(pythons))


def _installed_tags(dist) -> tuple[tuple[str, ...], tuple[str, ...]]:
    from wheeldoc.binary.wheelmeta import get_all, parse_headers

    name = f"{dist.dist_info}/WHEEL"
    if dist.member(name) is None:
        return (), ()
    try:
        text = dist.read_bytes(name, 1 << 20).decode("utf-8", "replace")
    except InputError:
        return (), ()
    return _tags(tuple(get_all(parse_headers(text), "Tag")))
