"""The target machine, always explicit: platform, GPU compute capability, driver / CUDA, Python.

`--gpu` takes a name (`gb10`, `h200`, `rtx5090`), `sm_121` or `12.1`; `--driver` takes a driver
version (`580.95.05`), a driver branch (`580`: every driver of it supports the same CUDA version)
or a CUDA version (`13.0`). A GPU that implies a platform (GB10 is an
aarch64 system) sets it unless `--platform` says otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


PLATFORMS = ("linux-x86_64", "linux-aarch64", "macos-arm64", "macos-x86_64", "windows-amd64")
_PLATFORM_ALIASES = {
    "x86_64": "linux-x86_64", "amd64": "linux-x86_64", "linux_x86_64": "linux-x86_64",
    "aarch64": "linux-aarch64", "arm64": "linux-aarch64", "sbsa": "linux-aarch64",
    "linux_aarch64": "linux-aarch64", "linux-arm64": "linux-aarch64",
    "darwin-arm64": "macos-arm64", "macos_arm64": "macos-arm64",
    "win-amd64": "windows-amd64", "win_amd64": "windows-amd64",
}


class TargetError(ValueError):
    """A target flag that cannot be understood (a usage error, exit 2)."""


@dataclass(frozen=True)
class Gpu:
    name: str  # canonical product name, or the arch when given as sm_XY / X.Y
    major: int
    minor: int

    @property
    def cc(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def arch(self) -> str:
        return f"sm_{self.major}{self.minor}"

    @property
    def number(self) -> int:
        return self.major * 10 + self.minor


@dataclass(frozen=True)
class Driver:
    version: str | None  # e.g. "580.95.05"; None when only a CUDA version was given
    cuda: tuple[int, int]  # the CUDA version the driver supports, e.g. (13, 0)

    @property
    def cuda_str(self) -> str:
        return f"{self.cuda[0]}.{self.cuda[1]}"

    @property
    def named(self) -> str:
        """"driver 580.95.05", or "driver" when only its CUDA version was given (never a gap)."""
        return f"driver {self.version}" if self.version else "driver"

    @property
    def ptx_isa(self) -> tuple[int, int] | None:
        """The newest PTX ISA this driver can JIT (the ISA of its CUDA version)."""
        from wheeldoc.data import tables

        return tables.ptx_isa_for_cuda(self.cuda)


@dataclass(frozen=True)
class Target:
    platform: str | None = None
    gpu: Gpu | None = None
    driver: Driver | None = None
    python: str | None = None
    source: str = "flags"  # "flags", "config", "host"

    def to_dict(self) -> dict[str, Any]:
        isa = self.driver.ptx_isa if self.driver else None
        return {
            "platform": self.platform,
            "gpu": None if self.gpu is None else {
                "name": self.gpu.name, "compute_capability": self.gpu.cc, "arch": self.gpu.arch},
            "driver": None if self.driver is None else {
                "version": self.driver.version, "cuda": self.driver.cuda_str,
                "max_ptx_isa": None if isa is None else f"{isa[0]}.{isa[1]}"},
            "python": self.python,
            "source": self.source,
        }

    def describe(self) -> str:
        parts = []
        if self.gpu:
            parts.append(f"{self.gpu.name} ({self.gpu.arch})")
        if self.driver:
            parts.append(f"driver {self.driver.version or 'for CUDA ' + self.driver.cuda_str}"
                         + (f" (CUDA {self.driver.cuda_str})" if self.driver.version else ""))
        if self.platform:
            parts.append(self.platform)
        return ", ".join(parts) or "no explicit target"


def parse_platform(text: str) -> str:
    key = text.strip().lower()
    key = _PLATFORM_ALIASES.get(key, key)
    if key not in PLATFORMS:
        raise TargetError(f"unknown platform {text!r} (one of: {', '.join(PLATFORMS)})")
    return key


_SM = re.compile(r"^(?:sm_?|compute_?)?(\d{2,3})([af]?)$", re.I)
_CC = re.compile(r"^(\d{1,2})\.(\d)$")


def parse_gpu(text: str) -> tuple[Gpu, str | None]:
    """A GPU and the platform it implies (None when it implies none)."""
    key = text.strip().lower()
    if m := _CC.match(key):
        return Gpu(f"sm_{m[1]}{m[2]}", int(m[1]), int(m[2])), None
    if m := _SM.match(key):
        num = int(m[1])
        return Gpu(f"sm_{num}", num // 10, num % 10), None
    from wheeldoc.data import tables

    found = tables.lookup_gpu(key)
    if found is None:
        names = ", ".join(g.name for g in tables.gpu_table()[:12])
        raise TargetError(f"unknown GPU {text!r}: use a name ({names}, …), sm_XY or X.Y")
    implied = {"aarch64": "linux-aarch64", "x86_64": "linux-x86_64"}.get(found.platform or "", None)
    return Gpu(found.name, found.cc[0], found.cc[1]), implied


def parse_driver(text: str) -> Driver:
    key = text.strip()
    if re.fullmatch(r"\d{1,2}\.\d{1,2}", key):
        major, minor = (int(x) for x in key.split("."))
        if major >= 100:
            raise TargetError(f"{text!r} looks like neither a driver nor a CUDA version")
        return Driver(None, (major, minor))
    if re.fullmatch(r"\d{3}(\.\d{1,3}){0,2}", key):
        from wheeldoc.data import tables

        cuda = tables.cuda_for_driver(key)
        if cuda is None:
            raise TargetError(f"driver {text!r} is older than any CUDA version wheeldoc knows")
        return Driver(key, cuda)
    raise TargetError(f"cannot read driver {text!r}: give a driver version (580.95.05), "
                      "a driver branch (580) or a CUDA version (13.0)")


def parse_python(text: str) -> str:
    """"3.12" or "3.12.4": the marker variables `python_version` / `python_full_version` need it."""
    key = text.strip()
    if not re.fullmatch(r"[23]\.\d{1,2}(\.\d{1,3})?", key):
        raise TargetError(f"cannot read Python version {text!r}: give X.Y or X.Y.Z (3.12)")
    return key


def build_target(platform: str | None = None, gpu: str | None = None, driver: str | None = None,
                 python: str | None = None, source: str = "flags") -> Target:
    g, implied = parse_gpu(gpu) if gpu else (None, None)
    plat = parse_platform(platform) if platform else implied
    return Target(plat, g, parse_driver(driver) if driver else None,
                  parse_python(python) if python else None, source)


_MARKER_PLATFORM = {
    "linux-x86_64": ("linux", "Linux", "x86_64", "posix"),
    "linux-aarch64": ("linux", "Linux", "aarch64", "posix"),
    "macos-arm64": ("darwin", "Darwin", "arm64", "posix"),
    "macos-x86_64": ("darwin", "Darwin", "x86_64", "posix"),
    "windows-amd64": ("win32", "Windows", "AMD64", "nt"),
}
DEFAULT_PLATFORM = "linux-x86_64"
DEFAULT_PYTHON = "3.12"


def marker_environment(platform: str | None, python: str | None) -> dict[str, str]:
    """Every PEP 508 marker key for a target that is not the host (packaging needs them all)."""
    sys_platform, system, machine, os_name = _MARKER_PLATFORM[platform or DEFAULT_PLATFORM]
    py = python or DEFAULT_PYTHON
    full = py if py.count(".") >= 2 else py + ".0"
    return {
        "implementation_name": "cpython", "implementation_version": full,
        "os_name": os_name, "platform_machine": machine, "platform_python_implementation": "CPython",
        "platform_release": "", "platform_system": system, "platform_version": "",
        "python_full_version": full, "python_version": ".".join(py.split(".")[:2]),
        "sys_platform": sys_platform, "extra": "",
    }


_MACHINES = {"amd64": "x86_64", "arm64": "aarch64", "386": "i686", "ppc64le": "ppc64le", "s390x": "s390x"}


def interpreter_markers(python_version: str | None = None, *, machine: str | None = None) -> dict[str, str]:
    """PEP 508 marker values for a Linux CPython of that version (the host's where not given)."""
    from packaging.markers import default_environment

    env = dict(default_environment())
    if python_version:
        parts = re.match(r"^(\d+)\.(\d+)(?:\.(\d+))?", python_version)
        if parts:
            full = f"{parts[1]}.{parts[2]}.{parts[3] or 0}"
            env.update(python_version=f"{parts[1]}.{parts[2]}", python_full_version=full,
                       implementation_version=full)
    if machine:
        env.update(platform_machine=_MACHINES.get(machine, machine), sys_platform="linux",
                   platform_system="Linux", os_name="posix", implementation_name="cpython",
                   platform_python_implementation="CPython", platform_release="", platform_version="")
    return env
