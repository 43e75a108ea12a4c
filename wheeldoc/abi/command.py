"""`wheeldoc abi EXT [TORCH]`: will the extension's binaries load on that torch build?

TORCH is a requirement (`torch==2.11.0+cu130`: uv picks the wheel, see abi/fetch.py),
a range (`'torch>=2.9,<2.15'`: every release the index offers, one row each: which torch
releases the wheel really loads against), a torch wheel, a directory, or, when omitted, the
environment of `--python` / `--site-packages` (else the running interpreter's).
The verdict (`compatible` / `incompatible`) is the loader model's (abi/loader.py); exit 1
when incompatible (at the default `--fail-on`).
"""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from wheeldoc.abi.site import shutdown_readers
    from wheeldoc.core.settings import guarded

    try:
        return guarded(_run)(args)
    finally:
        shutdown_readers()


def _run(args: argparse.Namespace) -> int:
    from wheeldoc.abi import inputs as inputs
    from wheeldoc.core.cache import Cache
    from wheeldoc.core.errors import InputError
    from wheeldoc.core.settings import UsageError, settings_from

    settings = settings_from(args)
    if args.python_exe and args.site_packages:
        raise UsageError("give either --python or --site-packages, not both")
    cache = Cache()
    opened = None
    opening: InputError | None = None
    try:
        opened = inputs.open_extension(args.extension, cache)  # its reads start now: import the rest after
    except InputError as e:
        opening = e
    from wheeldoc.abi.fetch import IndexOptions
    from wheeldoc.core.engine import finalize, input_error_finding
    from wheeldoc.core.model import Report
    from wheeldoc.render.output import emit

    options = IndexOptions(args.index_url, tuple(args.extra_index_url), tuple(args.find_links),
                           args.torch_backend, getattr(args, "no_index", False))
    report = Report("abi", settings.target.to_dict())
    env_holder: list = []

    def env():
        if not env_holder:
            env_holder.append(inputs.environment(args.python_exe, args.site_packages))
        return env_holder[0]

    sides: list = []
    try:
        if opening is not None:
            raise opening
        ext = inputs.extension_side(_fetched_extension(args, settings, options) if opened is None else args.extension,
                                    env, cache, opened)
        sides.append(ext)
        report.inputs.append(args.extension)
        if args.torch and inputs.is_requirement(args.torch) and inputs.is_range(args.torch):
            from wheeldoc.abi.command_range import run_range

            return run_range(args, settings, ext, options, cache, report)
        facts = None
        variant = _variant_answer(args, settings, ext, options, cache, env, report)
        if variant is not None:
            facts, closers = variant
        else:
            facts, closers = _analyze(args, settings, ext, options, cache, env)
        sides += closers
    except InputError as e:
        _close(sides, opened)
        report.input_errors = 1
        finalize(report, [input_error_finding(e)], settings.selection)
        return emit(report, settings)
    except BaseException as e:
        _close(sides, opened)
        if isinstance(e, ValueError):
            raise UsageError(str(e)) from None
        raise
    try:
        return _emit(report, facts, settings, args.torch or "(environment)")
    finally:
        for side in sides:
            side.close()


def _close(sides: list, opened) -> None:
    """Close what was opened (EXT's source with its reads, when its side was never built)."""
    from wheeldoc.abi.site import cancel_read_ahead

    for side in sides:
        side.close()
    if opened is not None and not sides:
        cancel_read_ahead(opened)
        opened.close()


def _fetched_extension(args, settings, options) -> str:
    """EXT given as a requirement (`vllm==0.33.0`): the wheel uv picks for the target's Python and
    platform, fetched like TORCH (read in place when local); else EXT as given."""
    from wheeldoc.abi import inputs as inputs

    arg = args.extension
    if not inputs.is_requirement(arg) or inputs.is_range(arg):
        return arg
    from wheeldoc.abi.facts import Side
    from wheeldoc.abi.fetch import fetch, lock, wheels_dir

    blank = Side(arg)
    picked = lock([arg], options, python_version=uv_python(blank, settings), python_platform=uv_platform(blank, settings))
    if not picked:
        raise ValueError(f"uv found no wheel for {arg}")
    return str(fetch(picked[0], wheels_dir()))


