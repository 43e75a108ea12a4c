"""WD5xx: an installed environment (`wheeldoc doctor`, `wheeldoc image`) against its machine.

Every rule reads `EnvFacts` (wheeldoc/environment/facts.py): the distributions, the torch
build from `torch/version.py`, the shared objects' DT_NEEDED / sonames, the machine (host,
flags or image) and its library path. Nothing is imported or loaded.
"""

from __future__ import annotations

import re
import shlex
from typing import Iterable, Iterator

from wheeldoc.environment.facts import EnvFacts
from wheeldoc.core.engine import Context
from wheeldoc.core.model import Finding, Fix, Location, Severity
from wheeldoc.core.registry import Example, rule

E = "fixtures/envs"
H200 = ("--gpu", "h200", "--driver", "580.95.05")
MAX_EVIDENCE = 8
_SYSTEM_LIB = re.compile(r"^(?:ld-linux[^/]*|libc|libm|libdl|librt|libpthread|libutil|libresolv|libgcc_s|libstdc\+\+"
                         r"|libcuda|libnvidia-ml|libatomic|libgomp|libz|libcrypt|libanl|libmvec)\.so(?:\.\d+)*$")


def _sp(name: str) -> str:
    return f"{E}/{name}/lib/python3.12/site-packages"


def _doctor(name: str, *flags: str) -> tuple[str, ...]:
    return ("doctor", "--site-packages", _sp(name), *flags)


def _finding(code: str, location: Location, message: str, evidence: Iterable[str] = (), fix: Fix | None = None,
             severity: Severity | None = None, **data) -> Finding:
    r = _CHECKS[code].rule  # type: ignore[attr-defined]
    ev = list(evidence)
    if len(ev) > MAX_EVIDENCE:
        ev = ev[:MAX_EVIDENCE - 1] + [f"… and {len(ev) - MAX_EVIDENCE + 1} more"]
    return Finding(code, r.title, severity or r.severity, location, message, tuple(ev), fix, data)


def _meta(facts: EnvFacts, name: str) -> Location:
    d = facts.installed.get(name)
    return Location(facts.metadata_path(d)) if d is not None else Location(facts.where)


def _installer(facts: EnvFacts) -> str:
    """The install command for this environment, in the words of the tool that made it."""
    loc = facts.env.location
    if facts.image is not None:
        return "pip install"
    py = loc.executable or (f"{loc.prefix}/bin/python" if loc.prefix and loc.kind == "venv" else None)
    torch = facts.torch_dist
    if torch is not None and torch.installer == "uv":
        return "uv pip install" + (f" --python {shlex.quote(py)}" if py else "")
    return f"{shlex.quote(py)} -m pip install" if py else "pip install"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# -- choosing the CUDA build for a fix ---------------------------------------------------------

def choose_variant(facts: EnvFacts, version: str) -> tuple[str | None, str]:
    """The CUDA variant of torch to install, and why: what the environment already points at
    (a companion's tag, the CUDA packages' major), else what the driver runs, else the newest."""
    from wheeldoc.data.torch import series_of, torch_table
    from wheeldoc.core.torchbuild import classify_local, cuda_variant, variant_cuda

    series = torch_table().series.get(series_of(version) or "")
    candidates = list(series.cuda) if series else []
    if not candidates:
        return None, f"no CUDA build of torch {series_of(version)} is known to wheeldoc"
    driver = facts.target.driver
    if driver is not None:
        fits = [v for v in candidates if (variant_cuda(v) or (99, 9)) <= driver.cuda]
        candidates = fits or candidates[:1]
    for name in ("torchvision", "torchaudio"):
        d = facts.installed.get(name)
        b = classify_local(d.local) if d else None
        if b and b.kind == "cuda" and b.cuda and cuda_variant(b.cuda) in candidates:
            return cuda_variant(b.cuda), f"{name} {d.version} is built for it"
    majors = {p.cuda_major for p in facts.env.cuda_packages if p.cuda_major}
    if len(majors) == 1:
        major = majors.pop()
        same = [v for v in candidates if (variant_cuda(v) or (0, 0))[0] == major]
        if same:
            return same[-1], f"the installed CUDA packages are CUDA {major}"
    if driver is not None:
        return candidates[-1], f"the newest CUDA build of torch {series_of(version)} the driver runs"
    return candidates[-1], f"the newest CUDA build published for torch {series_of(version)}"


# -- rules -------------------------------------------------------------------------------------

@rule("WD501", "cpu-torch-cuda-wanted", title="torch is a CPU-only build but the environment wants CUDA",
      severity=Severity.ERROR,
      examples=(Example(_doctor("cpu-torch", *H200), True),
                Example(_doctor("cpu-torch", "--driver", "none"), True),
                Example(_doctor("cpu-only", "--gpu", "h200"), True),
                Example(_doctor("cuda-ok", *H200), False),
                Example(_doctor("cpu-only", "--driver", "none"), False)))
