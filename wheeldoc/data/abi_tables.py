"""The ABI analyzer's tables (made by scripts/make_abi_tables.py), validated on load.

- `system_target(...)`: the system a wheel must load on, as symbol-version caps: from a
  manylinux tag (auditwheel's policy: `manylinux_2_28` allows GLIBC up to 2.28, GLIBCXX up to
  3.4.24, CXXABI up to 1.3.11, GCC up to 7.0.0 on x86_64) or from explicit `--glibc` /
  `--libstdcxx` (CXXABI and GCC follow from the libstdc++ release table). Never from the host.
- `system_names()`: names glibc, libstdc++ and libgcc_s export, each with its oldest version.
- `cuda_packages()`: the shared objects each NVIDIA CUDA wheel installs, and cuda-toolkit's extras.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

FAMILIES = ("GLIBC", "GLIBCXX", "CXXABI", "GCC")
GLIBC_LIBS = ("libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1", "libutil.so.1",
              "ld-linux-x86-64.so.2")
_VERSION = re.compile(r"^(GLIBCXX|GLIBC|CXXABI|GCC)_(.+)$")
_MANYLINUX = re.compile(r"^manylinux_(\d+)_(\d+)_(\w+)$")
_LEGACY = {"manylinux1": "manylinux_2_5", "manylinux2010": "manylinux_2_12", "manylinux2014": "manylinux_2_17"}


class TableError(ValueError):
    """A data table failed validation (a packaging bug, never a user error)."""


def vkey(text: str) -> tuple[int, ...] | None:
    """`"2.28"` -> (2, 28); None for a non-numeric version (`TM_1`, `PRIVATE`)."""
    parts = text.split(".")
    ok = all(p.isascii() and p.isdigit() and len(p) <= 18 for p in parts)  # '²'.isdigit() is True
    return tuple(int(p) for p in parts) if ok else None


def split_version(name: str) -> tuple[str, str] | None:
    """`GLIBCXX_3.4.24` -> ("GLIBCXX", "3.4.24"); None outside the four system families."""
    m = _VERSION.match(name)
    return (m[1], m[2]) if m else None


@dataclass(frozen=True)
class Cap:
    max: tuple[int, ...] | None  # None: this family is not limited (no target for it)
    extra: frozenset[str] = frozenset()  # non-numeric names also allowed (TM_1, FLOAT128)


@dataclass(frozen=True)
class SystemTarget:
    """The system side of the target platform: symbol-version caps and the libraries it has."""

    label: str  # "manylinux_2_28 (x86_64)", "--glibc 2.31", "unknown"
    arch: str | None
    caps: Mapping[str, Cap] = field(default_factory=dict)
    libraries: frozenset[str] = frozenset()  # sonames the platform provides (policy whitelist)
    source: str = "none"  # "tag", "flags", "tag+flags" or "none"

    @property
    def known(self) -> bool:
        return any(c.max is not None for c in self.caps.values())

    def cap_text(self, family: str) -> str | None:
        cap = self.caps.get(family)
        return f"{family}_{'.'.join(map(str, cap.max))}" if cap and cap.max else None

    def allows(self, version_name: str) -> bool | None:
        """Whether a system symbol version exists on the target; None when not judged."""
        split = split_version(version_name)
        if split is None:
            return None
        family, number = split
        cap = self.caps.get(family)
        if cap is None or cap.max is None:
            return None
        if number in cap.extra:
            return True
        key = vkey(number)
        return key is not None and key <= cap.max

    def to_dict(self) -> dict:
        return {"label": self.label, "source": self.source,
                **{f.lower(): self.cap_text(f) for f in FAMILIES}}


# -- loading -------------------------------------------------------------------------------
def _load_json(name: str) -> dict:
    return json.loads(Path(__file__).with_name(name).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def manylinux_table() -> dict:
    data = _load_json("manylinux.json")
    policies = data.get("policies")
    if not isinstance(policies, dict) or "manylinux_2_28" not in policies:
        raise TableError("manylinux.json: no policies")
    for name, p in policies.items():
        if not _MANYLINUX.match(name + "_x") or not isinstance(p.get("versions"), dict):
            raise TableError(f"manylinux.json: bad policy {name!r}")
        for arch, caps in p["versions"].items():
            for fam in FAMILIES:
                mx = caps[fam]["max"]
                if mx is not None and vkey(mx) is None:
                    raise TableError(f"manylinux.json: {name} {arch} {fam} max {mx!r}")
    rows = data.get("libstdcxx")
    if not rows or any(vkey(r["GLIBCXX"]) is None or vkey(r["CXXABI"]) is None for r in rows):
        raise TableError("manylinux.json: bad libstdcxx table")
    return data


@lru_cache(maxsize=1)
def system_names() -> dict[str, dict[str, str]]:
    """soname -> {exported name -> its oldest symbol version}."""
    raw = Path(__file__).with_name("system_symbols.json.gz").read_bytes()
    data = json.loads(gzip.decompress(raw))
    out: dict[str, dict[str, str]] = {}
    for soname, by_version in data["libraries"].items():
        names: dict[str, str] = {}
        for version, listed in by_version.items():
            for n in listed:
                names[n] = version
        out[soname] = names
    if "dlsym" not in out.get("libc.so.6", {}) or "__cxa_throw" not in out.get("libstdc++.so.6", {}):
        raise TableError("system_symbols.json.gz: libc or libstdc++ missing")
    return out


@lru_cache(maxsize=1)
def distro_libraries() -> dict[str, str]:
    """soname -> the Debian package that installs it on the reference system (outside every
    manylinux policy: present only where that package is installed)."""
    data = _load_json("distro_libraries.json")
    libs = data.get("libraries")
    if not isinstance(libs, dict) or "libc.so.6" not in libs:
        raise TableError("distro_libraries.json: no libraries")
    return {str(k): str(v) for k, v in libs.items()}


@dataclass(frozen=True)
class CudaPackage:
    name: str
    version: str  # the version the table was read from
    libraries: Mapping[str, str]  # soname -> path inside site-packages


@lru_cache(maxsize=1)
def cuda_packages() -> tuple[dict[str, CudaPackage], dict[str, tuple[str, ...]]]:
    data = _load_json("cuda_sonames.json")
    pkgs = {n: CudaPackage(n, p["version"], dict(p["libraries"])) for n, p in data["packages"].items()}
    if "nvidia-cuda-runtime" not in pkgs:
        raise TableError("cuda_sonames.json: nvidia-cuda-runtime missing")
    extras = {k: tuple(v) for k, v in data["cuda_toolkit_extras"].items()}
    return pkgs, extras


# -- targets ---------------------------------------------------------------------------------
def policy_for_tag(platform_tag: str) -> tuple[str, str] | None:
    """`manylinux_2_28_x86_64` (or a legacy alias) -> ("manylinux_2_28", "x86_64")."""
    for old, new in _LEGACY.items():
        if platform_tag.startswith(old + "_"):
            platform_tag = new + platform_tag[len(old):]
    m = _MANYLINUX.match(platform_tag)
    if not m:
        return None
    return f"manylinux_{m[1]}_{m[2]}", m[3]


def system_target(platform_tags: tuple[str, ...] = (), *, glibc: str | None = None,
                  libstdcxx: str | None = None, arch: str | None = None) -> SystemTarget:
    """The target system from manylinux platform tags (the newest policy among them wins: the
    platform must satisfy every wheel involved), overridden by explicit versions."""
    table = manylinux_table()
    chosen: tuple[tuple[int, int], str, str] | None = None
    for tag in platform_tags:
        found = policy_for_tag(tag)
        if found is None:
            continue
        name, tag_arch = found
        key = tuple(int(x) for x in name.split("_")[1:3])
        if name in table["policies"] and (chosen is None or key > chosen[0]):
            chosen = (key, name, tag_arch)  # type: ignore[assignment]
    caps: dict[str, Cap] = {}
    libraries: frozenset[str] = frozenset()
    label, source = "unknown", "none"
    if chosen is not None:
        _, name, tag_arch = chosen
        arch = arch or tag_arch
        policy = table["policies"][name]
        versions = policy["versions"].get(arch) or policy["versions"]["x86_64"]
        caps = {f: Cap(vkey(versions[f]["max"]) if versions[f]["max"] else None,
                       frozenset(versions[f]["extra"])) for f in FAMILIES}
        libraries = frozenset(policy["libraries"])
        label, source = f"{name} ({arch})", "tag"
    if glibc:
        if vkey(glibc) is None:
            raise ValueError(f"--glibc expects a version like 2.28, not {glibc!r}")
        caps["GLIBC"] = Cap(vkey(glibc))
    if libstdcxx:
        caps.update(_libstdcxx_caps(libstdcxx))
    if glibc or libstdcxx:
        flags = " ".join(([f"--glibc {glibc}"] if glibc else []) + ([f"--libstdcxx {libstdcxx}"] if libstdcxx else []))
        label = flags if source == "none" else f"{label} with {flags}"
        source = "flags" if source == "none" else "tag+flags"
        if not libraries:
            libraries = frozenset(table["policies"]["manylinux_2_28"]["libraries"])
    return SystemTarget(label, arch, caps, libraries, source)


def _libstdcxx_caps(text: str) -> dict[str, Cap]:
    number = text.removeprefix("GLIBCXX_")
    key = vkey(number)
    if key is None:
        raise ValueError(f"--libstdcxx expects a GLIBCXX version like 3.4.30, not {text!r}")
    rows = sorted(manylinux_table()["libstdcxx"], key=lambda r: vkey(r["GLIBCXX"]))
    below = [r for r in rows if vkey(r["GLIBCXX"]) <= key] or rows[:1]
    row = below[-1]
    return {"GLIBCXX": Cap(key), "CXXABI": Cap(vkey(row["CXXABI"]), frozenset({"TM_1", "FLOAT128"})),
            "GCC": Cap(vkey(row["GCC"]))}
