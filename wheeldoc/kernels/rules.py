"""WD3xx: the GPU code in libraries against a target GPU and driver.

Each rule looks at one library (`LibraryLoad`: every container's predicted load, see
wheeldoc/kernels/load_model.py and docs/kernels-groundtruth.md) and explains it per library,
with counts, never one finding per container.
"""

from __future__ import annotations

from typing import Iterator

from types import SimpleNamespace

from wheeldoc.kernels.facts import LibraryLoad, arch_specific, counted, label, per_arch_module
from wheeldoc.core.engine import Context
from wheeldoc.kernels.load_model import NO_BINARY_FOR_GPU, UNSUPPORTED_PTX_VERSION, predict_image
from wheeldoc.core.model import Finding, Fix, Location, Severity
from wheeldoc.core.registry import Example, rule

K = "fixtures/kernels"
STORY = f"{K}/story/storyvllm-0.0.1+cu133-cp38-abi3-manylinux_2_28_x86_64.whl"
GB10 = ("--gpu", "gb10", "--driver", "580.95.05")
H200 = ("--gpu", "h200", "--driver", "580.95.05")
CODES = {NO_BINARY_FOR_GPU: 209, "CUDA_ERROR_INVALID_PTX": 218, UNSUPPORTED_PTX_VERSION: 222}
MAX_EVIDENCE = 6


def _loc(load: LibraryLoad) -> Location:
    lib = load.library
    return Location(lib.path, member=lib.member, section=lib.fatbin.section)


def _finding(code: str, load: LibraryLoad, message: str, evidence=(), fix=None, **data) -> Finding:
    from wheeldoc.core.registry import get_rule

    r = get_rule(code)
    return Finding(code, r.title, r.severity, _loc(load), message, tuple(evidence), fix,
                   {**load.data(), **data})


def _of(n: int, total: int, what: str = "container") -> str:
    """"1 of 3 containers", "both containers", "all 5 containers", "1 container"."""
    if n != total:
        return f"{n} of {total} {what}{'s' if total != 1 else ''}"
    return f"1 {what}" if n == 1 else f"both {what}s" if n == 2 else f"all {n} {what}s"


def _has(load: LibraryLoad) -> str:
    """What the library carries: "cubins sm_80 ×2, sm_100a ×2; compute_80 PTX 9.5 ×2"."""
    cub = counted(label(e) for c in load.library.containers for e in c.entries if e.kind == "cubin")
    ptx = counted(label(e) for c in load.library.containers for e in c.entries if e.kind == "ptx")
    one = sum(e.kind == "cubin" for c in load.library.containers for e in c.entries) == 1
    parts = ([f"{'cubin' if one else 'cubins'} {cub}"] if cub else []) + ([ptx] if ptx else [])
    return "; ".join(parts) or "no cubin or PTX"


def _runs_on(load: LibraryLoad) -> str:
    """The cubins that would run natively: "sm_121 (or sm_120)"."""
    major, minor = load.cc
    same = [f"sm_{major}{m}" for m in range(minor - 1, -1, -1)]
    return f"sm_{major}{minor}" + (f" (or {', '.join(same[:2])})" if same else "")


def _gencode(load: LibraryLoad) -> str:
    major, minor = load.cc
    return f"-gencode arch=compute_{major}{minor},code=sm_{major}{minor}"


def _driver(load: LibraryLoad, ctx: Context) -> str:
    d = ctx.target.driver if ctx.target is not None else None
    if d is None:
        return "the driver"
    return f"driver {d.version} (CUDA {d.cuda_str})" if d.version else f"a CUDA {d.cuda_str} driver"


def _evidence(loads, line) -> list[str]:
    out = [line(x) for x in loads[:MAX_EVIDENCE]]
    if len(loads) > MAX_EVIDENCE:
        out.append(f"… and {len(loads) - MAX_EVIDENCE} more containers like these")
    return out


def _container(x) -> str:
    c = x.container
    return f"container {c.index} at {c.offset:#x}: {', '.join(label(e) for e in c.entries)}"


def _gpus_for(arch_label: str) -> str:
    from wheeldoc.data.tables import gpu_table

    cc = divmod(int(arch_label[3:].rstrip("af")), 10)
    names = [g.name for g in gpu_table() if g.cc == cc][:3]
    return f"{arch_label} ({', '.join(names)})" if names else arch_label


LAZY = ("the import succeeds (CUDA loads a library's modules lazily, at the first launch of "
        "one of their kernels)")