def cpu_torch_cuda_wanted(facts: EnvFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Reads the installed torch build from `torch/version.py` (a CPU build says `cuda = None`)
    and flags a CPU-only torch in an environment that evidently wants CUDA: an extension that
    links `libc10_cuda.so` / `libtorch_cuda.so` (a CUDA build of torchvision, say), CUDA
    runtime packages (`nvidia-*`), a companion with a `+cuXXX` tag, GPU packages (vLLM,
    FlashInfer, …), other libraries with GPU code, or a GPU on the machine or given with
    `--gpu`. It names the extensions that cannot load and the packages whose torch pin let
    the CPU build in.

    ## Why is this bad?
    This is the root cause of a class of broken environments: `torch.version.cuda` is `None`,
    `torch.cuda.is_available()` is `False`, everything silently runs on the CPU, and every
    extension built against CUDA torch fails at import with `libc10_cuda.so: cannot open
    shared object file`. Nothing warned at install time: a pin such as `torch==2.13.0` is
    satisfied by `2.13.0+cpu`.

    ## Example
    ```
    $ wheeldoc doctor --site-packages fixtures/envs/cpu-torch/lib/python3.12/site-packages --gpu h200
    torch 2.13.0+cpu is a CPU-only build (torch/version.py: cuda = None), but this environment
    wants CUDA: torchvision/_C.so links libc10_cuda.so; the target GPU is H200 (sm_90)
      | torchvision/_C.so needs libc10_cuda.so: this torch does not ship it
    ```

    ## Fix
    Install the CUDA build of the same torch version from the PyTorch index, e.g.
    `pip install torch==2.13.0+cu130 --index-url https://download.pytorch.org/whl/cu130`
    (with uv, `uv pip install` and an override file holding `torch==2.13.0+cu130`, so a later
    resolution cannot bring the CPU build back).
    """
    if facts.torch_kind != "cpu":
        return
    from wheeldoc.data.torch import torch_table
    from wheeldoc.core.torchbuild import classify_local

    torch = facts.torch_dist
    wants: list[str] = []
    evidence: list[str] = []
    broken = [(lib, missing) for lib, missing in facts.cuda_linked if missing]
    if broken:
        names = sorted({n for _, m in broken for n in m})
        wants.append(f"{', '.join(facts.rel(lib.path) for lib, _ in broken[:3])}"
                     f"{' …' if len(broken) > 3 else ''} link{'s' if len(broken) == 1 else ''} {', '.join(names)}")
        for lib, missing in broken:
            evidence.append(f"{facts.rel(lib.path)} ({lib.distribution}) needs {', '.join(missing)}: "
                            "this torch does not ship it")
    companions = [d for n in ("torchvision", "torchaudio") if (d := facts.installed.get(n))
                  and (b := classify_local(d.local)) is not None and b.kind == "cuda"]
    for d in companions:
        wants.append(f"{d.name} {d.version} is a CUDA build")
    cuda_pkgs = [p for p in facts.env.cuda_packages]
    if cuda_pkgs:
        wants.append(f"{_plural(len(cuda_pkgs), 'CUDA runtime package')} installed "
                     f"({', '.join(p.name for p in cuda_pkgs[:4])}{' …' if len(cuda_pkgs) > 4 else ''})")
    gpu_pkgs = sorted(n for n in torch_table().gpu_packages & set(facts.installed)
                      if n not in ("nvidia-ml-py", "pynvml") and not n.startswith("cuda-"))
    if gpu_pkgs:
        wants.append(f"GPU packages installed ({', '.join(gpu_pkgs[:4])})")
    elsewhere = [lib for lib in facts.gpu_code_elsewhere if (lib, ()) not in facts.cuda_linked]
    if elsewhere and not broken:
        wants.append(f"{_plural(len(elsewhere), 'library')} with GPU code "
                     f"({', '.join(facts.rel(x.path) for x in elsewhere[:2])})")
    gpu = facts.target.gpu
    if gpu is not None:
        wants.append(f"the target GPU is {gpu.name} ({gpu.arch})")
    elif facts.machine.gpus:
        wants.append(f"this machine has {', '.join(g.name for g in facts.machine.gpus[:2])}")
    if not wants:
        return
    t = facts.env.torch
    said = "torch/version.py: cuda = None" if t is not None else f"local version tag +{torch.local}"
    for d in facts.env.distributions:
        if d.name == "torch":
            continue
        pin = _torch_pin(facts, d)
        if pin:
            evidence.append(f"{d.name} {d.version} requires {pin}, which {facts.torch_version} satisfies: "
                            "a version pin does not exclude the CPU build")
    base = facts.torch_version.split("+")[0]
    variant, why = choose_variant(facts, base)
    fix = None
    if variant:
        spec = f"torch=={base}+{variant}"
        index = torch_table().index_url(variant)
        extra = [f"{d.name}=={d.version.split('+')[0]}+{variant}" for d in (facts.installed.get(n) for n in
                 ("torchvision", "torchaudio")) if d is not None and d.local == "cpu"]
        cmd = f"{_installer(facts)} {' '.join(shlex.quote(s) for s in [spec, *extra])} --index-url {index}"
        fix = Fix(f"Install the CUDA build {spec} ({why})", "display-only", command=cmd)
        evidence.append(f"install {spec}: {why}")
    yield _finding(
        "WD501", Location(t.version_file if t is not None and facts.image is None else facts.metadata_path(torch)),
        f"torch {facts.torch_version} is a CPU-only build ({said}), but this environment wants CUDA: "
        f"{'; '.join(wants)}. torch.cuda.is_available() is False"
        + (f" and {_plural(len(broken), 'extension')} linking CUDA torch cannot load." if broken else "."),
        evidence, fix, torch=facts.torch_version, build="cpu", wants=wants,
        missing={facts.rel(lib.path): list(m) for lib, m in broken})


_TORCH_REQ = re.compile(r"^\s*torch\s*(?:[\[(;<>=!~]|$)", re.IGNORECASE)


def _torch_pin(facts: EnvFacts, dist) -> str | None:
    """`dist`'s Requires-Dist on torch that applies here, as written; None without one."""
    from packaging.requirements import InvalidRequirement, Requirement

    for text in dist.requires:
        if not _TORCH_REQ.match(text):  # parse only what can name torch (200 distributions, 2,000 lines)
            continue
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if req.name.lower() != "torch" or (req.marker is not None and not _marker(req, facts)):
            continue
        return f"torch{req.specifier}" if str(req.specifier) else None
    return None


def _marker(req, facts: EnvFacts) -> bool:
    from packaging.markers import UndefinedComparison, UndefinedEnvironmentName

    try:
        return bool(req.marker.evaluate({**facts.env.location.markers, "extra": ""}))
    except (UndefinedComparison, UndefinedEnvironmentName, ValueError):
        return False


def _is_cuda_requirement(name: str) -> bool:
    from wheeldoc.core.torchbuild import is_cuda_library

    return is_cuda_library(name) or name.startswith("cuda-")


def missing_sonames(facts: EnvFacts, libs) -> dict[str, list]:
    """DT_NEEDED names of `libs` that nothing in the environment provides (system libraries and
    the driver's `libcuda.so.1` left out): soname -> the libraries that need it."""
    out: dict[str, list] = {}
    for name, users in facts.needed_sonames(libs).items():
        if name not in facts.provided and not _SYSTEM_LIB.match(name):
            out[name] = users
    return out


@rule("WD502", "cuda-runtime-unmet", title="CUDA runtime packages torch requires are missing or other versions",
      severity=Severity.ERROR,
      examples=(Example(_doctor("mismatch", *H200), True),
                Example(_doctor("cuda-ok", *H200), False)))
def cuda_runtime_unmet(facts: EnvFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Checks each CUDA runtime requirement of the installed CUDA torch (`nvidia-*`, `cuda-*` in
    its `Requires-Dist`, followed through extras such as `cuda-toolkit[cublas,…]`) against the
    installed distributions, and names the libraries torch's own `.so` files need that are
    therefore absent (DT_NEEDED with no provider in the environment).

    ## Why is this bad?
    A missing package means a missing library: `import torch` fails with `libcudnn.so.9: cannot
    open shared object file`, or, when a copy elsewhere on the machine is found instead, torch
    runs with a build it was not tested with. Another version of the same major usually loads
    but is not the combination PyTorch validated (cuDNN checks its version at run time); another
    major has another soname and is not found at all. Installs with `--no-deps`, or a
    `pip install nvidia-…` after torch, leave environments in this state.

    ## Example
    ```
    torch 2.11.0+cu130 requires nvidia-cudnn-cu13==9.24.0.43; it is not installed
      | torch/lib/libtorch_cuda.so needs libcudnn.so.9: nothing in the environment provides it
    ```

    ## Fix
    Install exactly the versions torch's metadata pins, e.g.
    `pip install nvidia-cudnn-cu13==9.24.0.43`, or reinstall torch with its dependencies.
    """
    if facts.torch_kind != "cuda" or facts.torch_dist is None:
        return
    from wheeldoc.core.torchbuild import library_cuda_major

    missing, wrong = [], []
    for c in facts.env.requirement_checks:
        if not c.applies or c.satisfied is not False or not _is_cuda_requirement(c.name):
            continue
        (missing if c.installed is None else wrong).append(c)
    torch_cuda = facts.torch_cuda
    absent = missing_sonames(facts, facts.torch_libraries)
    lp = facts.machine.library_path
    elsewhere = {lib.name: lib for lib in (lp.libraries if lp else ())}
    loc = _meta(facts, "torch")
    cmd = _installer(facts)
    if missing:
        ev = []
        for soname, users in sorted(absent.items()):
            found = elsewhere.get(soname)
            tail = (f"; the loader finds {found.path} ({found.source}) instead, a copy torch was not built "
                    "against" if found else ": import torch fails")
            ev.append(f"{facts.rel(users[0].path)} needs {soname}, which nothing in the environment provides{tail}")
        ev += [f"{_pin(c)} (required by {c.required_by.split(' > ')[-1].split('[')[0]})" for c in missing]
        specs = sorted({_pin(c) for c in missing})
        yield _finding(
            "WD502", loc,
            f"torch {facts.torch_version} requires {_plural(len(missing), 'CUDA runtime package')} that "
            f"{'is' if len(missing) == 1 else 'are'} not installed: {', '.join(c.name for c in missing)}"
            + (f"; {_plural(len(absent), 'library')} torch links {'is' if len(absent) == 1 else 'are'} "
               f"therefore missing ({', '.join(sorted(absent)[:4])})" if absent else "") + ".",
            ev, Fix("Install the CUDA runtime packages torch pins", "display-only",
                    command=f"{cmd} {' '.join(shlex.quote(s) for s in specs)}"),
            missing=[c.name for c in missing], missing_libraries=sorted(absent))
    for c in wrong:
        major = library_cuda_major(c.name, c.installed or "")
        other_major = major is not None and torch_cuda is not None and major != torch_cuda[0]
        yield _finding(
            "WD502", _meta(facts, c.name) if c.name in facts.installed else loc,
            f"{c.name} {c.installed} is installed, but torch {facts.torch_version} requires {c.requirement.split(';')[0].strip()}"
            + (f" (via {c.required_by})" if " > " in c.required_by else "")
            + (". It is a CUDA " + str(major) + " package: torch's libraries will not find its sonames." if other_major
               else ". It usually loads, but it is not the combination PyTorch tested."),
            [f"required by {c.required_by}"],
            Fix(f"Install {_pin(c)}", "display-only", command=f"{cmd} {shlex.quote(_pin(c))}"),
            severity=Severity.ERROR if other_major else Severity.WARNING,
            package=c.name, installed=c.installed, requirement=c.requirement)


def _pin(check) -> str:
    """A requirement as an install argument: `nvidia-cudnn-cu13==9.24.0.43` (markers dropped)."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(check.requirement)
    except InvalidRequirement:
        return check.name
    return f"{req.name}{req.specifier}"


@rule("WD503", "installed-companion-mismatch", title="a companion package was built for another torch",
      severity=Severity.ERROR,
      examples=(Example(_doctor("mismatch", *H200), True),
                Example(_doctor("cuda-ok", *H200), False)))
def companion_mismatch(facts: EnvFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Checks the packages built against torch against the installed torch: torchvision,
    torchaudio and triton by PyTorch's release table (torch 2.14 goes with torchvision 0.29,
    torchaudio 2.14, triton 3.8); vLLM, FlashInfer, xFormers and every other installed
    distribution by its own `Requires-Dist` pin on torch (read from its METADATA); the CUDA
    variant of a companion's local tag (`+cu128`) against torch's CUDA; and flash-attn's
    build tag (`+cu12torch2.8cxx11abiTRUE`) against torch's version and CUDA major.

    ## Why is this bad?
    Companions are compiled against one torch release: their extension modules import C++
    symbols of exactly that release, so another torch gives `undefined symbol: _ZN3c10…` at
    import, or a torchvision whose `_C` cannot load (`torchvision::nms does not exist`). A
    CUDA variant that differs loads a second CUDA runtime into the process.

    ## Example
    ```
    torchvision 0.28.0 goes with torch 2.13, but torch 2.11.0+cu130 is installed
    vllm 0.11.0 requires torch==2.10.0; torch 2.11.0+cu130 is installed
    ```

    ## Fix
    Install the companion release made for the installed torch (`torchvision==0.26.*` for torch
    2.11), or the torch its pin asks for.
    """
    torch = facts.torch_dist
    if torch is None:
        return
    from packaging.version import InvalidVersion, Version

    from wheeldoc.data.torch import series_of, torch_table
    from wheeldoc.core.torchbuild import classify_local

    version = facts.torch_version
    series = series_of(version) or ""
    row = torch_table().series.get(series)
    cmd = _installer(facts)
    pinned: set[str] = set()
    for d in facts.env.distributions:
        if d.name == "torch" or facts.installed.get(d.name) is not d:
            continue
        pin = _torch_pin(facts, d)
        if not pin:
            continue
        pinned.add(d.name)
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            ok = SpecifierSet(pin[len("torch"):]).contains(Version(torch.version), prereleases=True)
        except (InvalidSpecifier, InvalidVersion):
            continue
        if not ok:
            yield _finding("WD503", Location(facts.metadata_path(d)),
                           f"{d.name} {d.version} requires {pin}; torch {version} is installed. Its extension "
                           "modules were built against that torch.",
                           [f"{d.name} METADATA: Requires-Dist: {pin}"],
                           Fix(f"Install a {d.name} release made for torch {series}, or the torch it pins",
                               "display-only"),
                           package=d.name, version=d.version, pin=pin, torch=version)
    for name in ("torchvision", "torchaudio", "triton"):
        d = facts.installed.get(name)
        if d is None or row is None or name in pinned and name != "triton":
            continue
        want = getattr(row, name)
        if name == "triton" and any(c.name == "triton" and c.applies for c in facts.env.requirement_checks):
            continue  # torch pins triton itself: a requirement check, see WD508
        if want and series_of(d.version) != want:
            yield _finding("WD503", Location(facts.metadata_path(d)),
                           f"{name} {d.version} goes with torch {_series_for(name, d.version) or '?'}, but torch "
                           f"{version} is installed (torch {series} goes with {name} {want}).",
                           [f"PyTorch's release table: torch {series} -> {name} {want}"],
                           Fix(f"Install {name}=={want}.* for torch {series}", "display-only",
                               command=f"{cmd} {shlex.quote(f'{name}=={want}.*')}"),
                           package=name, version=d.version, expected_series=want, torch=version)
    torch_cuda = facts.torch_cuda
    for name in ("torchvision", "torchaudio"):
        d = facts.installed.get(name)
        b = classify_local(d.local) if d else None
        if b is None or b.kind != "cuda" or not b.cuda or torch_cuda is None:
            continue
        if b.cuda[0] != torch_cuda[0] or (b.cuda[1] >= 0 and b.cuda != torch_cuda):
            yield _finding("WD503", Location(facts.metadata_path(d)),
                           f"{name} {d.version} is a {b.label} build; torch {version} is a CUDA "
                           f"{torch_cuda[0]}.{torch_cuda[1]} build. Two CUDA runtimes end up in one process.",
                           [f"{name}: {b.reason}"], None, package=name, version=d.version)
    fa = facts.installed.get("flash-attn")
    m = re.match(r"^cu(\d+)torch(\d+\.\d+)", fa.local or "") if fa else None
    if fa and m:
        problems = []
        if m[2] != series:
            problems.append(f"built for torch {m[2]}, torch {version} is installed")
        if torch_cuda and int(m[1][:2] if len(m[1]) > 2 else m[1]) != torch_cuda[0]:
            problems.append(f"built for CUDA {m[1]}, torch is CUDA {torch_cuda[0]}.{torch_cuda[1]}")
        if problems:
            yield _finding("WD503", Location(facts.metadata_path(fa)),
                           f"flash-attn {fa.version}: {'; '.join(problems)}.", [f"local version tag +{fa.local}"],
                           None, package="flash-attn", version=fa.version)


def _series_for(name: str, version: str) -> str | None:
    from wheeldoc.data.torch import series_of, torch_table

    s = series_of(version)
    return next((k for k, row in torch_table().series.items() if getattr(row, name) == s), None)


@rule("WD504", "driver-too-old", title="the driver is older than the CUDA build of torch",
      severity=Severity.ERROR,
      examples=(Example(_doctor("cuda-ok", "--gpu", "h200", "--driver", "575.57.08"), True),
                Example(_doctor("cuda-ok", "--gpu", "h200", "--driver", "12.8"), True),
                Example(_doctor("cuda-ok", *H200), False),
                Example(_doctor("cuda-ok", "--driver", "none"), False)))
def driver_too_old(facts: EnvFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Compares the CUDA version of the installed torch (`torch/version.py`: `cuda = '13.0'`),
    and the CUDA major of the installed CUDA runtime packages, with the CUDA version the
    driver supports: the host's (NVML, or `/proc/driver/nvidia/version` and wheeldoc's driver
    table) or the one given with `--driver`.

    ## Why is this bad?
    A CUDA 13 runtime needs a driver of the 580 branch or newer. On an older driver the first
    CUDA call fails with `cudaErrorInsufficientDriver`, and `torch.cuda.is_available()` is
    `False` with a warning. Within one major, minor-version compatibility lets a newer runtime
    run, but PTX newer than the driver cannot be JIT-compiled (reported as information).

    ## Example
    ```
    torch 2.11.0+cu130 is built for CUDA 13.0; driver 575.57.08 supports CUDA 12.9
    ```

    ## Fix
    Upgrade the driver to the branch the build needs (CUDA 13.0: 580 or newer), or install the
    torch build for the driver's CUDA (`+cu128` for a 570/575 driver).
    """
    driver = facts.target.driver
    if driver is None:
        return
    from wheeldoc.data import tables
    from wheeldoc.data.torch import torch_table

    who = f"driver {driver.version} supports CUDA {driver.cuda_str}" if driver.version \
        else f"the driver supports CUDA {driver.cuda_str}"
    cuda = facts.torch_cuda
    if cuda is not None:
        if cuda[0] > driver.cuda[0]:
            minimum = tables.driver_floor(cuda)
            base = facts.torch_version.split("+")[0]
            from wheeldoc.data.torch import series_of
            from wheeldoc.core.torchbuild import cuda_variant, variant_cuda

            row = torch_table().series.get(series_of(base) or "")
            fits = [v for v in (row.cuda if row else ()) if (variant_cuda(v) or (99, 9)) <= driver.cuda]
            fix_cmd = None
            if fits:
                fix_cmd = (f"{_installer(facts)} {shlex.quote(f'torch=={base}+{fits[-1]}')} --index-url "
                           f"{torch_table().index_url(fits[-1])}")
            yield _finding(
                "WD504", _meta(facts, "torch"),
                f"torch {facts.torch_version} is built for CUDA {cuda[0]}.{cuda[1]}; {who}. The first CUDA call "
                "fails with cudaErrorInsufficientDriver and torch sees no GPU.",
                [f"CUDA {cuda[0]}.{cuda[1]} needs driver >= {minimum or '?'}"],
                Fix(f"Upgrade the driver to {minimum or 'a newer branch'} or newer"
                    + (f", or install torch=={base}+{fits[-1]}" if fits else ""), "display-only", command=fix_cmd),
                torch_cuda=f"{cuda[0]}.{cuda[1]}", driver=driver.version, driver_cuda=driver.cuda_str,
                min_driver=minimum, cuda_variant=cuda_variant(cuda))
        elif cuda > driver.cuda:
            yield _finding(
                "WD504", _meta(facts, "torch"),
                f"torch {facts.torch_version} is built for CUDA {cuda[0]}.{cuda[1]}; {who}. It runs through "
                "minor-version compatibility, but PTX newer than the driver cannot be JIT-compiled.",
                severity=Severity.INFO, torch_cuda=f"{cuda[0]}.{cuda[1]}", driver=driver.version,
                driver_cuda=driver.cuda_str)
        return
    newer = [p for p in facts.env.cuda_packages if p.cuda_major and p.cuda_major > driver.cuda[0]]
    if newer:
        major = newer[0].cuda_major
        yield _finding(
            "WD504", _meta(facts, newer[0].name),
            f"{_plural(len(newer), 'CUDA ' + str(major) + ' package')} installed "
            f"({', '.join(p.name for p in newer[:4])}); {who}.",
            [f"CUDA {major} needs driver >= {tables.min_driver_for_cuda((major, 0)) or '?'}"],
            packages=[p.name for p in newer], driver=driver.version, driver_cuda=driver.cuda_str)


_FAMILY_OF_PACKAGE = {"cudart": "nvidia-cuda-runtime", "cublas": "nvidia-cublas", "cublasLt": "nvidia-cublas",
                      "cudnn": "nvidia-cudnn"}


@rule("WD505", "cuda-library-on-path", title="a CUDA library on the library path is another build than torch's",
      severity=Severity.WARNING,
      examples=(Example(_doctor("cuda-ok", *H200, "--ld-library-path", f"{E}/ldpath/cuda12"), True),
                Example(_doctor("cuda-ok", *H200, "--ld-library-path", f"{E}/ldpath/cuda13"), True),
                Example(("image", "fixtures/images/ldpath-cuda12", *H200), True),
                Example(_doctor("cuda-ok", *H200, "--ld-library-path", f"{E}/ldpath/unrelated"), False),
                Example(("image", "fixtures/images/cuda-ok", *H200), False)))
def cuda_library_on_path(facts: EnvFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Lists the CUDA libraries (`libcudart`, `libcublas`, `libcublasLt`, `libcudnn*`, `libnccl`,
    `libnvrtc`, …) the dynamic loader finds outside the environment, on `LD_LIBRARY_PATH` or in
    the loader cache (`/etc/ld.so.cache`): the host's when no target is given, the image's final
    `ENV` and cache for `wheeldoc image`, or the folders given with `--ld-library-path`. It
    flags one with another major than the environment's (a `libcudart.so.12` beside a CUDA 13
    torch), and one on `LD_LIBRARY_PATH` with the very soname a wheel provides when the
    libraries that need it search `LD_LIBRARY_PATH` first (DT_RUNPATH: the loader tries
    `LD_LIBRARY_PATH` before it; DT_RPATH would come first).

    ## Why is this bad?
    A copy on `LD_LIBRARY_PATH` shadows the wheel's: torch then runs with a cuDNN or cuBLAS it
    was not built with (`cuDNN version incompatibility`, `CUBLAS_STATUS_NOT_SUPPORTED`, or
    crashes), and the copy changes with the machine. Another major loads a second CUDA runtime
    into the process for anything that asks for the unversioned name or was built for it.
    Entries in the loader cache are searched after the wheels' own paths, so another major
    there is only noted.

    ## Example
    ```
    ENV LD_LIBRARY_PATH=/usr/local/cuda-12.8/lib64    # in an image whose torch is CUDA 13.0
    /usr/local/cuda-12.8/lib64/libcudart.so.12: CUDA 12, torch 2.14.1 is a CUDA 13.0 build
    ```

    ## Fix
    Remove the folder from `LD_LIBRARY_PATH` (the wheels find their CUDA libraries through
    their RUNPATH), or point it at the matching toolkit.
    """
    lp = facts.machine.library_path
    if lp is None or not lp.libraries:
        return
    if facts.torch_kind != "cuda" and not facts.env.cuda_packages:
        return
    from wheeldoc.environment.machine import CUDA_LIBRARY

    ours: dict[str, set[int]] = {}  # family -> soname majors the environment provides or needs
    for lib in facts.env.libraries:
        for name in (lib.soname or lib.name, *lib.needed):
            m = CUDA_LIBRARY.match(name)
            if m and m["major"] and (name in facts.provided or lib.distribution == "torch"):
                ours.setdefault(_family(m["family"]), set()).add(int(m["major"]))
    where = "the image's" if facts.image is not None else "the"
    for found in lp.libraries:
        if found.family == "cuda":  # libcuda.so.1 is the driver's own library: it belongs on the path
            continue
        fam = _family(found.family)
        majors = ours.get(fam)
        if not majors or found.major is None:
            continue
        on_path = found.source == "LD_LIBRARY_PATH"
        loc = Location(facts.fs.where(found.path) if facts.image is not None else found.path)
        if found.major not in majors:
            want = "/".join(str(m) for m in sorted(majors))
            yield _finding(
                "WD505", loc,
                f"{found.name} ({found.source}) has major {found.major}; the environment's {fam} is "
                f"{'.so.' + want} (torch {facts.torch_version or '-'}). "
                + ("It is searched before the wheels' RUNPATH: anything asking for that major or the unversioned "
                   "name loads a second CUDA runtime." if on_path else
                   "The loader cache comes after the wheels' paths; noted for anything that loads it by name."),
                [f"{where} {'LD_LIBRARY_PATH' if on_path else 'loader cache'}: {found.path}"],
                Fix(f"Remove {found.path.rsplit('/', 1)[0]} from LD_LIBRARY_PATH", "display-only") if on_path else None,
                severity=Severity.WARNING if on_path else Severity.INFO,
                library=found.name, path=found.path, source=found.source, environment_majors=sorted(majors))
        elif on_path and found.name in facts.provided:
            wheel_copy = facts.provided[found.name]
            users = [lib for lib in facts.env.libraries if found.name in lib.needed]
            shadowed = [u for u in users if u.runpath or not u.rpath]
            if not shadowed:
                continue
            yield _finding(
                "WD505", loc,
                f"{found.name} on LD_LIBRARY_PATH shadows the environment's copy "
                f"({facts.rel(wheel_copy.path)}, from {wheel_copy.distribution}): "
                f"{facts.rel(shadowed[0].path)} searches LD_LIBRARY_PATH before its RUNPATH.",
                [f"{facts.rel(u.path)}: RUNPATH {':'.join(u.runpath) or '(none)'}" for u in shadowed[:4]],
                Fix(f"Remove {found.path.rsplit('/', 1)[0]} from LD_LIBRARY_PATH", "display-only"),
                library=found.name, path=found.path, shadows=wheel_copy.path)


def _family(family: str) -> str:
    return "cudnn" if family.startswith("cudnn") else family


@rule("WD506", "duplicate-distribution", title="a distribution is installed more than once",
      severity=Severity.WARNING,
      examples=(Example(_doctor("duplicates", *H200), True),
                Example(_doctor("cuda-ok", *H200), False)))
def duplicate_distribution(facts: EnvFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Finds distributions with more than one `*.dist-info` folder: two in the same
    site-packages (an interrupted or overlapping install), or one shadowing another in a later
    site-packages folder of the import path (a user site, a system site of a venv that
    includes it).

    ## Why is this bad?
    Python imports the first copy, pip and uv report one of them, and files of both versions
    may be mixed in the package folder: a torch upgraded over another torch without an
    uninstall can leave `libtorch_cuda.so` of one beside `libc10.so` of the other.

    ## Example
    ```
    site-packages/torchvision-0.26.0.dist-info
    site-packages/torchvision-0.29.1.dist-info
    ```

    ## Fix
    Uninstall the package until none is left (`pip uninstall torchvision` twice), then install
    the version wanted.
    """
    for name, dists in sorted(facts.env.duplicates.items()):
        same = len({d.site_packages for d in dists}) < len(dists)
        versions = ", ".join(f"{d.version} ({facts.rel(d.dist_info_path)})" for d in dists)
        msg = (f"{name} has {len(dists)} dist-info folders in the same site-packages: {versions}. Files of "
               "both versions may be mixed." if same else
               f"{name} is installed in {len(dists)} site-packages folders: {versions}. Python imports the first "
               f"({dists[0].version}).")
        yield _finding("WD506", Location(facts.metadata_path(dists[0])), msg,
                       [facts.fs.where(d.dist_info_path) for d in dists],
                       Fix(f"Uninstall {name} until none is left, then install one version", "display-only"),
                       severity=Severity.ERROR if same and name == "torch" else None,
                       package=name, versions=[d.version for d in dists])


@rule("WD507", "no-nvidia-driver", title="no NVIDIA driver on the machine", severity=Severity.INFO,
      examples=(Example(_doctor("cuda-ok", "--driver", "none"), True),
                Example(_doctor("cuda-ok", *H200), False)))
def no_nvidia_driver(facts: EnvFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    States that the machine the environment is judged for has no NVIDIA driver: the host
    when no target is given (no `/proc/driver/nvidia/version`, NVML unavailable), or
    `--driver none`.

    ## Why is this bad?
    It is a fact, not an error: a CUDA environment can be built and checked on a machine
    without a GPU. But nothing CUDA runs here, and the kernel verdicts need the GPU and driver
    of the machine that will run the environment.

    ## Example
    ```
    no NVIDIA driver on this machine (no NVIDIA kernel module loaded)
    ```

    ## Fix
    Give the machine that will run the environment: `--gpu h200 --driver 580.95.05`.
    """
    m = facts.machine
    if not m.no_driver:
        return
    why = m.driver.reason if m.driver is not None else "--driver none"
    cuda = facts.torch_kind == "cuda" or bool(facts.env.cuda_packages)
    yield _finding("WD507", Location(facts.where),
                   f"no NVIDIA driver on {'this machine' if m.source == 'host' else 'the target machine'} ({why})."
                   + (" CUDA code cannot run there; give --gpu and --driver for the machine that will run this "
                      "environment." if cuda else ""),
                   list(m.driver.notes) if m.driver is not None else [],
                   Fix("Give the target machine: --gpu NAME --driver VERSION", "display-only") if cuda else None,
                   source=m.source)


@rule("WD508", "requirement-unmet", title="a requirement of the torch family is not installed",
      severity=Severity.WARNING,
      examples=(Example(_doctor("mismatch", *H200), True),
                Example(_doctor("cuda-ok", *H200), False)))
def requirement_unmet(facts: EnvFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Checks the other requirements of torch, torchvision and torchaudio (`filelock`, `sympy`,
    `numpy`, `pillow`, `triton`, …: every `Requires-Dist` whose markers apply here) against the
    installed versions. CUDA runtime packages (WD502) and companion pins on torch (WD503) are
    reported by their own rules.

    ## Why is this bad?
    A missing dependency fails at import (`ModuleNotFoundError: No module named 'sympy'`), or
    later at the first use of the feature that needs it (`torch.compile` without triton). A
    version outside the range works until it hits an API that changed.

    ## Example
    ```
    torch 2.11.0+cu130 requires triton==3.6.0; triton 3.4.0 is installed
    ```

    ## Fix
    Install what the metadata asks for (`pip install "triton==3.6.0"`), or reinstall the package
    without `--no-deps`.
    """
    from wheeldoc.environment.reader import check_requirements

    cmd = _installer(facts)
    for name in ("torch", "torchvision", "torchaudio"):
        d = facts.installed.get(name)
        if d is None:
            continue
        checks = facts.env.requirement_checks if name == "torch" else \
            check_requirements(d, facts.installed, facts.env.location.markers)
        bad = [c for c in checks if c.applies and c.satisfied is False and c.required_by == name
               and c.name != "torch" and not _is_cuda_requirement(c.name)]
        for c in bad:
            have = f"{c.name} {c.installed} is installed" if c.installed else "it is not installed"
            yield _finding("WD508", Location(facts.metadata_path(d)),
                           f"{name} {d.version} requires {c.requirement.split(';')[0].strip()}; {have}.",
                           [], Fix(f"Install {_pin(c)}", "display-only", command=f"{cmd} {shlex.quote(_pin(c))}"),
                           package=name, requirement=c.requirement, installed=c.installed)


_CPU_INDEX = re.compile(r"/whl/(?:nightly/|test/)?cpu(?:/|$)")
_INDEX_VARS = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_INDEX",
               "UV_DEFAULT_INDEX")


@rule("WD509", "cpu-install-settings", title="install settings would replace the CUDA torch by a CPU build",
      severity=Severity.WARNING,
      examples=(Example(("image", "fixtures/images/cpu-backend", *H200), True),
                Example(("image", "fixtures/images/cuda-ok", *H200), False)))
def cpu_install_settings(facts: EnvFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Reads the variables installers see in the machine or image (`wheeldoc image`: the image's
    final `ENV`; `wheeldoc doctor` without a target: the host's): `UV_TORCH_BACKEND=cpu`, or a
    `PIP_INDEX_URL` / `PIP_EXTRA_INDEX_URL` / `UV_INDEX_URL` / `UV_EXTRA_INDEX_URL` /
    `UV_INDEX` / `UV_DEFAULT_INDEX` naming the PyTorch CPU index, while the installed torch is a
    CUDA build. `UV_TORCH_BACKEND=auto` is not reported: it only matters to a `uv pip install`
    and then picks the backend from the driver of the machine it runs on.

    ## Why is this bad?
    The environment is fine today, but the next install in it (a `pip install` at container
    start, a notebook's `%pip install`, a derived image) resolves torch again from the CPU
    index and silently replaces the CUDA build: trap 1 of the story, one step later.

    ## Example
    ```
    ENV UV_TORCH_BACKEND=cpu     # in an image whose torch is 2.14.1+cu130
    ```

    ## Fix
    Unset the variable in the final stage, or set it to the CUDA variant the image carries
    (`UV_TORCH_BACKEND=cu130`).
    """
    environ = facts.machine.environ
    if not environ or facts.torch_kind != "cuda":
        return
    from wheeldoc.core.torchbuild import cuda_variant

    variant = cuda_variant(facts.torch_cuda) if facts.torch_cuda else "cu130"
    hits = []
    if environ.get("UV_TORCH_BACKEND", "").strip().lower() == "cpu":
        hits.append(("UV_TORCH_BACKEND", environ["UV_TORCH_BACKEND"]))
    for var in _INDEX_VARS:
        value = environ.get(var, "")
        if any(_CPU_INDEX.search(u.rstrip("/") + "/") for u in re.split(r"[\s,]+", value) if u):
            hits.append((var, value))
    where = "the image's ENV" if facts.image is not None else "the environment variables"
    for var, value in hits:
        yield _finding("WD509", Location(facts.image or facts.where),
                       f"{var}={value} in {where}: the next install here resolves torch from the CPU index and "
                       f"replaces torch {facts.torch_version}.",
                       [], Fix(f"Unset {var}" + (f" or set it to {variant}" if var == "UV_TORCH_BACKEND" else ""),
                               "display-only"),
                       variable=var, value=value)


_ELF_MACHINES = {62: "x86_64", 183: "aarch64", 3: "i386", 40: "arm", 21: "ppc64le", 22: "s390x"}


@rule("WD510", "platform-mismatch", title="the environment is built for another CPU than the target's",
      severity=Severity.ERROR,
      examples=(Example(_doctor("cuda-ok", "--gpu", "gb10", "--driver", "580.95.05"), True),
                Example(_doctor("cuda-ok", "--platform", "linux-aarch64", "--driver", "none"), True),
                Example(_doctor("cuda-ok", *H200), False),
                Example(_doctor("cuda-ok", "--platform", "linux-x86_64", "--gpu", "gb10"), False)))
def platform_mismatch(facts: EnvFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Compares the CPU architecture of the environment's shared objects (the ELF `e_machine` of
    every one, else the interpreter's or the image's platform) with the target platform:
    `--platform`, or the one a GPU implies (`--gpu gb10` is an aarch64 system, DGX Spark).

    ## Why is this bad?
    Nothing compiled for x86-64 runs on an Arm machine: torch, every extension and every CUDA
    library fail to load there (`cannot open shared object file` or `wrong ELF class`), whatever
    the kernel verdicts say about the GPU code inside them. A check for GB10 made on an x86-64
    workstation's environment answers nothing about the Spark.

    ## Example
    ```
    $ wheeldoc doctor --site-packages fixtures/envs/cuda-ok/lib/python3.12/site-packages --gpu gb10
    the environment's 6 shared objects are x86_64 builds; the target is linux-aarch64 (gb10)
    ```

    ## Fix
    Check (and build) the environment on the target platform: run `wheeldoc doctor` there, or
    build an `linux/arm64` image and run `wheeldoc image` on it.
    """
    plat = facts.target.platform
    if not plat or not plat.startswith("linux-"):
        return
    want = plat.split("-", 1)[1]
    machines = {_ELF_MACHINES.get(m, f"EM_{m}"): n for m, n in facts.extra.get("machines", {}).items()}
    if machines:
        have, n = max(machines.items(), key=lambda kv: kv[1])
        said = f"the environment's {_plural(n, 'shared object')} are {have} builds" if n > 1 else \
            f"the environment's shared object is a {have} build"
    else:
        have = facts.env.location.markers.get("platform_machine", "")
        said = f"the environment's interpreter runs on {have}"
    if not have or have == want:
        return
    gpu = facts.target.gpu
    yield _finding("WD510", Location(facts.where),
                   f"{said}; the target is {plat}" + (f" ({gpu.name})" if gpu else "") +
                   ". Nothing compiled here loads there.",
                   [f"{k}: {v} shared objects" for k, v in sorted(machines.items())],
                   Fix(f"Check the environment built on {plat}: run wheeldoc doctor there, or wheeldoc image on "
                       f"a linux/{'arm64' if want == 'aarch64' else 'amd64'} image", "display-only"),
                   environment=have, target=plat, machines=machines)


_CHECKS = {fn.rule.code: fn for fn in (platform_mismatch, cpu_torch_cuda_wanted, cuda_runtime_unmet, companion_mismatch,  # type: ignore[attr-defined]
                                       driver_too_old, cuda_library_on_path, duplicate_distribution,
                                       no_nvidia_driver, requirement_unmet, cpu_install_settings)}


def run(facts: EnvFacts, ctx: Context) -> list[Finding]:
    """Every enabled WD5xx rule, without importing the other families' rule modules (start-up)."""
    return [f for code, check in sorted(_CHECKS.items()) if ctx.enabled(code) for f in check(facts, ctx)]
