"""`wheeldoc check PATH…`: lockfiles, directories (by detection), Dockerfiles; `--resolve` runs uv first."""

from __future__ import annotations

import argparse
from pathlib import Path

from wheeldoc.commands.common import Settings, emit, guarded, settings_from
from wheeldoc.engine import Context, finalize, input_error_finding, run_family
from wheeldoc.errors import InputError
from wheeldoc.model import Finding, Report, Skipped


def is_dockerfile_name(name: str) -> bool:
    low = name.lower()
    return low in ("dockerfile", "containerfile") or low.startswith(("dockerfile.", "containerfile.")) \
        or low.endswith((".dockerfile", ".containerfile"))


def is_requirements_input(path: Path) -> bool:
    return path.suffix == ".in" or path.name == "pyproject.toml"


def _expand(paths: list[str], report: Report) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        p = Path(raw)
        if p.is_dir():
            from wheeldoc.sources.lockfile import find_lockfiles

            found = find_lockfiles(p) + sorted(q for q in p.iterdir() if q.is_file() and is_dockerfile_name(q.name))
            if not found:
                report.inputs.append(raw)
                report.skipped.append(Skipped(raw, "no lockfile or Dockerfile in this directory"))
            out.extend(found)
        else:
            out.append(p)
    return out


def index_options(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    out = [("--index-url", args.index_url)] if args.index_url else []
    out += [("--extra-index-url", u) for u in args.extra_index_url]
    out += [("--find-links", u) for u in args.find_links]
    return tuple(out)


def check_lockfile(path: Path, settings: Settings, ctx: Context, args: argparse.Namespace,
                   report: Report) -> list[Finding]:
    from wheeldoc.analysis.lockfacts import LockFacts
    from wheeldoc.sources.lockfile import load_lockfile

    if args.resolve and is_requirements_input(path):
        from wheeldoc.analysis.resolve import resolve

        lock = resolve(path, args, settings.target)
        report.extra.setdefault("resolved", []).append({"input": str(path), "command": lock.tool_command})
    else:
        lock = load_lockfile(path)
    facts = LockFacts(lock, settings.target, index_options(args))
    return run_family("WD1", facts, ctx)


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
                from wheeldoc.commands.dockerfile import check_dockerfile

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
        from wheeldoc.commands.dockerfile import text_sections

        sections = text_sections(report)
    return emit(report, settings, sections)