# -- every fix is checked: the load model re-run with the fix applied ---------------------------

def _with_entries(e, **changes):
    return e._replace(**changes) if hasattr(e, "_replace") else SimpleNamespace(**{**vars(e), **changes})


def _after(load: LibraryLoad, containers, *, isa=None, cuda=None, rewrite=None) -> list:
    """The load model's predictions for `containers` with a fix applied: another driver
    (`isa`/`cuda`, default the target's) and/or rewritten entries (a rebuild)."""
    isa = load.driver_isa if isa is None else isa
    cuda = load.driver_cuda if cuda is None else cuda
    fmt = load.library.fatbin.format
    out = []
    for x in containers:
        entries = list(x.container.entries)
        if rewrite is not None:
            entries = rewrite(entries)
        out.append(predict_image(fmt, entries, load.cc, isa, cuda))
    return out


def _loads(preds) -> bool:
    return bool(preds) and all(p.verdict != "fail" for p in preds)


def _with_cubin(load: LibraryLoad):
    """A rebuild that adds a cubin for the target GPU to each container."""
    sm = load.cc[0] * 10 + load.cc[1]
    cubin = SimpleNamespace(kind="cubin", sm=sm, suffix="", code_version=(1, 8), parent=None)
    fmt = load.library.fatbin.format
    return lambda entries: [cubin] if fmt == "ptx" else entries + [cubin]


def _ptx_lowered(isa):
    """A rebuild with a toolkit no newer than the driver: every PTX `.version` at most `isa`."""
    return lambda entries: [_with_entries(e, code_version=min(tuple(e.code_version), tuple(isa)))
                            if e.kind == "ptx" else e for e in entries]


# -- rules ----------------------------------------------------------------------------------

@rule("WD301", "no-kernel-image", title="no GPU code for the target GPU", severity=Severity.ERROR,
      examples=(Example(("kernels", f"{K}/fb-sm86.fatbin", *GB10), True),
                Example(("kernels", f"{K}/libmulti.so", "--gpu", "sm_75", "--driver", "13.0"), True),
                Example(("kernels", f"{K}/compute_90-isa9.0.ptx", "--gpu", "a100", "--driver",
                         "13.0"), True),
                Example(("kernels", f"{K}/story/_C.abi3.so", *GB10), False),
                Example(("kernels", f"{K}/fb-sm90a.fatbin", *GB10), False),
                Example(("kernels", f"{K}/fb-sm90a.fatbin", *H200), False)))
