"""`wheeldoc check PATH…`: lockfiles, directories (by detection), Dockerfiles; `--resolve` runs uv first."""

from __future__ import annotations

import argparse
from pathlib import Path

from wheeldoc.core.engine import Context, finalize, input_error_finding
from wheeldoc.core.errors import InputError
from wheeldoc.core.model import Finding, Report, Skipped
from wheeldoc.core.names import is_dockerfile_path
from wheeldoc.core.settings import guarded, settings_from
from wheeldoc.lockfile.command import check_lockfile
from wheeldoc.render.output import emit


def is_dockerfile_name(name: str) -> bool:
    """A file given by name is a Dockerfile when the hooks' pattern says so, or when its name
    says so loosely (`Dockerfile.j2` given explicitly is still read as one)."""
    low = name.lower()
    return is_dockerfile_path(name) or low in ("dockerfile", "containerfile") \
        or low.startswith(("dockerfile.", "containerfile.")) or low.endswith((".dockerfile", ".containerfile"))


def _expand(paths: list[str], report: Report) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            from wheeldoc.verbs.discover import discover

            found = discover(p)
            for note in found.notes:
                report.skipped.append(Skipped(raw, f"directory search partial: {note}"))
            if not found.files:
                report.inputs.append(raw)
                report.skipped.append(Skipped(raw, "no lockfile or Dockerfile in this directory or below it"))
            out.extend(found.files)
        else:
            out.append(p)
    return out


@guarded
def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    report = Report("check", settings.target.to_dict())
    ctx = Context(settings.target, settings.selection, {"fix": args.fix, "diff": args.diff})
    findings: list[Finding] = []
    suppressors = []
    for path in _expand(args.paths, report):
        report.inputs.append(str(path))
        try:
            if not path.exists():
                raise InputError(str(path), "no such file or directory")
            if is_dockerfile_name(path.name):
                from wheeldoc.dockerfile.command import check_dockerfile

                got, suppressed = check_dockerfile(path, settings, ctx, args, report)
                findings.extend(got)
                suppressors.append(suppressed)
            else:
                findings.extend(check_lockfile(path, settings, ctx, args, report))
        except InputError as e:
            report.input_errors += 1
            findings.append(input_error_finding(e))
        except OSError as e:
            report.input_errors += 1
            findings.append(input_error_finding(InputError(str(path), f"cannot read: {e.strerror or e}")))
    finalize(report, findings, settings.selection,
             lambda f: any(s(f) for s in suppressors))
    sections: tuple = ()
    if "diff" in report.extra or "fixed" in report.extra:
        from wheeldoc.dockerfile.command import text_sections

        sections = text_sections(report)
    return emit(report, settings, sections)
