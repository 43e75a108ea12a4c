"""WD1xx: resolved lockfiles (uv.lock, pylock.toml, requirements files)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

from wheeldoc.lockfile.facts import LockFacts
from wheeldoc.data.torch import series_of, torch_table
from wheeldoc.core.engine import Context
from wheeldoc.core.model import Finding, Location, Severity
from wheeldoc.core.registry import Example, rule
from wheeldoc.lockfile.fixes import PinPlan, fix_for
from wheeldoc.lockfile.source import LockedPackage
from wheeldoc.core.torchbuild import Build, classify_index, cuda_variant, variant_cuda

L = "fixtures/locks"


def _loc(facts: LockFacts, pkg: LockedPackage) -> Location:
    return Location(pkg.file or facts.lock.path, pkg.line)


def _data(facts: LockFacts, pkg: LockedPackage, **extra) -> dict:
    return {"package": pkg.name, "version": pkg.version, "index": pkg.index,
            "pulled_in_by": list(pkg.pulled_in_by), "lock_format": facts.lock.format,
            "platform": facts.platform, **extra}


def _platform_note(facts: LockFacts) -> tuple[str, ...]:
    if facts.platform_assumed:
        return (f"target platform assumed {facts.platform} (give --platform or --gpu to change it)",)
    return ()


# -- choosing the CUDA build to pin ----------------------------------------------------------------

def choose_variant(facts: LockFacts, torch_version: str) -> tuple[str, str]:
    """The CUDA variant to pin torch to, and why: one the target driver runs, preferring what the
    lock already points at (a companion's tag, a configured CUDA index, the CUDA libraries' major)."""
    series = torch_table().series.get(series_of(torch_version) or "")
    candidates = list(series.cuda if series else ()) or ["cu128", "cu130"]
    experimental = set(series.experimental if series else ())

    def newest(vs: list[str]) -> str:  # of one CUDA major: the matrix's stable variants before its experimental ones
        return ([v for v in vs if v not in experimental] or vs)[-1]

    driver = facts.target.driver
    if driver is not None:
        fits = [v for v in candidates if (variant_cuda(v) or (99, 9)) <= driver.cuda]
        candidates = fits or candidates[:1]
    for p, b in facts.torch_family():
        if p.name != "torch" and b.kind == "cuda" and b.cuda and b.cuda[1] >= 0 \
                and cuda_variant(b.cuda) in candidates:
            return cuda_variant(b.cuda), f"{p.name} {p.version} is built for it"
    for url in facts.cuda_indexes():
        b = classify_index(url)
        if b and b.cuda and cuda_variant(b.cuda) in candidates:
            return cuda_variant(b.cuda), f"the lock's sources include the {cuda_variant(b.cuda)} index"
    majors = {m for _, m in facts.cuda_libraries}
    if len(majors) == 1:
        major = majors.pop()
        same = [v for v in candidates if (variant_cuda(v) or (0, 0))[0] == major]
        if same:
            return newest(same), f"the locked CUDA libraries are CUDA {major}"
    top = max((variant_cuda(v) or (0, 0))[0] for v in candidates)
    pick = newest([v for v in candidates if (variant_cuda(v) or (0, 0))[0] == top])  # of the newest major
    if driver is not None:
        return pick, f"the newest CUDA build of torch {series_of(torch_version)} that the driver " \
                     f"({driver.version or 'CUDA ' + driver.cuda_str}) runs"
    return pick, f"the newest CUDA build published for torch {series_of(torch_version)}"


def _exact_pin(facts: LockFacts, pkg: LockedPackage) -> str | None:
    for parent in pkg.pulled_in_by:
        spec = facts.pin_of(parent, pkg.name)
        if spec and spec.startswith("=="):
            return spec[2:].split("+")[0].split(",")[0]
    return None


def _local_source(facts: LockFacts, name: str, version: str) -> str | None:
    """The source given on the command line that holds the CUDA build, when the lock's own
    sources do not (then the override alone is enough)."""
    from wheeldoc.binary.localindex import find_local_wheels

    if find_local_wheels(facts.lock_local_sources(), name, version):
        return None
    for flag, value in facts.index_options:
        path = value[7:] if value.startswith("file://") else value
        if "://" not in path and find_local_wheels([Path(path)], name, version):
            return value
    return None


def pin_plan(facts: LockFacts, bad: list[LockedPackage]) -> PinPlan:
    torch = next((p for p in bad if p.name == "torch"), None) or (facts.get("torch") or bad)[0]
    version = _exact_pin(facts, torch) or torch.public_version
    variant, why = choose_variant(facts, version)
    pins = [f"torch=={version}+{variant}"]
    for p in bad:
        if p.name != "torch":
            pins.append(f"{p.name}=={p.public_version}+{variant}")
    source = _local_source(facts, "torch", f"{version}+{variant}")
    configured = next((u for u in facts.cuda_indexes() if (b := classify_index(u)) and b.cuda
                       and cuda_variant(b.cuda) == variant), None)
    return PinPlan(tuple(pins), variant, why, source, facts.index_options, configured)


def _fix(facts: LockFacts, bad: list[LockedPackage]):
    plan = pin_plan(facts, bad)
    return fix_for(facts.lock.path, facts.lock.format, facts.lock.tool, facts.lock.tool_command, plan), plan


def _pin_words(name: str, spec: str | None) -> str:
    if spec is None:
        return "pin unknown (not recorded in the lock; pass its index with --find-links/--extra-index-url)"
    if spec == "":
        return "does not pin it"
    note = ""
    if spec.startswith("==") and "+" not in spec and "," not in spec:
        note = f" (a version pin also admits {spec[2:]}+cpu)"
    return f"requires {name}{spec}{note}"


def _differs(b: Build, tb: Build) -> bool:
    if "unknown" in (b.kind, tb.kind):
        return False
    if b.kind != tb.kind:
        return True
    if b.kind == "cuda" and b.cuda and tb.cuda:
        if b.cuda[0] != tb.cuda[0]:
            return True
        return -1 not in (b.cuda[1], tb.cuda[1]) and b.cuda != tb.cuda
    return False


# -- rules ---------------------------------------------------------------------------------------

@rule("WD101", "cpu-torch", title="torch resolved to a CPU-only build", severity=Severity.ERROR,
      examples=(Example(("check", "fixtures/story"), True),
                Example(("check", f"{L}/cpu-torch/hit-unpinned-via-flashinfer/requirements.uv.txt"), True),
                Example(("check", f"{L}/cpu-torch/hit-exact-pin-admits-cpu/requirements.pip-compile.txt"), True),
                Example(("check", f"{L}/cpu-torch/hit-uv-project-cpu-index/uv.lock"), True),
                Example(("check", f"{L}/cpu-torch/hit-uv-project-cpu-index/pylock.toml"), True),
                Example(("check", f"{L}/traps/pypi-torch-universal/uv.lock", "--gpu", "gb10"), True),
                Example(("check", f"{L}/clean/ok-uv-project-forked/uv.lock"), False),
                Example(("check", f"{L}/cpu-torch/ok-cpu-only/requirements.uv.txt"), False),
                Example(("check", f"{L}/traps/ok-rocm/requirements.uv.txt"), False),
                Example(("check", f"{L}/traps/ok-xpu/pylock.pip.toml"), False),
                Example(("check", f"{L}/traps/ok-pypi-torch-no-local/pylock.pip.toml"), False),
                Example(("check", f"{L}/traps/pypi-torch-universal/pylock.toml"), False)))
def cpu_torch(facts: LockFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Flags a torch (or torchvision / torchaudio) that the lock resolved to a CPU-only build while
    the project evidently wants CUDA: other CUDA packages are locked, a companion is a CUDA build,
    a CUDA index is configured, or a `--gpu` target is given. A CPU build is a `+cpu` local
    version, a package taken from a CPU index (`/whl/cpu`), or a PyPI torch whose dependencies for
    the target platform carry no CUDA runtime (PyPI's torch for macOS and Windows), or an untagged
    one from a PyTorch CUDA index (those name their CUDA builds `+cuNNN`: the cu124 index's
    aarch64 torch 2.5.1 is its CPU build). ROCm and XPU builds are not CPU builds. It names what
    pulled torch in and whether that package pins it. A CPU torchvision / torchaudio beside a CPU
    torch is named in torch's finding (one cause, one finding); beside a CUDA torch it is its own.

    ## Why is this bad?
    The install succeeds and nothing fails until run time: `torch.version.cuda` is `None`,
    `torch.cuda.is_available()` is `False`, and extensions built against CUDA torch fail to load
    (`libc10_cuda.so: cannot open shared object file`). A package that depends on torch without
    pinning it lets the resolver pick any torch, and a `+cpu` build satisfies `torch==2.10.0`.

    ## Example
    ```
    torch==2.10.0+cpu
        # via flashinfer-python
    ```

    ## Fix
    Pin the CUDA build, which a bare version pin cannot do (`==2.11.0` also admits `2.11.0+cpu`):
    with `uv pip`, an overrides file holding `torch==2.11.0+cu130` passed with `--override`, plus
    `--torch-backend cu130`; in a uv project, `[tool.uv] override-dependencies` and a
    `[tool.uv.sources]` entry for the PyTorch CUDA index; with pip, a constraints file and
    `--extra-index-url https://download.pytorch.org/whl/cu130`.
    """
    if facts.platform.startswith("macos"):
        return  # no CUDA build of torch exists for macOS: a CPU torch there is no downgrade
    intent = facts.cuda_intent
    if not intent:
        return
    bad = [(p, b) for p, b in facts.torch_family() if b.kind == "cpu"]
    if not bad:
        return
    fix, plan = _fix(facts, [p for p, _ in bad])
    # one cause, one finding: a CPU torch that is an error carries the CPU companions beside it
    # (a companion's build follows torch's; the fix pins them together)
    lead = next((p for p, _ in bad if p.name == "torch"), None)
    followers = [] if lead is None or facts.deliberate_cpu(lead) or not facts.lock_cuda_intent else \
        [(p, b) for p, b in bad if p is not lead and not facts.deliberate_cpu(p)]
    bad = [(p, b) for p, b in bad if all(p is not f for f, _ in followers)]
    for pkg, build in bad:
        chosen = facts.deliberate_cpu(pkg)
        if chosen or not facts.lock_cuda_intent:
            why = chosen or ("nothing in the lock asks for CUDA (no CUDA library, GPU package or CUDA index); "
                             "only the target has a GPU")
            yield Finding(
                rule="WD101", title="torch resolved to a CPU-only build", severity=Severity.INFO,
                location=_loc(facts, pkg),
                message=f"{pkg.name} {pkg.version} is a CPU-only build ({build.reason}): {why}.",
                evidence=(*[f"CUDA wanted: {r}" for r in intent], *_platform_note(facts)),
                data=_data(facts, pkg, build=build.kind, deliberate=bool(chosen), cuda_intent=list(intent)),
            )
            continue
        via = ", ".join(pkg.pulled_in_by) or "a direct requirement"
        pins = []
        for parent in pkg.pulled_in_by:
            if parent.startswith("-"):
                continue
            spec = facts.pin_of(parent, pkg.name)
            pins.append(f"{parent}: " + _pin_words(pkg.name, spec))
        also = [f"{f.name} {f.version}" for f, _ in followers] if pkg is lead else []
        yield Finding(
            rule="WD101", title="torch resolved to a CPU-only build", severity=Severity.ERROR,
            location=_loc(facts, pkg),
            message=f"{pkg.name} {pkg.version} is a CPU-only build ({build.reason}), but the project "
                    f"wants CUDA. Pulled in by {via}. At run time torch.version.cuda is None."
                    + (f" {' and '.join(also)} beside it {'is a CPU-only build' if len(also) == 1 else 'are CPU-only builds'}"
                       " too (they follow torch; the fix pins them together)." if also else ""),
            evidence=(*[f"CUDA wanted: {r}" for r in intent], *pins, *_platform_note(facts),
                      *[f"{f.name} {f.version}: CPU-only ({b.reason})" for f, b in followers if pkg is lead],
                      f"pin {plan.pins[0]}: {plan.why_variant}"),
            fix=fix,
            data=_data(facts, pkg, build=build.kind, cuda_intent=list(intent),
                       pins={p.split(":")[0]: p.split(": ", 1)[1] for p in pins},
                       cpu_companions=[f.name for f, _ in followers] if pkg is lead else [],
                       override=list(plan.pins)),
        )