def no_kernel_image(load: LibraryLoad, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Reports a library built for GPUs in general (plain `sm_XY` cubins or `compute_XY` PTX)
    none of whose containers can load on the target GPU: no cubin of the GPU's family that
    runs on it (`sm_XY` with the same major and a minor not above the GPU's, or `sm_XYa` of
    exactly its arch) and no PTX it can JIT-compile (plain `compute_XY` up to the GPU's arch,
    `compute_XYf` of its family, `compute_XYa` of its arch). A module built only for chosen
    GPUs (every entry `a` or `f`) is WD308 instead.

    ## Why is this bad?
    Every kernel of the library fails at launch: the import succeeds (CUDA loads a library's
    modules lazily, at the first launch of one of their kernels), then the first launch
    returns `CUDA_ERROR_NO_BINARY_FOR_GPU` (209, "no kernel image is available for execution
    on the device"). A PTX text file for another GPU fails with `CUDA_ERROR_INVALID_PTX` (218)
    when it is loaded.

    ## Example
    A fatbin with only an `sm_86` cubin, on a GB10 (`sm_121`):
    ```
    $ wheeldoc kernels fixtures/kernels/fb-sm86.fatbin --gpu gb10 --driver 580.95.05
    fixtures/kernels/fb-sm86.fatbin: WD301 error no GPU code for the target GPU
      its only container has no code sm_121 can run: it carries cubin sm_86; launching any of
      its kernels fails with CUDA_ERROR_NO_BINARY_FOR_GPU (209)
      | container 0 at 0x0: sm_86
      fix: Install a build with an sm_121 (or sm_120) cubin (-gencode arch=compute_121,code=sm_121)
      or PTX for compute_121 or older
    ```

    ## Fix
    Install a build of the package made for the GPU (for `sm_121`: an `sm_121` or `sm_120`
    cubin, `-gencode arch=compute_121,code=sm_121`), or one that carries PTX old enough to
    JIT on it.
    """
    if not load.loads or load.where("native") or load.where("jit"):
        return
    failing = load.where("fail")
    if load.where("fail", UNSUPPORTED_PTX_VERSION) or all(x.concat_blocked for x in failing):
        return  # WD302 / WD306 explain those
    if per_arch_module(load.library) and load.source != "embedded":
        return  # WD308: a module for other GPUs, not a broken library
    error = load.cuda_error or NO_BINARY_FOR_GPU
    n = len(load.loads)
    if load.source == "embedded":
        which = (f"neither its .nv_fatbin nor the {n} containers it keeps in "
                 f"{', '.join(sorted(set(load.sections)))} have")
    else:
        which = "its only container has no" if n == 1 else f"none of its {n} containers has"
    when = ("loading it fails with" if load.library.fatbin.format == "ptx"
            else "launching any of its kernels fails with")
    msg = (f"{which} code {load.gpu} can run: it carries {_has(load)}; {when} "
           f"{error} ({CODES.get(error, '?')})")
    if load.library.fatbin.format == "elf" and load.source != "embedded":
        why = load.library.embedded_error
        msg += (f" (its data sections were not scanned: {why})" if why
                else " (and it keeps no container in its data sections)")
    fix = None
    if _loads(_after(load, failing, rewrite=_with_cubin(load))):
        fix = Fix(f"Install a build with an {_runs_on(load)} cubin ({_gencode(load)}) or PTX "
                  f"for compute_{load.cc[0]}{load.cc[1]} or older")
    yield _finding("WD301", load, msg, _evidence(failing, _container), fix)


@rule("WD302", "ptx-newer-than-driver", title="PTX newer than the driver can JIT decides the load",
      severity=Severity.ERROR,
      examples=(Example(("kernels", STORY, *GB10), True),
                Example(("kernels", f"{K}/libptx95only.so", *H200), True),
                Example(("kernels", f"{K}/story/_vllm_fa2_C.abi3.so", "--gpu", "gb10",
                         "--driver", "13.5"), False),
                Example(("kernels", f"{K}/libisa95.so", *H200), False)))
def ptx_newer_than_driver(load: LibraryLoad, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Reports containers whose load is decided by PTX with an ISA version newer than the
    driver can JIT-compile: no cubin runs on the GPU, so the driver picks the best PTX (the
    highest compatible arch; that entry alone decides, with no fallback to older PTX) and
    rejects its `.version`. A driver JIT-compiles PTX up to the ISA of its own CUDA version
    (580 drivers: CUDA 13.0, PTX ISA 9.0).

    ## Why is this bad?
    The first launch of a kernel in such a container fails with
    `CUDA_ERROR_UNSUPPORTED_PTX_VERSION` (222, `cudaErrorUnsupportedPtxVersion`; CUDA loads a
    library's modules lazily, so the import itself succeeds) although the code exists: it was built by a toolkit newer than the driver. This is the
    story's trap 3: a flash-attention library in a vLLM wheel carried only PTX from CUDA 13.3
    and no `sm_121` cubin; on a GB10 with a CUDA 13.0 driver the vision encoder died while
    the main decode path, which had `sm_120` cubins, loaded fine.

    ## Example
    ```
    $ wheeldoc kernels fixtures/kernels/story/storyvllm-0.0.1+cu133-cp38-abi3-manylinux_2_28_x86_64.whl \
        --gpu gb10 --driver 580.95.05
    …whl!storyvllm/vllm_flash_attn/_vllm_fa2_C.abi3.so: WD302 error PTX newer than the driver can JIT decides the load
      both containers can only JIT compute_80 PTX 9.5 ×2, PTX from CUDA 13.5 or newer;
      driver 580.95.05 (CUDA 13.0) JIT-compiles PTX up to ISA 9.0, so launching its kernels
      fails with CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222). No cubin runs on sm_121: the library
      carries cubins sm_80 ×2, sm_100a ×2; compute_80 PTX 9.5 ×2
      | container 0 at 0x2048: compute_80 PTX 9.5, sm_80, sm_100a
      | container 1 at 0x4840: compute_80 PTX 9.5, sm_80, sm_100a
      fix: Rebuild with CUDA ≤ 13.0 or with an sm_121 (or sm_120) cubin; or upgrade to a driver
      for CUDA 13.5 or newer
    ```
    A PTX text file for another GPU is different: a newer driver reads its `.version`, then
    fails with `CUDA_ERROR_INVALID_PTX` (218). wheeldoc then does not propose the upgrade and
    says why (`kernels compute_120-isa9.5.ptx --gpu h200 --driver 580.95.05`).

    ## Fix
    Every fix below is checked by re-running the load model with it applied (the driver for
    the PTX's CUDA version; every PTX `.version` lowered to the driver's; a cubin for the GPU
    added), and proposed only if the containers then load (`data.fixes_checked` in JSON).
    Rebuild the library with a toolkit no newer than the driver (or add cubins for the GPU),
    or upgrade the driver to one for the CUDA version that made the PTX. Without a rebuild,
    route the work away from that library (the story used `--mm-encoder-attn-backend TORCH_SDPA`).
    """
    bad = load.where("fail", UNSUPPORTED_PTX_VERSION)
    if not bad:
        return
    from wheeldoc.data.tables import cuda_table, min_cuda_for_ptx_isa, min_driver_for_cuda

    needed = max(tuple(x.prediction.entry.code_version) for x in bad)
    need_cuda = min_cuda_for_ptx_isa(needed)
    isa = load.driver_isa or (0, 0)
    fits = [t for t in cuda_table().toolkits if t.ptx_isa <= isa]
    rebuild = f"CUDA ≤ {fits[-1].name}" if fits else "an older CUDA toolkit"
    text = load.library.fatbin.format == "ptx"
    # Each fix is proposed only if the load model, re-run with it applied, then loads.
    checked: list[dict] = []
    options: list[str] = []
    after_upgrade = None
    if need_cuda is None:
        made_by = "an unknown toolkit"
    else:
        name = f"{need_cuda[0]}.{need_cuda[1]}"
        made_by = f"PTX from CUDA {name} or newer"
        driver = min_driver_for_cuda(need_cuda)
        after_upgrade = _after(load, bad, isa=needed, cuda=need_cuda)
        works = _loads(after_upgrade)
        checked.append({"fix": f"driver for CUDA {name}", "loads": works,
                        "then": sorted({p.cuda_error for p in after_upgrade if p.cuda_error})})
        if works:
            options.append(f"upgrade to a driver for CUDA {name} or newer"
                           + (f" (≥ {driver})" if driver else ""))
    older = _after(load, bad, rewrite=_ptx_lowered(isa)) if fits else []
    checked.append({"fix": rebuild, "loads": _loads(older),
                    "then": sorted({p.cuda_error for p in older if p.cuda_error})})
    with_cubin = _after(load, bad, rewrite=_with_cubin(load))
    checked.append({"fix": f"add an sm_{load.cc[0]}{load.cc[1]} cubin", "loads": _loads(with_cubin),
                    "then": sorted({p.cuda_error for p in with_cubin if p.cuda_error})})
    rebuilds = []
    if _loads(older):
        rebuilds.append(f"with {rebuild}")
    if _loads(with_cubin):
        rebuilds.append(f"with an {_runs_on(load)} cubin" if not text else
                        f"as an {_runs_on(load)} cubin")
    if rebuilds:
        options.insert(0, "Rebuild " + " or ".join(rebuilds))
    others = len(load.loads) - len(bad)
    tail = ""
    if others:
        ok = load.counts["native"] + load.counts["jit"]
        tail = (f"; the other {others} container{'s' if others != 1 else ''}: {ok} load, "
                f"{others - ok} have no image for {load.gpu}")
    when = ("loading it fails with" if text else
            "launching its kernels fails with")
    what = (f"it is PTX text {load.chosen('fail', UNSUPPORTED_PTX_VERSION)}" if text else
            f"{_of(len(bad), len(load.loads))} can only JIT "
            f"{load.chosen('fail', UNSUPPORTED_PTX_VERSION)}")
    msg = (f"{what}, {made_by}; {_driver(load, ctx)} JIT-compiles PTX up to ISA "
           f"{isa[0]}.{isa[1]}, so {when} {UNSUPPORTED_PTX_VERSION} (222){tail}. No cubin runs "
           f"on {load.gpu}: the {'file' if text else 'library'} carries {_has(load)}")
    if after_upgrade is not None and not _loads(after_upgrade):
        then = sorted({p.cuda_error for p in after_upgrade if p.cuda_error})
        targets = counted(f"compute_{x.prediction.entry.sm}{x.prediction.entry.suffix}"
                          for x in bad if x.prediction.entry is not None)
        msg += (f". A newer driver would not help: with one for CUDA {need_cuda[0]}."
                f"{need_cuda[1]} the load then fails with "
                f"{', '.join(f'{e} ({CODES.get(e, chr(63))})' for e in then)}, because PTX for "
                f"{targets} cannot be compiled for {load.gpu}")
    fix = None
    if options:
        title = "; or ".join(options)
        fix = Fix(title[0].upper() + title[1:])
    yield _finding("WD302", load, msg, _evidence(bad, _container), fix,
                   ptx_isa_needed=f"{needed[0]}.{needed[1]}",
                   cuda_needed=None if need_cuda is None else f"{need_cuda[0]}.{need_cuda[1]}",
                   fixes_checked=checked)


@rule("WD303", "jit-only", title="GPU code only as PTX: JIT-compiled at first launch",
      severity=Severity.WARNING,
      examples=(Example(("kernels", f"{K}/story/_gdn_C.abi3.so", *GB10), True),
                Example(("kernels", f"{K}/libptxonly.so", "--gpu", "rtx5090"), True),
                Example(("kernels", f"{K}/story/_C.abi3.so", *GB10), False),
                Example(("kernels", f"{K}/story/_gdn_C.abi3.so", *H200), False)))
def jit_only(load: LibraryLoad, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Reports a library that has no cubin for the target GPU, only PTX the driver can
    JIT-compile.

    ## Why is this bad?
    It works, but the driver compiles every such module when it is first loaded (at the first
    launch of one of its kernels, CUDA loading modules lazily): seconds to
    minutes for large libraries, in every process that does not find it in the JIT cache
    (`~/.nv/ComputeCache`, limited by `CUDA_CACHE_MAXSIZE`; containers rebuilt from scratch
    pay it on every start). The code is compiled for a generic virtual architecture, without
    the tuning or arch-specific instructions a cubin built for the GPU would have.

    ## Example
    ```
    $ wheeldoc kernels fixtures/kernels/story/_gdn_C.abi3.so --gpu gb10 --driver 580.95.05
    fixtures/kernels/story/_gdn_C.abi3.so: WD303 warning GPU code only as PTX: JIT-compiled at first launch
      1 of 2 containers loads on sm_121 only by JIT-compiling compute_80 PTX 9.0; no cubin runs
      on sm_121
      | container 1 at 0x49d8: compute_80 PTX 9.0, sm_80
      fix: Install a build with an sm_121 (or sm_120) cubin (-gencode arch=compute_121,code=sm_121)
    ```

    ## Fix
    Install a build with cubins for the GPU (`-gencode arch=compute_121,code=sm_121`); else
    keep the JIT cache on a persistent volume and large enough.
    """
    jit = load.where("jit")
    if not jit or load.where("native"):
        return
    note = ""
    if load.driver_isa is None:
        top = max(tuple(x.prediction.entry.code_version) for x in jit)
        note = f" (assuming a driver that JIT-compiles PTX {top[0]}.{top[1]}; give --driver to check)"
    msg = (f"{_of(len(jit), len(load.loads))} load{'s' if len(jit) == 1 else ''} on {load.gpu} "
           f"only by JIT-compiling {load.chosen('jit')}{note}; no cubin runs on {load.gpu}")
    fix = Fix(f"Install a build with an {_runs_on(load)} cubin ({_gencode(load)})")
    yield _finding("WD303", load, msg, _evidence(jit, _container), fix)


@rule("WD304", "fast-path-elsewhere", title="arch-specific fast path only for other GPUs",
      severity=Severity.INFO,
      examples=(Example(("kernels", f"{K}/story/_gdn_C.abi3.so", *GB10), True),
                Example(("kernels", f"{K}/libmixed.so", "--gpu", "rtx5090", "--driver", "13.0"), True),
                Example(("kernels", f"{K}/story/_gdn_C.abi3.so", *H200), False),
                Example(("kernels", f"{K}/libmixed.so", *GB10), False)))
def fast_path_elsewhere(load: LibraryLoad, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Reports a library that carries arch-specific code (`sm_90a`, `sm_100a`, … cubins or
    `compute_XYa` PTX, which run on exactly one architecture) for other GPUs but none for the
    target, which therefore gets only generic code.

    ## Why is this bad?
    Libraries keep their fastest kernels (Hopper's wgmma / TMA, Blackwell datacenter's
    tcgen05 / TMEM) in arch-specific builds. Where the GPU has none, the library runs its
    generic path: an upgrade that routes work to "the fast kernel" changes nothing there. The
    story: a vLLM change that sped decoding up by 24% on B200 left a GB10 at 16.9 tokens/s,
    because the kernel it routes to does not exist for `sm_121`.

    ## Example
    ```
    $ wheeldoc kernels fixtures/kernels/story/_gdn_C.abi3.so --gpu gb10 --driver 580.95.05
    fixtures/kernels/story/_gdn_C.abi3.so: WD304 info arch-specific fast path only for other GPUs
      1 of 2 containers has arch-specific code only for sm_90a (h100, h200, gh200), sm_100a
      (b200, gb200); on sm_121 the library runs generic code (jit compute_80 PTX 9.0): the fast
      path does not exist on your GPU
      fix: Check that the kernels you rely on run on sm_121 before upgrading for speed; a fast
      path there needs sm_121a code
    ```

    ## Fix
    Before upgrading for speed, check that the path you depend on runs on the GPU. A build
    with `sm_121a` (or `sm_120f`) code would be needed for a fast path there.
    """
    specific = arch_specific(load.library)
    if not specific or not (load.where("native") or load.where("jit")):
        return
    if any(e.sm == load.cc[0] * 10 + load.cc[1] for e in specific):
        return
    containers = {e.container for e in specific}
    gets = "; ".join(p for p in (
        f"native {load.chosen('native')}" if load.where("native") else "",
        f"jit {load.chosen('jit')}" if load.where("jit") else "") if p)
    archs = sorted({f"sm_{e.sm}a" for e in specific}, key=lambda a: int(a[3:-1]))
    msg = (f"{_of(len(containers), len(load.loads))} {'has' if len(containers) == 1 else 'have'} "
           f"arch-specific code only for {', '.join(_gpus_for(a) for a in archs)}; on {load.gpu} "
           f"the library runs generic code ({gets}): the fast path does not exist on your GPU")
    yield _finding("WD304", load, msg, fix=Fix(
        f"Check that the kernels you rely on run on {load.gpu} before upgrading for speed; a "
        f"fast path there needs sm_{load.cc[0]}{load.cc[1]}a code"), fast_path_archs=archs)


@rule("WD305", "partial-coverage", title="some containers have no image for the target GPU",
      severity=Severity.INFO,
      examples=(Example(("kernels", f"{K}/story/_gdn_C.abi3.so", *GB10), True),
                Example(("kernels", f"{K}/libmulti.so", *H200), True),
                Example(("kernels", f"{K}/story/_C.abi3.so", *GB10), False),
                Example(("kernels", f"{K}/story/_gdn_C.abi3.so", *H200), False)))
def partial_coverage(load: LibraryLoad, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Reports a library in which some containers (translation units) have code for the target
    GPU and others have none.

    ## Why is this bad?
    Often it is not: libraries such as cuBLAS ship per-architecture kernels in separate
    containers and choose among them at run time, so the containers for other GPUs are
    never loaded. It matters when a kernel you need lives only in a container without an
    image for your GPU: that launch fails with `CUDA_ERROR_NO_BINARY_FOR_GPU`. wheeldoc
    cannot see which kernels the library will call, so this is information, with the
    counts.

    ## Example
    ```
    $ wheeldoc kernels fixtures/kernels/story/_gdn_C.abi3.so --gpu gb10 --driver 580.95.05
    fixtures/kernels/story/_gdn_C.abi3.so: WD305 info some containers have no image for the target GPU
      1 of 2 containers has no image for sm_121 (it carries sm_90a, sm_100a); the other 1 loads
      (native 0, jit 1). Libraries that ship per-architecture kernels pick among them at run
      time, so this is expected unless a kernel you need lives only there
      | container 0 at 0x2058: sm_90a, sm_100a
    ```

    ## Fix
    Nothing, if the library dispatches by architecture. Otherwise install a build that
    includes the GPU's architecture in every translation unit.
    """
    ok = load.where("native") + load.where("jit")
    missing = [x for x in load.where("fail", NO_BINARY_FOR_GPU) if not x.concat_blocked]
    if not ok or not missing:
        return
    carried = counted(label(e) for x in missing for e in x.container.entries
                      if e.kind in ("cubin", "ptx"))
    n = load.counts
    one = len(missing) == 1
    msg = (f"{_of(len(missing), len(load.loads))} {'has' if one else 'have'} no image for "
           f"{load.gpu} ({'it carries' if one else 'they carry'} {carried}); the other {len(ok)} "
           f"load{'s' if len(ok) == 1 else ''} (native {n['native']}, jit {n['jit']}). Libraries that ship per-architecture "
           f"kernels pick among them at run time, so this is expected unless a kernel you need "
           f"lives only there")
    yield _finding("WD305", load, msg, _evidence(missing, _container))


@rule("WD306", "concat-needs-newer-driver", title="--concat images the driver cannot read",
      severity=Severity.ERROR,
      examples=(Example(("kernels", f"{K}/libconcat.so", *H200), True),
                Example(("kernels", f"{K}/libconcat.so", "--gpu", "h200", "--driver", "13.5"), False),
                Example(("kernels", f"{K}/libmixed.so", *H200), False)))
def concat_needs_newer_driver(load: LibraryLoad, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Reports containers that would load but for their images sitting inside `--concat`
    entries (kind 0x100, written by `fatbinary --concat` / `nvcc -Xfatbin=--concat` from
    CUDA 13.5), which a driver older than that toolkit does not read.

    ## Why is this bad?
    Measured on an H200 with a CUDA 13.0 driver: such a container fails with
    `CUDA_ERROR_NO_BINARY_FOR_GPU` (209) although it holds an `sm_90` cubin
    (docs/kernels-groundtruth.md). That drivers for CUDA 13.5 and newer read them is assumed.

    ## Example
    ```
    $ wheeldoc kernels fixtures/kernels/libconcat.so --gpu h200 --driver 580.95.05
    fixtures/kernels/libconcat.so: WD306 error --concat images the driver cannot read
      1 container keeps sm_90, sm_80 inside --concat entries; driver 580.95.05 (CUDA 13.0)
      predates CUDA 13.5 and does not read them: launching their kernels fails with
      CUDA_ERROR_NO_BINARY_FOR_GPU (209)
      | container 0 at 0x2020: sm_90, sm_80
      fix: Rebuild without -Xfatbin=--concat, or upgrade to a driver for CUDA 13.5 or newer
    ```

    ## Fix
    Rebuild without `-Xfatbin=--concat`, or upgrade to a driver for CUDA 13.5 or newer.
    """
    blocked = [x for x in load.loads if x.concat_blocked]
    if not blocked:
        return
    inner = counted(label(e) for x in blocked for e in x.container.entries if e.parent is not None)
    msg = (f"{_of(len(blocked), len(load.loads))} keep{'s' if len(blocked) == 1 else ''} "
           f"{inner} inside --concat entries; {_driver(load, ctx)} predates CUDA 13.5 and does not "
           f"read them: launching their kernels fails with {NO_BINARY_FOR_GPU} (209)")
    yield _finding("WD306", load, msg, _evidence(blocked, _container),
                   Fix("Rebuild without -Xfatbin=--concat, or upgrade to a driver for CUDA 13.5 "
                       "or newer"))


@rule("WD307", "kernels-outside-nv-fatbin", title="GPU code kept outside .nv_fatbin",
      severity=Severity.INFO,
      examples=(Example(("kernels", f"{K}/libembedded.so", *H200), True),
                Example(("kernels", f"{K}/libembedded.so", "--gpu", "t4", "--driver", "13.0"), False),
                Example(("kernels", f"{K}/libmixed.so", *H200), False)))
def kernels_outside_nv_fatbin(load: LibraryLoad, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Reports a library whose `.nv_fatbin` section (what the CUDA runtime registers, and all
    that `cuobjdump` lists) has nothing for the target GPU, but which keeps whole fatbin
    containers in its data sections (`.rodata`, `.ldata`, …) and loads them itself with
    `cuModuleLoadData`. cuFFT 12 does this: a 672-byte `.nv_fatbin` with one `sm_75` cubin,
    and 23,983 containers in `.ldata`. The verdict for the library is then theirs.

    ## Why is this bad?
    It is not, by itself: it explains why the verdict differs from what `cuobjdump` shows, and
    gives the counts for the containers the library loads on its own. wheeldoc looks for them
    only when `.nv_fatbin` has nothing for the GPU, by their magic at 8-byte alignment, and
    counts only whole, valid containers.

    ## Example
    ```
    $ wheeldoc kernels fixtures/kernels/libembedded.so --gpu h200 --driver 580.95.05
    fixtures/kernels/libembedded.so: WD307 info GPU code kept outside .nv_fatbin
      its .nv_fatbin has nothing for sm_90 (1 container: sm_75), but it keeps 2 containers with
      code in .rodata, which it loads itself (cuobjdump lists none of them): 1 loads natively
      (sm_90), 0 by JIT, 1 has no image for sm_90
    ```

    ## Fix
    Nothing to fix. To see these containers, use `wheeldoc kernels --gpu …` (the listing,
    like cuobjdump's, shows `.nv_fatbin` only).
    """
    if load.source != "embedded" or not (load.where("native") or load.where("jit")):
        return
    n = load.counts
    nv = load.fatbin_loads
    inner = counted(label(e) for x in nv for e in x.container.entries if e.kind in ("cubin", "ptx"))
    msg = (f"its .nv_fatbin has nothing for {load.gpu} ({len(nv)} container"
           f"{'s' if len(nv) != 1 else ''}: {inner}), but it keeps {n['containers']} containers "
           f"with code in {', '.join(sorted(set(load.sections)))}, which it loads itself (cuobjdump "
           f"lists none of them): {n['native']} load{'s' if n['native'] == 1 else ''} natively"
           + (f" ({load.chosen('native')})" if n["native"] else "")
           + f", {n['jit']} by JIT, {n['fail']} {'has' if n['fail'] == 1 else 'have'} no image "
             f"for {load.gpu}")
    yield _finding("WD307", load, msg, embedded_sections=sorted(set(load.sections)))


@rule("WD308", "module-for-other-gpus", title="a module built only for other GPUs",
      severity=Severity.INFO,
      examples=(Example(("kernels", f"{K}/fb-sm90a.fatbin", *GB10), True),
                Example(("kernels", f"{K}/sm_100a.cubin", "--gpu", "b300", "--driver", "13.0"), True),
                Example(("kernels", f"{K}/compute_120f-isa9.0.ptx", *H200), True),
                Example(("kernels", f"{K}/fb-sm90a.fatbin", *H200), False),
                Example(("kernels", f"{K}/fb-sm86.fatbin", *GB10), False)))
def module_for_other_gpus(load: LibraryLoad, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Reports a library (or standalone cubin) whose every cubin and PTX entry is arch-specific
    (`sm_90a`) or family-specific (`sm_100f`) for GPUs other than the target: a module built
    for chosen GPUs only, such as vLLM's FlashAttention-3 (`sm_90a`), FlashMLA (`sm_90a`,
    `sm_100f`) or flashinfer's per-arch cubins.

    ## Why is this bad?
    It is not a broken install. The import succeeds (CUDA loads a library's modules lazily,
    at the first launch of one of their kernels) and the package's callers load such modules
    only on the GPUs they were built for; on others they take another path. What it means is
    that the feature this module implements has no code for your GPU: a launch of one of its
    kernels there would fail with `CUDA_ERROR_NO_BINARY_FOR_GPU` (209). When a library built
    for GPUs in general has no code for yours, that is WD301, an error.

    ## Example
    ```
    $ wheeldoc kernels fixtures/kernels/fb-sm90a.fatbin --gpu gb10 --driver 580.95.05
    fixtures/kernels/fb-sm90a.fatbin: WD308 info a module built only for other GPUs
      its code is built only for sm_90a (h100, h200, gh200): the feature it implements has no
      code for sm_121. Importing it succeeds (CUDA loads modules lazily); a launch of one of its
      kernels on sm_121 would fail with CUDA_ERROR_NO_BINARY_FOR_GPU (209)
      | container 0 at 0x0: sm_90a
    ```

    ## Fix
    Nothing, if the package routes around it on your GPU. If you need that feature on your
    GPU, use a build with code for it (for `sm_121`: `sm_121a`, `sm_120f` or `sm_121` code).
    """
    if not load.loads or load.where("native") or load.where("jit") or load.source == "embedded":
        return
    if not per_arch_module(load.library) or load.where("fail", UNSUPPORTED_PTX_VERSION):
        return
    if all(x.concat_blocked for x in load.where("fail")):
        return
    entries = [e for c in load.library.containers for e in c.entries if e.kind in ("cubin", "ptx")]
    archs = sorted({f"sm_{e.sm}{e.suffix}" for e in entries}, key=lambda a: (int(a[3:-1]), a))
    which = ", ".join(_gpus_for(a) for a in archs)
    error = load.cuda_error or NO_BINARY_FOR_GPU
    if load.library.fatbin.format == "ptx":
        how = (f"a program that loads it on {load.gpu} would get {error} "
               f"({CODES.get(error, '?')})")
    else:
        how = (f"Importing it succeeds (CUDA loads modules lazily); a launch of one of its "
               f"kernels on {load.gpu} would fail with {error} ({CODES.get(error, '?')})")
    msg = (f"its code is built only for {which}: the feature it implements has no code for "
           f"{load.gpu}. {how}")
    yield _finding("WD308", load, msg, _evidence(load.where("fail"), _container),
                   built_for=archs)
