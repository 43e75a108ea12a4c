"""Facts about one resolved lockfile for one target: which torch build each entry is, which CUDA
major each CUDA library belongs to, whether the project evidently wants CUDA, who pins torch."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from wheeldoc.data.torch import series_of, torch_table
from wheeldoc.lockfile.source import LockedPackage, Lockfile

if TYPE_CHECKING:
    from wheeldoc.lockfile.environments import Environment
from wheeldoc.core.target import DEFAULT_PLATFORM, Target, marker_environment
from wheeldoc.core.torchbuild import (Build, classify_index, classify_local, is_cuda_library,
                                 library_cuda_major)

TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
# Python bindings to the driver API: they carry no CUDA runtime of their own; nor do the CuTe DSL
# compiler libraries nvidia-cutlass-dsl requires whatever its extra (their shared objects link libc,
# libdl, libm, librt and libpthread only: `readelf -d` on the 4.6.0 wheels, docs/real-world-precision-scan.md).
_BINDINGS = frozenset({"cuda-bindings", "cuda-python", "cuda-pathfinder", "cuda-core",
                       "nvidia-cutlass-dsl-libs-cu12", "nvidia-cutlass-dsl-libs-cu13"})


@dataclass
class LockFacts:
    lock: Lockfile
    target: Target
    index_options: tuple[tuple[str, str], ...] = ()  # ("--index-url", URL), … given on the command line
    environment: Environment | None = None
    """The environment judged (uv.lock: one resolved per extras/groups choice); None: the whole
    lock filtered by markers (requirements files, pylock)."""
    _env: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._env = marker_environment(self.platform, self.target.python)
        if self.environment is not None:
            from wheeldoc.lockfile.environments import marker_evaluator

            active = {c.marker_value for c in self.environment.choices} | {c.name for c in self.environment.choices}
            self._evaluate = marker_evaluator(self._env, active)
        else:
            self._evaluate = None

    @property
    def environment_name(self) -> str | None:
        return self.environment.name if self.environment is not None else None

    @property
    def extra_sources(self) -> tuple[str, ...]:
        return tuple(v for _, v in self.index_options)

    @property
    def platform(self) -> str:
        return self.target.platform or DEFAULT_PLATFORM

    @property
    def platform_assumed(self) -> bool:
        return self.target.platform is None

    # -- which entries apply to the target ----------------------------------------------------
    def applies(self, marker: str | None) -> bool:
        if not marker:
            return True
        if self._evaluate is not None:
            return self._evaluate(marker)
        from packaging.markers import InvalidMarker, Marker, UndefinedEnvironmentName

        try:
            return Marker(marker).evaluate(self._env)
        except (InvalidMarker, UndefinedEnvironmentName, ValueError):
            return True

    # An entry without a version (an unpinned line of a requirements file, a URL that names none)
    # is not a resolved build: no fact and so no finding is ever derived from it; `unpinned`
    # lists those the user could have meant to pin, and the command reports them as skipped.
    @cached_property
    def packages(self) -> tuple[LockedPackage, ...]:
        if self.environment is not None:
            return tuple(p for p in self.environment.packages if p.version)
        return tuple(p for p in self.lock.packages if p.version and self.applies(p.markers))

    @cached_property
    def _by_name(self) -> dict[str, tuple[LockedPackage, ...]]:
        out: dict[str, list[LockedPackage]] = {}
        for p in self.packages:
            out.setdefault(p.name, []).append(p)
        return {k: tuple(v) for k, v in out.items()}

    def get(self, name: str) -> tuple[LockedPackage, ...]:
        from wheeldoc.lockfile.source import canonical_name

        return self._by_name.get(canonical_name(name), ())

    @cached_property
    def unpinned(self) -> tuple[LockedPackage, ...]:
        return tuple(p for p in self.lock.packages if not p.version and p.source in ("registry", "url", "path")
                     and self.applies(p.markers))

    # -- builds ---------------------------------------------------------------------------------
    def build(self, pkg: LockedPackage) -> Build:
        """The variant of a torch-family package as locked, for the target platform, from the
        evidence that decides it: its local tag, its index, its own dependencies, and for
        PyPI's torch the CUDA packages its published METADATA requires on this platform
        (`torch.json`). Anything else is "unknown"; nothing is inferred from unrelated packages."""
        if b := classify_local(pkg.local):
            return b
        if b := classify_index(pkg.index):
            if b.kind == "cuda" and not pkg.local and self._untagged_cpu(pkg):
                # the PyTorch CUDA indexes name their CUDA builds +cuNNN; one with no local tag is the CPU
                # build they also serve (aarch64, up to torch 2.6)
                why = ("no CUDA runtime dependency" if pkg.name == "torch" else
                       "built for the untagged torch beside it")
                return Build("cpu", None, f"from {pkg.index} but with no +cu local tag and {why} for "
                                          f"{self.platform}: the index's CPU-only build")
            return b
        if pkg.local:  # a local tag that names no torch variant
            return Build("unknown", None, f"local version tag +{pkg.local}")
        if self.platform.startswith("macos"):
            return Build("cpu", None, "PyPI build for macOS (no CUDA build of torch exists for macOS)")
        cuda_deps = [d for d in pkg.dependencies if is_cuda_library(d.name) and d.name not in _BINDINGS
                     and self.applies(d.marker)]
        graph = self._graph(pkg)
        if graph and cuda_deps:
            major = self._deps_major(cuda_deps)
            return Build("cuda", (major, -1) if major else None,
                         f"PyPI build; its dependencies for {self.platform} include "
                         f"{', '.join(sorted({d.name for d in cuda_deps})[:3])}")
        if pkg.name == "torch":
            row = torch_table().series.get(series_of(pkg.version) or "")
            known, major = row.pypi_cuda_major(self.platform) if row else (False, None)
            if known and major is not None:
                return Build("cuda", (major, -1), f"PyPI's torch {row.series} for {self.platform} requires CUDA "
                                                  f"{major} packages (its published METADATA)")
            if known:
                return Build("cpu", None, f"PyPI's torch {row.series} for {self.platform} requires no CUDA "
                                          "package (its published METADATA): a CPU-only build")
            if graph and self.lock.format == "uv.lock":
                return Build("cpu", None, f"PyPI build with no CUDA runtime dependency for {self.platform}")
        if pkg.name != "torch":
            # No local tag and no PyTorch variant index: PyPI's wheel, built against PyPI's torch
            # of its series (the series its Requires-Dist names, torch.json).
            table = torch_table().series
            comp = series_of(pkg.version)
            row = next((r for r in table.values() if getattr(r, pkg.name, None) == comp), None)
            known, major = row.pypi_cuda_major(self.platform) if row else (False, None)
            if known:
                made = f"PyPI's {pkg.name} {comp} is built against PyPI's torch {row.series}, which on {self.platform} "
                if major is None:
                    return Build("cpu", None, made + "requires no CUDA package (a CPU-only build)")
                return Build("cuda", (major, -1), made + f"requires CUDA {major} packages")
        return Build("unknown", None, "PyPI build without a local tag")

    def _untagged_cpu(self, pkg: LockedPackage) -> bool:
        """An untagged torch-family package from a PyTorch CUDA index that is the CPU build: torch with
        no CUDA runtime dependency for the platform; torchvision / torchaudio requiring such a torch."""
        if not self._graph(pkg):
            return False
        deps = [d for d in pkg.dependencies if self.applies(d.marker)]
        if pkg.name == "torch":
            return not any(is_cuda_library(d.name) and d.name not in _BINDINGS for d in deps)
        edges = [d for d in deps if d.name == "torch"]
        # an edge names a version only when the lock holds several torch entries
        ts = [t for d in edges for t in self.get("torch") if d.version is None or t.version == d.version]
        return bool(edges) and bool(ts) and all(not t.local and self._untagged_cpu(t) for t in ts)

    def _graph(self, pkg: LockedPackage) -> bool:
        """Whether the lock records `pkg`'s own dependencies (so an absent one is absent)."""
        return bool(getattr(self.lock, "graph", True) and (pkg.dependencies or self.lock.format == "uv.lock"))

    def _deps_major(self, deps) -> int | None:
        majors = set()
        for d in deps:
            locked = self.get(d.name)
            version = d.version or (locked[0].version if locked else "")
            m = library_cuda_major(d.name, version)
            if m:
                majors.add(m)
        return majors.pop() if len(majors) == 1 else None

    def _lock_major(self) -> tuple[int, int] | None:
        majors = {m for _, m in self.cuda_libraries}
        return (majors.pop(), -1) if len(majors) == 1 else None

    @cached_property
    def cuda_libraries(self) -> tuple[tuple[LockedPackage, int], ...]:
        out = []
        for p in self.packages:
            if p.name in _BINDINGS:
                continue
            m = library_cuda_major(p.name, p.version)
            if m is not None:
                out.append((p, m))
        return tuple(out)

    def torch_family(self) -> list[tuple[LockedPackage, Build]]:
        return [(p, self.build(p)) for n in TORCH_FAMILY for p in self.get(n)]

    # -- does the project want CUDA? -------------------------------------------------------------
    @cached_property
    def cuda_intent(self) -> tuple[str, ...]:
        """Why the project wants CUDA: the target GPU, and what the lock itself says."""
        reasons = []
        if self.target.gpu is not None:
            reasons.append(f"the target GPU is {self.target.gpu.name} ({self.target.gpu.arch})")
        return (*reasons, *self.lock_cuda_intent)

    @cached_property
    def lock_cuda_intent(self) -> tuple[str, ...]:
        """What in the lock (in this environment) asks for CUDA; a GPU on the target alone does
        not mean a project wants CUDA torch."""
        reasons = []
        for p, b in self.torch_family():
            if p.name != "torch" and b.kind == "cuda":
                reasons.append(f"{p.name} {p.version} is a {b.label} build ({b.reason})")
        libs = sorted({p.name for p, _ in self.cuda_libraries})
        if libs:
            more = f" and {len(libs) - 4} more" if len(libs) > 4 else ""
            reasons.append(f"CUDA libraries are locked: {', '.join(libs[:4])}{more}")
        gpu = sorted(p.name for p in self.packages if p.name in torch_table().gpu_packages
                     or p.name.startswith(("cupy-cuda", "jax-cuda")))
        if gpu:
            reasons.append(f"GPU packages are locked: {', '.join(gpu[:5])}")
        for url in self.cuda_indexes()[:1]:
            reasons.append(f"a CUDA index is configured: {url}")
        return tuple(reasons)

    def cuda_indexes(self) -> tuple[str, ...]:
        """CUDA torch indexes (`…/whl/cu130`) the lock names, in order."""
        seen = (tuple(dict.fromkeys(p.index for p in self.packages if p.index)) if self.environment is not None
                else self.lock.indexes_seen)
        urls = (*self.lock.index_urls, *self.lock.extra_index_urls, *seen)
        return tuple(dict.fromkeys(u for u in urls if (b := classify_index(u)) and b.kind == "cuda"))

    def deliberate_cpu(self, pkg: LockedPackage) -> str | None:
        """Why a CPU build is the project's own choice, or None: an extra chosen for this
        environment maps the package to a CPU index or a `+cpu` version (`[tool.uv.sources]`
        lowered into the lock), or the requirements file was compiled for CPU."""
        if self.environment is not None:
            from wheeldoc.lockfile.environments import workspace_members

            chosen = {c.name for c in self.environment.choices if c.kind == "extra"}
            for m in workspace_members(self.lock):
                for d in m.requires_dist:
                    if d.name != pkg.name or not d.marker:
                        continue
                    src = (d.source or "").removeprefix("index:")
                    cpu = "+cpu" in (d.specifier or "") or (
                        (b := classify_index(src)) is not None and b.kind == "cpu") or (
                        # the extra maps the package to its own index, and what the lock took from it is CPU
                        bool(src) and pkg.index is not None and src.removeprefix("file://") == pkg.index.removeprefix(
                            "file://"))
                    if not cpu:
                        continue
                    for extra in chosen:
                        if f"extra == '{extra}'" in d.marker or f'extra == "{extra}"' in d.marker:
                            return f"the project offers it as its extra `{extra}` ({d.name}{d.specifier or ''} from " \
                                   f"{(d.source or 'a CPU index').removeprefix('index:')})"
            return None
        cmd = self.lock.tool_command or ""
        if "--torch-backend cpu" in cmd or "--torch-backend=cpu" in cmd:
            return f"the file was compiled for CPU: {cmd[:120]}"
        for url in self.lock.index_urls[:1]:
            b = classify_index(url)
            if b is not None and b.kind == "cpu":
                return f"the file's primary index is the CPU index {url}"
        return None

    # -- who pulled a package in, and do they pin it ---------------------------------------------
    def pin_of(self, parent: str, child: str) -> str | None:
        """The specifier `parent` puts on `child`, from the lock or from the parent's wheel METADATA
        when the lock points at local wheels; '' if it declares no constraint; None if unknown."""
        for p in self.lock.get(parent):
            for d in p.requires_dist:
                if d.name == child:
                    return d.specifier or ""
            meta = self._local_metadata(p)
            if meta is not None:
                for req in meta:
                    if req.name == child:
                        return str(req.specifier)
                return ""
        return None

    def _local_metadata(self, pkg: LockedPackage):
        from packaging.requirements import InvalidRequirement, Requirement

        from wheeldoc.binary.wheelmeta import requires_dist

        for whl in self.local_wheels(pkg.name, pkg.version):
            out = []
            for line in requires_dist(whl):
                try:
                    out.append(Requirement(line))
                except InvalidRequirement:
                    continue
            return out
        return None

    def local_wheels(self, name: str, version: str) -> list[Path]:
        """Wheels of `name==version` in the local find-links folders and `file://` simple indexes
        that the lock or the command line name (read only: nothing is installed or unpacked)."""
        from wheeldoc.binary.localindex import find_local_wheels

        return find_local_wheels(self.local_sources(), name, version)

    def local_sources(self) -> list[Path]:
        """The local folders among the lock's sources (relative to the lock) and the command
        line's (relative to the working directory), absolute, each once."""
        out = self.lock_local_sources()
        for src in self.extra_sources:
            p = _local_dir(src, Path.cwd())
            if p is not None and p not in out:
                out.append(p)
        return out

    def lock_local_sources(self) -> list[Path]:
        base = Path(self.lock.path).parent
        out: list[Path] = []
        for src in (*self.lock.find_links, *self.lock.index_urls, *self.lock.extra_index_urls):
            p = _local_dir(src, base)
            if p is not None and p not in out:
                out.append(p)
        return out


def _local_dir(src: str, base: Path) -> Path | None:
    """A `file://` URL or a path that names an existing folder, made absolute; else None."""
    path = src[7:] if src.startswith("file://") else src
    if not path or "://" in path:
        return None
    p = Path(path) if Path(path).is_absolute() else base / path
    try:
        return p.resolve() if p.is_dir() else None
    except OSError:
        return None