def _analyze(args, settings, ext, options, cache, env, torch_side=None):
    """Build the torch side (unless given) and the CUDA plan, then run the model."""
    from wheeldoc.abi import inputs as inputs
    from wheeldoc.abi.facts import (
        CudaPlan,
        analyze,
        cuda_requirements,
        plan_from_index,
        plan_from_metadata,
    )
    from wheeldoc.abi.fetch import fetch, lock, wheels_dir
    from wheeldoc.data.abi_tables import system_target
    from wheeldoc.core.errors import InputError
    from wheeldoc.core.target import interpreter_markers

    site_dirs = None
    if torch_side is None:
        if args.torch is None:
            e = env()
            torch_side, site_dirs = inputs.torch_from_environment(e), list(e.site_packages)
        elif inputs.is_requirement(args.torch) and (indexed := _from_index(args, settings, ext, options)):
            torch_side = inputs.torch_from_source(indexed, f"{args.torch} -> {indexed.path} ({indexed.origin})")
        elif inputs.is_requirement(args.torch):
            try:
                picked = lock([args.torch], options, python_version=uv_python(ext, settings),
                              python_platform=uv_platform(ext, settings))
            except InputError as e:
                if "+" in args.torch and not options.given:  # torch==2.11.0+cu130: not on PyPI
                    local = args.torch.rsplit("+", 1)[1]
                    raise InputError(e.path, f"{e.message} (local builds such as +{local} are on the PyTorch "
                                     f"index: add --torch-backend {local} or --index-url "
                                     f"https://download.pytorch.org/whl/{local})") from None
                raise
            if not picked:
                raise ValueError(f"uv found no wheel for {args.torch}")
            path = fetch(picked[0], wheels_dir())
            torch_side, _ = inputs.torch_from_path(str(path), cache)
            torch_side.label = f"{args.torch} -> {path.name}"
        else:
            torch_side, site_dirs = inputs.torch_from_path(args.torch, cache)
    target = system_target(ext.platform_tags + torch_side.platform_tags, glibc=args.glibc,
                           libstdcxx=args.libstdcxx, arch=_arch(settings))
    python = uv_python(ext, settings, torch_side)
    markers = interpreter_markers(python, machine=target.arch or "x86_64")
    if site_dirs is not None:
        plan = CudaPlan("environment", inputs.cuda_distributions(site_dirs))
        plan.described = [f"{name}: installed" for _, name in plan.sources]
    else:
        reqs = cuda_requirements(torch_side, markers)
        if options.given:
            plan = plan_from_index(reqs, options, python=python,
                                   platform=uv_platform(ext, settings, torch_side), cache=cache)
        else:
            plan = plan_from_metadata(reqs)
    facts = analyze(ext, torch_side, target=target, cuda=plan, cache=cache, python=python,
                    gpu=(settings.target.gpu.major, settings.target.gpu.minor) if settings.target.gpu else None)
    return facts, [torch_side, plan]


def _from_index(args, settings, ext, options):
    """The torch build a single pin names, from the torch index (None: not indexed, or not asked)."""
    if getattr(args, "no_torch_index", False):
        return None
    from wheeldoc.abi.index import find, pinned_key

    key = pinned_key(args.torch, target_arch(ext, settings), index_options=options.given)
    return find(key) if key is not None else None


def _variant_answer(args, settings, ext, options, cache, env, report):
    """A local build the index lacks (`torch==2.13.0+cu126`) answered from the indexed builds of the
    same release, only when every one of them gives this extension the same answer (verdict and
    first failure per object): then the difference between builds does not matter here, and the
    report says which builds stood in. Otherwise None: the real wheel is resolved."""
    if not args.torch or getattr(args, "no_torch_index", False):
        return None
    from wheeldoc.abi import inputs as inputs
    from wheeldoc.abi.facts import first_failure
    from wheeldoc.abi.index import find, pinned_key, releases

    if not inputs.is_requirement(args.torch) or inputs.is_range(args.torch):
        return None
    key = pinned_key(args.torch, target_arch(ext, settings), index_options=options.given)
    if key is None or key.local is None or find(key) is not None:
        return None
    same = sorted((k for k in releases(key.arch) if k.version == key.version), key=lambda k: _closeness(key, k))
    if len(same) < 2:
        return None
    answers, runs = set(), []
    for k in same:
        wheel = find(k)
        side = inputs.torch_from_source(wheel, f"{args.torch} -> {wheel.path} ({wheel.origin}, standing in)")
        facts, closers = _analyze(args, settings, ext, options, cache, env, torch_side=side)
        runs.append((k, facts, closers))
        answers.add((facts.verdict, tuple((r.root, facts.root_verdict(r), first_failure(facts, r))
                                          for r in facts.results)))
    if len(answers) != 1:
        for _, _, closers in runs:
            for c in closers:
                c.close()
        return None
    for _, _, closers in runs[1:]:
        for c in closers:
            c.close()
    report.extra["torch_variant"] = {
        "asked": args.torch, "answered_from": [k.label for k, _, _ in runs],
        "why": f"the torch index holds no {key.label}; its {len(runs)} builds of {key.version} give this "
               f"extension the same answer, so the build does not matter here"}
    return runs[0][1], runs[0][2]