@rule("WD102", "mixed-cuda-variants", title="CUDA variants of torch and its companions disagree",
      severity=Severity.ERROR,
      examples=(Example(("check", f"{L}/mixed-cuda/hit-cu130-torch-cu12-libs/requirements.uv.txt"), True),
                Example(("check", f"{L}/mixed-cuda/hit-cu12-torch-cupy13/uv.lock"), True),
                Example(("check", f"{L}/mixed-cuda/hit-companion-local-differs/requirements.uv.txt"), True),
                Example(("check", f"{L}/real-index/hit-torch-lt-2.14/requirements.txt"), True),
                Example(("check", f"{L}/mixed-cuda/ok-cu130-consistent/requirements.pip-compile.txt"), False),
                Example(("check", f"{L}/traps/ok-pyg-local-tags/requirements.uv.txt"), False)))
def mixed_cuda(facts: LockFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Compares the build of torch with the builds of everything that must match it: torchvision and
    torchaudio (their local tags `+cu128` / `+cpu`, or a PyPI CUDA build beside a `+cpu` torch),
    and the CUDA library packages (`nvidia-*-cu12` beside a CUDA 13 torch, `cupy-cuda13x` or
    `jax-cuda13-plugin` beside a CUDA 12 torch). Local tags that are not torch variants, such as
    PyG's `+pt24cu121`, are not compared; nor are packages that carry no CUDA runtime (the driver
    API bindings `cuda-python`/`cuda-bindings`, the CuTe DSL compiler libraries
    `nvidia-cutlass-dsl-libs-cu12`/`-cu13`). In a universal uv.lock each environment is judged; a
    mix that only a combination of several extras/groups produces (neither the default
    environment nor any one of them alone has it) is a warning that the project leaves that
    combination undeclared, and its fix is a `[tool.uv] conflicts` entry naming them.

    ## Why is this bad?
    One process can load only one CUDA runtime per major version cleanly. A torchvision built for
    CUDA 12.8 beside a torch built for 13.0 fails to import its `_C` extension; a CPU torch beside
    a CUDA torchvision cannot load torchvision's kernels at all; two CUDA majors in one lock mean
    two copies of cuBLAS and cuDNN, and whichever loads first wins.

    ## Example
    ```
    torch==2.11.0+cu130
    torchvision==0.26.0+cu128
    nvidia-cublas-cu12==12.8.4.1
    ```

    ## Fix
    Take torch and its companions from one CUDA index (`--torch-backend cu130`, or one
    `[tool.uv.sources]` index for all three) and drop CUDA libraries of the other major.
    """
    torches = [(p, b) for p, b in facts.torch_family() if p.name == "torch"]
    if not torches:
        return
    torch, tb = torches[0]
    for pkg, b in facts.torch_family():
        if pkg.name == "torch" or not _differs(b, tb):
            continue
        bad = [torch] if tb.kind == "cpu" else [pkg]
        fix, _ = _fix(facts, bad + ([pkg] if tb.kind == "cpu" and b.kind == "cpu" else []))
        yield Finding(
            rule="WD102", title="CUDA variants of torch and its companions disagree", severity=Severity.ERROR,
            location=_loc(facts, pkg),
            message=f"{pkg.name} {pkg.version} is a {b.label} build, but torch {torch.version} is a "
                    f"{tb.label} build: its compiled extension will not load against this torch.",
            evidence=(f"{pkg.name}: {b.reason}", f"torch: {tb.reason}", *_platform_note(facts)),
            fix=fix,
            data=_data(facts, pkg, build=b.kind, torch=torch.version, torch_build=tb.kind),
        )
    if tb.kind != "cuda" or not tb.cuda:
        return
    others = [(p, m) for p, m in facts.cuda_libraries if m != tb.cuda[0]]
    if others:
        first = others[0][0]
        names = ", ".join(f"{p.name} {p.version}" for p, _ in others[:6])
        yield Finding(
            rule="WD102", title="CUDA variants of torch and its companions disagree", severity=Severity.ERROR,
            location=_loc(facts, first),
            message=f"torch {torch.version} is a CUDA {tb.cuda[0]} build, but CUDA {others[0][1]} "
                    f"libraries are locked beside it: {names}.",
            evidence=(f"torch: {tb.reason}",
                      *[f"{p.name} {p.version}: CUDA {m} (pulled in by {', '.join(p.pulled_in_by) or '?'})"
                        for p, m in others]),
            fix=None,
            data=_data(facts, first, torch=torch.version, torch_cuda_major=tb.cuda[0],
                       packages=[p.name for p, _ in others]),
        )


@rule("WD103", "companion-mismatch", title="companion locked for another torch release", severity=Severity.ERROR,
      examples=(Example(("check", f"{L}/companion/hit-override-leaves-torchvision/requirements.uv.txt"), True),
                Example(("check", f"{L}/companion/hit-uv-project-override/uv.lock"), True),
                Example(("check", f"{L}/companion/ok-matching/requirements.uv.txt"), False)))
def companion_mismatch(facts: LockFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Checks torchvision, torchaudio and triton against the torch release they were made for, from
    wheeldoc's correspondence table (`wheeldoc/data/torch.json`, read from the published wheels'
    Requires-Dist: torch 2.13 ↔ torchvision 0.28 ↔ triton 3.7; torch 2.11 ↔ torchaudio 2.11).
    Where no published companion release names a torch series, nothing is judged; nor is a
    nightly or other pre-release (its companions are the nightlies of its date, which the table of
    releases does not record). Patch releases within a series are compatible.

    ## Why is this bad?
    torchvision and torchaudio ship C++ extensions compiled against one torch release; with
    another they fail to import with undefined symbols, or, worse, import and crash. triton is
    the compiler torch.compile drives; another series miscompiles or fails.

    ## Example
    ```
    torch==2.14.1
    torchvision==0.28.0   # made for torch 2.13
    ```

    ## Fix
    Lock the companion series that matches torch (`torchvision==0.29.*` for torch 2.14), or let
    the resolver choose by not pinning the companion separately.
    """
    table = torch_table()
    for torch in facts.get("torch"):
        row = table.series.get(series_of(torch.version) or "")
        if row is None or _prerelease(torch.version):
            continue  # a nightly: its companions are the nightlies of its date, not the table's releases
        for comp in ("torchvision", "torchaudio", "triton"):
            want = getattr(row, comp)
            if want is None:
                continue
            for pkg in facts.get(comp):
                if _prerelease(pkg.version):
                    continue
                have = series_of(pkg.version)
                if have == want:
                    continue
                made_for = next((s for s, r in table.series.items() if getattr(r, comp) == have), None)
                yield Finding(
                    rule="WD103", title="companion locked for another torch release", severity=Severity.ERROR,
                    location=_loc(facts, pkg),
                    message=f"{pkg.name} {pkg.version} belongs to torch "
                            f"{made_for + '.x' if made_for else 'another release'}, but torch {torch.version} "
                            f"is locked: torch {row.series} needs {comp} {want}.x.",
                    evidence=(f"table: torch {row.series} -> {comp} {want}",),
                    fix=None,
                    data=_data(facts, pkg, torch=torch.version, expected_series=want),
                )


