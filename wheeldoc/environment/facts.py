"""Facts for the environment rules (WD5xx): one installed environment and the machine it is
judged for.

The machine is the host only when no target is given (`wheeldoc doctor` with neither `--gpu`
nor `--driver`): its driver and GPUs (`environment.machine.read_driver`), its CUDA libraries on
`LD_LIBRARY_PATH` and in the loader cache, and its environment variables. With a target, the
machine is what the flags say (`--driver none`: a machine without an NVIDIA driver), and the
library path only what `--ld-library-path` gives. For an image, the machine is the target and
the library path and variables are the image's own (its final ENV, its `/etc/ld.so.cache`).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, Mapping

from wheeldoc.environment.reader import Distribution, Environment, FileSystem, SharedLibrary
from wheeldoc.environment.machine import GpuDevice, LibraryPath, NvidiaDriver
from wheeldoc.core.target import Target

MachineSource = Literal["host", "flags", "image"]

# torch libraries only a CUDA build ships (what a CUDA companion links and a CPU torch lacks)
_CUDA_TORCH_LIB = re.compile(r"^lib(?:c10_cuda|torch_cuda(?:_[a-z_]+)?|torch_nvshmem|c10d_cuda_test)\.so")


@dataclass(frozen=True)
class Machine:
    """The machine the environment is judged for."""

    source: MachineSource
    driver: NvidiaDriver | None = None  # as read from the host (source "host")
    no_driver: bool = False  # known to have no NVIDIA driver (host without one, or --driver none)
    library_path: LibraryPath | None = None
    environ: Mapping[str, str] | None = None  # variables installs in it would see
    notes: tuple[str, ...] = ()

    @property
    def gpus(self) -> tuple[GpuDevice, ...]:
        return self.driver.gpus if self.driver is not None else ()

    def describe(self, target: Target) -> str:
        if self.no_driver:
            why = self.driver.reason if self.driver is not None else "--driver none"
            return f"no NVIDIA driver ({why})"
        return target.describe()


@dataclass(frozen=True)
class EnvFacts:
    env: Environment
    where: str  # how to name the environment: its site-packages, or image!site-packages
    fs: FileSystem
    target: Target
    machine: Machine
    image: str | None = None
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    # -- distributions -------------------------------------------------------------------
    @cached_property
    def installed(self) -> dict[str, Distribution]:
        """name -> the distribution Python imports (the first of that name)."""
        out: dict[str, Distribution] = {}
        for d in self.env.distributions:
            out.setdefault(d.name, d)
        return out

    @property
    def torch_dist(self) -> Distribution | None:
        return self.installed.get("torch")

    @property
    def torch_kind(self) -> str | None:
        """"cuda", "cpu", "rocm", "xpu" from torch/version.py, else from the local tag; None without torch."""
        if self.torch_dist is None:
            return None
        if self.env.torch is not None:
            return self.env.torch.kind
        from wheeldoc.core.torchbuild import classify_local

        b = classify_local(self.torch_dist.local)
        return b.kind if b else None

    @property
    def torch_version(self) -> str:
        t = self.env.torch
        return t.version if t is not None else (self.torch_dist.version if self.torch_dist else "")

    @property
    def torch_cuda(self) -> tuple[int, int] | None:
        t = self.env.torch
        if t is not None:
            return t.cuda_tuple
        from wheeldoc.core.torchbuild import classify_local

        b = classify_local(self.torch_dist.local) if self.torch_dist else None
        return b.cuda if b and b.kind == "cuda" and b.cuda and b.cuda[1] >= 0 else None

    def metadata_path(self, dist: Distribution) -> str:
        return self.fs.where(posixpath.join(dist.dist_info_path, "METADATA"))

    def rel(self, path: str) -> str:
        """A path inside the environment, relative to its site-packages."""
        for sp in self.env.location.site_packages:
            if path.startswith(sp.rstrip("/") + "/"):
                return path[len(sp.rstrip("/")) + 1:]
        return path

    # -- libraries -----------------------------------------------------------------------
    @cached_property
    def provided(self) -> dict[str, SharedLibrary]:
        """soname (and file name) -> the first library of the environment providing it."""
        out: dict[str, SharedLibrary] = {}
        for lib in self.env.libraries:
            for key in (lib.soname, lib.name):
                if key:
                    out.setdefault(key, lib)
        return out

    @cached_property
    def torch_libraries(self) -> tuple[SharedLibrary, ...]:
        return tuple(lib for lib in self.env.libraries if lib.distribution == "torch")

    def cuda_torch_needs(self, lib: SharedLibrary) -> tuple[str, ...]:
        """The CUDA-only torch libraries (libc10_cuda.so, libtorch_cuda.so, …) `lib` needs."""
        return tuple(n for n in lib.torch_needed if _CUDA_TORCH_LIB.match(n))

    @cached_property
    def cuda_linked(self) -> tuple[tuple[SharedLibrary, tuple[str, ...]], ...]:
        """Libraries outside torch that need CUDA-only torch libraries, and which ones torch lacks."""
        out = []
        for lib in self.env.torch_linked:
            needs = self.cuda_torch_needs(lib)
            if needs:
                out.append((lib, tuple(n for n in needs if n not in self.provided)))
        return tuple(out)

    @cached_property
    def gpu_code_elsewhere(self) -> tuple[SharedLibrary, ...]:
        """Libraries with GPU code outside torch and the NVIDIA runtime packages."""
        from wheeldoc.core.torchbuild import is_cuda_library

        return tuple(lib for lib in self.env.gpu_libraries
                     if lib.distribution not in (None, "torch") and not is_cuda_library(lib.distribution))

    def needed_sonames(self, libs) -> dict[str, list[SharedLibrary]]:
        out: dict[str, list[SharedLibrary]] = {}
        for lib in libs:
            for n in lib.needed:
                out.setdefault(n, []).append(lib)
        return out
