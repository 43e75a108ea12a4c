"""`wheeldoc kernels PATH… [--list] [--coverage] [--gpu …] [--driver …]`: the GPU code embedded
in libraries, and what of it will run on a GPU and driver.

- `--list`: every entry, line for line as `cuobjdump -lelf -lptx` prints it (JSON: `entries`).
- `--gpu` (and `--driver`): per library, how each container loads (native cubin, JIT-compiled
  PTX, or the driver error), and the WD3xx rules. Without `--driver`, PTX is assumed to JIT
  (a driver new enough for it) and the verdict says so.
- `--coverage` (the default view without `--gpu` or `--list`): libraries × architectures.

The plain `--list` of files, in text or JSON, takes a short path that does not import the report
machinery (command_list.py; the CLI hands it the command line before building its parser): it
is the one meant to race cuobjdump (bench/bench_kernels.py).
"""

from __future__ import annotations

import argparse
import os
import sys

from wheeldoc.core.terminal import escape_controls, stderr_line

def run(args: argparse.Namespace) -> int:
    if _plain_listing(args):
        code = _fast_list(args)
        if code is not None:
            return code
    if _plain_listing(args, "json"):
        code = _fast_list_json(args)
        if code is not None:
            return code
    from wheeldoc.core.settings import guarded

    return guarded(_run)(args)


# -- the fast listing -------------------------------------------------------------------------


def _plain_listing(args: argparse.Namespace, fmt: str = "text") -> bool:
    formats = (None, "text", "full") if fmt == "text" else (fmt,)
    return (args.list and not args.coverage and not args.gpu and not args.driver and not args.output
            and not getattr(args, "platform", None) and not getattr(args, "python_version", None)
            and args.format in formats and not args.config and not getattr(args, "statistics", False)
            and not _project_config() and (args.fail_on or "warning") in ("error", "warning", "info", "never"))


def _project_config() -> bool:
    from wheeldoc.kernels.command_list import _project_config as found

    return found()


def _fast_list(args: argparse.Namespace) -> int | None:
    """The listing of plain files, or None when an input needs the full path (a wheel, a
    directory, an unreadable file: those report skips and errors as findings)."""
    from wheeldoc.kernels.command_list import list_text

    return list_text(args.paths, args.output)


def _write(text: str, output: str | None) -> None:
    """The plain listing, control characters in file names escaped (the report's writer,
    `render.output.deliver`, does the same for every other text), through `write_text`'s
    redaction; to stdout without importing the report machinery."""
    if output:
        from wheeldoc.render.output import write_text

        write_text(escape_controls(text), output)
        return
    from wheeldoc.core.redact import redact_text

    sys.stdout.write(redact_text(escape_controls(text)))  # what write_text does for stdout


def _fast_list_json(args: argparse.Namespace) -> int | None:
    """`--list --format json` of plain files without the report machinery
    (`command_list.list_json`); None when an input needs the full path."""
    from wheeldoc.kernels.command_list import list_json

    return list_json(args.paths, args.output, args.fail_on)


# -- the full command -------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    from wheeldoc.kernels.facts import (DEFAULT_ARCHS, cc_of, coverage_cell,
                                               predict_library, read_inputs)
    from wheeldoc.core.cache import Cache
    from wheeldoc.core.settings import UsageError, settings_from
    from wheeldoc.render.output import emit
    from wheeldoc.kernels.report import (coverage_section, display_names, entry_record,
                                                library_record, listing_section, verdict_section)
    from wheeldoc.core.engine import Context, finalize, run_family
    from wheeldoc.core.model import Report

    settings = settings_from(args)
    target = settings.target
    gpu, driver = target.gpu, target.driver
    isa = cuda = None
    if driver is not None:
        isa, cuda = driver.ptx_isa, driver.cuda
        if isa is None:
            raise UsageError(f"no PTX ISA known for CUDA {driver.cuda_str}: wheeldoc's tables "
                             "stop earlier (wheeldoc/data/cuda.json)")
    report = Report("kernels", target.to_dict())
    _announce(args.paths)
    # a verdict or the coverage table may need the containers kept in data sections: find
    # them while each wheel member is open, not by inflating it again
    facts = read_inputs(args.paths, Cache(), embedded=gpu is not None or not args.list
                        or args.coverage)
    report.inputs.extend(facts.inputs)
    report.skipped.extend(facts.skipped)
    findings = [_input_error(e) for e in facts.errors]
    report.input_errors = len(facts.errors)
    names = display_names(facts.libraries)
    sections = []

    if args.list:
        if settings.fmt != "text":
            report.extra["entries"] = [entry_record(lib, e) for lib in facts.libraries
                                       for e in lib.fatbin.entries]
        sections.append(listing_section(facts.libraries, names))

    loads = []
    if gpu is not None:
        ctx = Context(target, settings.selection)
        for lib in facts.libraries:
            load = predict_library(lib, (gpu.major, gpu.minor), isa, cuda, gpu.arch)
            loads.append(load)
            findings.extend(run_family("WD3", load, ctx))
        sections.append(verdict_section(target, loads, names, facts.without_gpu_code))
    report.extra["libraries"] = [library_record(lib, load) for lib, load in
                                 zip(facts.libraries, loads or [None] * len(facts.libraries))]

    coverage = args.coverage or (gpu is None and not args.list)
    if coverage:
        archs = list(DEFAULT_ARCHS)
        if gpu is not None and gpu.arch not in archs:
            archs = sorted(archs + [gpu.arch], key=lambda a: cc_of(a))
        table = [(lib, [coverage_cell(predict_library(lib, cc_of(a), isa, cuda, a)) for a in archs])
                 for lib in facts.libraries]
        report.extra["coverage"] = {
            "archs": archs, "highlight": gpu.arch if gpu is not None else None,
            "driver_assumed": driver is None,
            "libraries": [{"library": lib.name, "cells": dict(zip(archs, cells))}
                          for lib, cells in table]}
        sections.append(coverage_section(archs, table, names, target, facts.libraries))

    finalize(report, findings, settings.selection)
    if args.list and gpu is None and not coverage and settings.fmt == "text" and not report.findings:
        return _write_listing(facts, names, settings.output)  # the listing alone, as cuobjdump
    return emit(report, settings, tuple(sections))


def _announce(paths: list[str], threshold: int = 64 << 20) -> None:
    """Say what is being read when it is big enough to take a while (on a terminal only)."""
    from wheeldoc.core.terminal import human_size, progress

    total = 0
    for p in paths:
        try:
            total += os.path.getsize(p) if os.path.isfile(p) else 0
        except OSError:
            pass
    if total >= threshold:
        progress(f"reading {len(paths)} input{'s' if len(paths) != 1 else ''} ({human_size(total)})")


def _write_listing(facts, names: dict[str, str], output: str | None) -> int:
    from wheeldoc.kernels.fatbin import listing, listing_text

    text = listing_text([(names[lib.name], lines) for lib in facts.libraries
                         if (lines := listing(lib.fatbin))])
    _write(text, output)
    for name in facts.without_gpu_code:
        stderr_line(f"wheeldoc: {name}: no GPU code")
    return 0


def _input_error(e):
    """WD001 with the byte offset in the message, so the one-line error names it."""
    from wheeldoc.kernels.facts import reason
    from wheeldoc.core.model import Finding, Location, Severity

    return Finding("WD001", "input could not be read", Severity.ERROR,
                   Location(e.path, e.line, member=e.member), reason(e),
                   data={"offset": e.offset} if e.offset is not None else {})
