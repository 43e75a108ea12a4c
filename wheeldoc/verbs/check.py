"""`wheeldoc check PATH…`: lockfiles, directories (by detection), Dockerfiles; `--resolve` runs uv first."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wheeldoc.core.engine import Context, finalize, input_error_finding
from wheeldoc.core.errors import InputError
from wheeldoc.core.model import Finding, Report, Skipped
from wheeldoc.core.names import is_dockerfile_path
from wheeldoc.core.settings import UsageError, guarded, settings_from
from wheeldoc.lockfile.command import check_lockfile
from wheeldoc.render.output import emit


def is_dockerfile_name(name: str) -> bool:
    """A file given by name is a Dockerfile when the hooks' pattern says so, or when its name
    says so loosely (`Dockerfile.j2` given explicitly is still read as one)."""
    low = name.lower()
    return is_dockerfile_path(name) or low in ("dockerfile", "containerfile") \
        or low.startswith(("dockerfile.", "containerfile.")) or low.endswith((".dockerfile", ".containerfile"))


STDIN = "-"


def _stdin(args: argparse.Namespace) -> tuple[Path, bytes] | None:
    """`check - --stdin-filename NAME`: the name and the bytes read from stdin (bounded)."""
    name = getattr(args, "stdin_filename", None)
    if STDIN not in args.paths:
        if name is not None:
            raise UsageError("--stdin-filename names what `-` reads: give `-` as the PATH")
        return None
    if args.paths.count(STDIN) > 1:
        raise UsageError("`-` (stdin) can be given once")
    if not name:
        raise UsageError("reading stdin (`-`) needs --stdin-filename NAME: the name (Dockerfile, uv.lock, "
                         "requirements.txt, pylock.toml) decides the parser")
    if getattr(args, "fix", False):
        raise UsageError("--fix rewrites files, not stdin: use --diff")
    if getattr(args, "resolve", False):
        raise UsageError("--resolve reads the input file itself: give its path, not stdin")
    from wheeldoc.lockfile.source import MAX_LOCK_BYTES

    data = sys.stdin.buffer.read(MAX_LOCK_BYTES + 1)  # each reader applies its own, smaller or equal, limit
    return Path(name), data


def _expand(paths: list[str], report: Report, stdin: Path | None = None) -> list[Path]:
    out: list[Path] = []
    for raw in paths:
        if raw == STDIN and stdin is not None:
            out.append(stdin)
            continue
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
    stdin = _stdin(args)
    for path in _expand(args.paths, report, stdin[0] if stdin else None):
        report.inputs.append(str(path))
        data = stdin[1] if stdin is not None and path is stdin[0] else None
        try:
            if data is None and not path.exists():
                raise InputError(str(path), "no such file or directory")
            if is_dockerfile_name(path.name):
                from wheeldoc.dockerfile.command import check_dockerfile

                got, suppressed = check_dockerfile(path, settings, ctx, args, report, data)
                findings.extend(got)
                suppressors.append(suppressed)
            else:
                findings.extend(check_lockfile(path, settings, ctx, args, report, data))
        except InputError as e:
            report.input_errors += 1
            findings.append(input_error_finding(e))
        except OSError as e:
            report.input_errors += 1
            findings.append(input_error_finding(InputError(str(path), f"cannot read: {e.strerror or e}")))
    finalize(report, findings, settings.selection,
             lambda f: any(s(f) for s in suppressors))
    sections: tuple = ()
    if "diff" in report.extra or "fixed" in report.extra or "bases" in report.extra:
        from wheeldoc.dockerfile.command import text_sections

        sections = text_sections(report)
    return emit(report, settings, sections)
