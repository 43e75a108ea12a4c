"""`wheeldoc doctor [--python PATH | --site-packages DIR] [--gpu …] [--driver …]`: every analyzer
over an installed environment, without importing or loading anything from it.

The environment is the one the user means (see `discover`): `--python` (run once as
`python -I -S`, standard library only), `--site-packages` (a folder, or a venv root), the active
`VIRTUAL_ENV`, `./.venv`, else the running interpreter; the first line says which.
The machine is the host only when no target is given: its NVIDIA driver and GPUs (NVML, else
`/proc/driver/nvidia/version`), its `LD_LIBRARY_PATH` and loader cache, its variables. With
`--gpu` / `--driver` the same command answers for another machine (`--driver none`: one without
an NVIDIA driver; `--ld-library-path DIRS`: its library path). The top line says healthy /
degraded / broken and why (JSON: `verdict`, `doctor.reason`).
"""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from wheeldoc.core.settings import guarded

    return guarded(_run)(args)


def take_driver_none(args: argparse.Namespace) -> bool:
    """`--driver none`: a machine without an NVIDIA driver (the target parser knows only versions)."""
    if isinstance(getattr(args, "driver", None), str) and args.driver.strip().lower() in ("none", "no", "absent"):
        args.driver = None
        return True
    return False


def _run(args: argparse.Namespace) -> int:
    import os

    from wheeldoc.doctor.diagnose import diagnose, flags_machine, host_machine
    from wheeldoc.core.cache import Cache
    from wheeldoc.core.settings import settings_from
    from wheeldoc.core.engine import finalize, input_error_finding
    from wheeldoc.core.errors import InputError
    from wheeldoc.core.model import Report
    from wheeldoc.doctor.discover import find_environment, has_dist_info, no_distributions

    no_driver = take_driver_none(args)
    settings = settings_from(args)
    target = settings.target
    if target.gpu is not None or target.driver is not None or no_driver:
        machine = flags_machine(target, no_driver=no_driver, ld_library_path=args.ld_library_path)
    else:
        environ = dict(os.environ)
        if args.ld_library_path is not None:
            environ["LD_LIBRARY_PATH"] = args.ld_library_path
        machine, target = host_machine(environ, platform=target.platform)
    report = Report("doctor", target.to_dict())
    try:
        loc = find_environment(args.python_exe, args.site_packages)
        if not loc.site_packages:
            raise InputError(args.python_exe or loc.executable or "python", "no site-packages folder found")
    except InputError as e:
        report.inputs.append(args.python_exe or args.site_packages or "(running interpreter)")
        report.input_errors = 1
        finalize(report, [input_error_finding(e)], settings.selection)
        return emit_diagnosis(report, settings, None, args)
    report.inputs.extend(loc.site_packages)
    cache = None if args.no_cache else Cache()
    from wheeldoc.doctor.view import progress_bar

    try:
        with progress_bar("reading libraries") as progress:
            diag = diagnose(loc, target, machine, selection=settings.selection, cache=cache, progress=progress)
        if not diag.env.distributions and not any(has_dist_info(s) for s in loc.site_packages):
            raise no_distributions(loc)  # (dist-info folders that could not be read are WD002s, not this)
    except InputError as e:
        report.input_errors = 1
        finalize(report, [input_error_finding(e)], settings.selection)
        return emit_diagnosis(report, settings, None, args)
    return emit_diagnosis(fill_report(report, diag, settings, args), settings, diag, args)


def fill_report(report, diag, settings, args):
    """The findings (finalized), the skipped files and the JSON records of one diagnosis."""
    from wheeldoc.doctor.view import abi_record, environment_record, machine_record
    from wheeldoc.kernels.report import entry_record
    from wheeldoc.core.engine import finalize
    from wheeldoc.core.model import Skipped

    report.skipped.extend(Skipped(s.path, s.reason) for s in diag.env.skipped)
    finalize(report, diag.findings, settings.selection)
    if settings.fmt != "text":
        report.extra["environment"] = environment_record(diag)
        report.extra["machine"] = machine_record(diag)
        report.extra["abi"] = abi_record(diag)
        report.extra["kernels"] = [r.record() for r in diag.kernel_rows]
        cov = diag.coverage
        if cov is not None:
            report.extra["coverage"] = {
                "archs": cov["archs"], "highlight": cov["highlight"], "driver_assumed": cov["driver_assumed"],
                "libraries": [{"library": r.short, "cells": dict(zip(cov["archs"], r.cells))}
                              for r in diag.kernel_rows]}
        if getattr(args, "list", False):
            report.extra["entries"] = [entry_record(lib, e) for lib in diag.libraries() for e in lib.fatbin.entries]
        report.extra["timings"] = {k: round(v, 4) for k, v in diag.timings.items()}
    return report


def emit_diagnosis(report, settings, diag, args) -> int:
    from wheeldoc.doctor.diagnose import verdict
    from wheeldoc.render.output import emit
    from wheeldoc.doctor.view import (abi_section, environment_section, findings_section,
                                               header_section, kernel_sections, machine_section,
                                               render_text, verdict_record)

    v, root = verdict(report.findings, report.input_errors)
    report.extra["verdict"] = v
    report.extra["doctor"] = verdict_record(v, root, report.findings)
    if settings.fmt != "text":
        return emit(report, settings)
    sections = []
    if diag is not None:
        sections += [header_section(diag, v, root, report.findings), environment_section(diag),
                     machine_section(diag), abi_section(diag), *kernel_sections(diag)]
        if getattr(args, "list", False):
            from wheeldoc.kernels.report import display_names, listing_section

            libs = diag.libraries()
            sections.append(listing_section(libs, display_names(libs)))
    return render_text(report, settings, sections, findings_section(report.findings))