def _prerelease(version: str) -> bool:
    """A nightly or other pre-release (`2.12.0.dev20260316+cu130`): the release table does not say
    which companions it goes with."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(version).is_prerelease
    except InvalidVersion:
        return False


@rule("WD104", "cuda-newer-than-driver", title="CUDA build newer than the target driver", severity=Severity.ERROR,
      examples=(Example(("check", f"{L}/clean/ok-uv-project-cu130/uv.lock", "--driver", "575.57.08"), True),
                Example(("check", f"{L}/clean/ok-uv-project-cu130/uv.lock", "--driver", "12.8"), True),
                Example(("check", f"{L}/clean/ok-uv-project-cu130/uv.lock", "--driver", "580.95.05"), False)))
def cuda_newer_than_driver(facts: LockFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    With `--driver`, compares the CUDA version of the locked torch build (`+cu130` is CUDA 13.0)
    and the CUDA major of the locked CUDA libraries with what the driver supports.

    ## Why is this bad?
    A CUDA 13 runtime needs a driver of the 580 branch or newer. On an older driver the first
    CUDA call fails with `cudaErrorInsufficientDriver` ("CUDA driver version is insufficient for
    CUDA runtime version") and torch reports no GPU. Within one major, minor-version compatibility
    lets a newer runtime run, except for PTX JIT of code newer than the driver.

    ## Example
    ```
    torch==2.11.0+cu130      # target driver 575.57.08 (CUDA 12.9)
    ```

    ## Fix
    Upgrade the driver to the branch the build needs, or lock the torch build for the driver's
    CUDA (`+cu128` for a 570/575 driver).
    """
    driver = ctx.target.driver
    if driver is None:
        return
    from wheeldoc.data import tables

    family = [(p, b) for p, b in facts.torch_family() if b.kind == "cuda" and b.cuda]
    too_new = [(p, b) for p, b in family if b.cuda[0] > driver.cuda[0]]
    if too_new:
        fix, plan = _fix(facts, [p for p, _ in too_new])
    for pkg, b in family:
        need = (b.cuda[0], max(b.cuda[1], 0))
        if need[0] > driver.cuda[0]:
            minimum = tables.driver_floor(need)
            yield Finding(
                rule="WD104", title="CUDA build newer than the target driver", severity=Severity.ERROR,
                location=_loc(facts, pkg),
                message=f"{pkg.name} {pkg.version} is a {b.label} build; the target {driver.named} "
                        f"supports CUDA {driver.cuda_str}. The first CUDA call fails "
                        f"with cudaErrorInsufficientDriver.",
                evidence=(f"{b.label} needs driver >= {minimum or '?'}", f"{pkg.name}: {b.reason}",
                          f"or pin {', '.join(plan.pins)}: {plan.why_variant}"),
                fix=fix,
                data=_data(facts, pkg, cuda=f"{need[0]}.{need[1]}", driver=driver.version,
                           driver_cuda=driver.cuda_str, min_driver=minimum),
            )
        elif need > driver.cuda:
            yield Finding(
                rule="WD104", title="CUDA build newer than the target driver", severity=Severity.INFO,
                location=_loc(facts, pkg),
                message=f"{pkg.name} {pkg.version} is a {b.label} build on a CUDA {driver.cuda_str} driver: "
                        "it runs through minor-version compatibility, but PTX newer than the driver "
                        "cannot be JIT-compiled.",
                evidence=(f"{pkg.name}: {b.reason}",),
                data=_data(facts, pkg, cuda=f"{need[0]}.{need[1]}", driver=driver.version,
                           driver_cuda=driver.cuda_str),
            )
    libs = [(p, m) for p, m in facts.cuda_libraries if m > driver.cuda[0]]
    if libs and not too_new:
        first = libs[0][0]
        yield Finding(
            rule="WD104", title="CUDA build newer than the target driver", severity=Severity.ERROR,
            location=_loc(facts, first),
            message=f"CUDA {libs[0][1]} libraries are locked ({', '.join(p.name for p, _ in libs[:5])}); the "
                    f"target driver supports CUDA {driver.cuda_str}.",
            evidence=(f"CUDA {libs[0][1]} needs driver >= {tables.min_driver_for_cuda((libs[0][1], 0)) or '?'}",),
            data=_data(facts, first, driver=driver.version, driver_cuda=driver.cuda_str,
                       packages=[p.name for p, _ in libs]),
        )