def _closeness(asked, key) -> tuple:
    """Builds like the one asked for first: same kind (CPU, CUDA major), then the nearest CUDA minor."""
    def kind(local):
        if local and local.startswith("cu") and local[2:].isdigit():
            return "cu", int(local[2:])
        return (local or "pypi"), 0
    a, b = kind(asked.local), kind(key.local)
    return (a[0] != b[0], a[0] == "cu" and b[0] == "cu" and a[1] // 10 != b[1] // 10, abs(a[1] - b[1]))


def target_arch(ext, settings) -> str:
    """The CPU the torch build is for: the target's platform, else the extension's, else the host's."""
    return _arch(settings) or uv_platform(ext).split("-", 1)[0]


def _emit(report, facts, settings, torch_arg: str) -> int:
    from wheeldoc.abi.view import extension_records, sections
    from wheeldoc.render.output import emit
    from wheeldoc.core.engine import Context, finalize
    from wheeldoc.abi.rules import run as run_abi_rules

    report.inputs.append(torch_arg)
    ctx = Context(settings.target, settings.selection)
    findings = run_abi_rules(facts, ctx)
    findings += parts_not_read(report, facts)
    report.extra.update(record(facts))
    if any(f.rule == "WD207" for f in findings):  # the loader is fine, the target is not
        report.extra["verdict"] = "incompatible"
    report.extra["extensions"] = extension_records(facts)
    finalize(report, findings, settings.selection)
    return emit(report, settings, sections(facts))


def parts_not_read(report, facts) -> list:
    """What could not be read becomes a result: the extension given as one file is an input error
    (WD001, exit 2); a member of a wheel, tree or environment that is no ELF file, or that the
    archive reader refused (traversal, absolute name, symlink, bomb), is a skipped part (WD002)."""
    from wheeldoc.abi.site import looks_like_library
    from wheeldoc.core.model import Finding, Location, Severity, Skipped
    from wheeldoc.binary.members import SingleFile

    out = []
    for path, err in facts.site.unreadable.items():
        entry = facts.site.files[path]
        if isinstance(entry.source, SingleFile):
            out.append(Finding("WD001", "input could not be read", Severity.ERROR,
                               Location(err.path, err.line, member=None), err.message))
            report.input_errors += 1
        else:
            report.skipped.append(Skipped(err.path, f"not read ({entry.origin}): {err.message}", err.member))
    for side in (facts.extension, facts.torch):
        for source, _ in side.sources:
            for r in source.rejected:
                if looks_like_library(r.name):
                    report.skipped.append(Skipped(source.path, f"refused by the archive reader: {r.reason}", r.name))
    return out


def record(facts) -> dict:
    return {
        "verdict": facts.verdict,
        "torch": {"name": facts.torch.name, "version": facts.torch.version, "build": facts.torch_build,
                  "source": facts.torch.label, **_provenance(facts.torch)},
        "system_target": facts.target.to_dict(),
        "cuda_libraries": {"mode": facts.cuda_mode, "packages": facts.cuda_packages,
                           "unknown": facts.cuda_unknown},
        "members_read": [{"package": p, "member": m} for p, m in facts.site.read_members],
    }


def _provenance(side) -> dict:
    """Where the torch side's facts came from: the torch index (with the indexed wheel's sha256), or
    the wheel / files themselves."""
    from wheeldoc.abi.index import IndexedWheel

    for source, _ in side.sources:
        if isinstance(source, IndexedWheel):
            return {"origin": source.origin, "wheel": source.path, "wheel_sha256": source.sha256}
    return {"origin": "files"}


def uv_python(ext, settings, torch_side=None) -> str:
    """The Python torch is resolved for: `--python-version`; else the one CPython the extension is
    built for (`cp311-cp311`); else wheeldoc's default (3.12). Never an abi3 or `py3` floor: a
    `cp38-abi3` wheel runs on today's Python, and torch has no wheels for 3.8."""
    from wheeldoc.abi.facts import python_version
    from wheeldoc.core.target import DEFAULT_PYTHON

    return (settings.target.python or python_version(ext)
            or (python_version(torch_side) if torch_side is not None else None) or DEFAULT_PYTHON)


def uv_platform(ext, settings=None, torch_side=None) -> str:
    """uv's `--python-platform` for the target: the target's architecture (`--platform`, `--gpu`)
    first, else the extension's (then torch's) platform tag; the manylinux level of those tags
    (for that architecture), else manylinux_2_28."""
    from wheeldoc.data.abi_tables import policy_for_tag

    tags = tuple(ext.platform_tags) + (tuple(torch_side.platform_tags) if torch_side is not None else ())
    arch = _arch(settings) if settings is not None else None
    found = [policy_for_tag(t) for t in tags]
    found = [f for f in found if f is not None]
    if arch is None:
        arch = next((a for _, a in found), None)
    if arch is None:
        arch = next((t[len("linux_"):] for t in tags if t.startswith("linux_")), None)
    if arch is None:
        import platform

        arch = platform.machine() or "x86_64"
    levels = sorted((tuple(int(x) for x in name.split("_")[1:3]), name) for name, a in found if a == arch)
    name = levels[-1][1] if levels else "manylinux_2_28"
    return f"{arch}-{name}"


def _arch(settings) -> str | None:
    plat = settings.target.platform
    return plat.split("-", 1)[1] if plat and plat.startswith("linux-") else None
