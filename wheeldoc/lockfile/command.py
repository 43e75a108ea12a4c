"""One lockfile in `wheeldoc check`: read it (or resolve a requirements input with `--resolve`),
derive its facts for the target and run the WD1xx rules."""

from __future__ import annotations

import argparse
from pathlib import Path

from wheeldoc.core.engine import Context, run_family
from wheeldoc.core.model import Finding, Report, Severity, Skipped
from wheeldoc.core.settings import Settings


def is_requirements_input(path: Path) -> bool:
    return path.suffix == ".in" or path.name == "pyproject.toml"


def index_options(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    out = [("--index-url", args.index_url)] if args.index_url else []
    out += [("--extra-index-url", u) for u in args.extra_index_url]
    out += [("--find-links", u) for u in args.find_links]
    return tuple(out)


def check_lockfile(path: Path, settings: Settings, ctx: Context, args: argparse.Namespace,
                   report: Report, data: bytes | None = None) -> list[Finding]:
    """`data`: the lockfile's content read from stdin (`check - --stdin-filename NAME`)."""
    from wheeldoc.lockfile.facts import LockFacts
    from wheeldoc.lockfile.source import load_lockfile

    if args.resolve and is_requirements_input(path) and data is None:
        from wheeldoc.core.terminal import progress
        from wheeldoc.lockfile.resolve import resolve

        progress(f"resolving {path} with uv pip compile (the index may take a few seconds)")
        lock = resolve(path, args, settings.target)
        report.extra.setdefault("resolved", []).append({"input": str(path), "command": lock.tool_command})
    elif is_requirements_input(path):
        report.skipped.append(Skipped(str(path), not_a_lock(path)))
        return []
    else:
        lock = load_lockfile(path, data=data)
    options = index_options(args)
    base = LockFacts(lock, settings.target, options)
    for w in lock.warnings:
        if w.name == "include-skipped":
            report.skipped.append(Skipped(w.file or lock.path, w.value, line=w.line))
    if base.unpinned:
        report.skipped.append(unpinned_note(base))
    if lock.format != "uv.lock":
        return run_family("WD1", base, ctx)
    from wheeldoc.core.target import marker_environment
    from wheeldoc.lockfile.environments import environments

    envs = _installable(environments(lock, marker_environment(base.platform, settings.target.python)), base,
                        report, path)
    report.extra.setdefault("environments", []).append(
        {"input": str(path), "platform": base.platform, "environments": [
            {"name": e.name, "extras": list(e.chosen_extras),
             "groups": sorted(c.name for c in e.choices if c.kind == "group"), "packages": len(e.packages)}
            for e in envs]})
    if not envs:
        return []
    from wheeldoc.lockfile.combinations import judge_environments
    from wheeldoc.lockfile.environments import not_installable

    def judge(e) -> list[Finding]:  # (the combination probes too: an environment its torch cannot enter is not judged)
        if not_installable(e, base.platform) is not None:
            return []
        return run_family("WD1", LockFacts(lock, settings.target, options, e), ctx)

    return judge_environments(lock, envs, judge)


def _installable(envs: list, base, report: Report, path: Path) -> list:
    """The environments whose torch `uv sync` can install on the target platform; one note each for
    the others (a torch locked with wheels for other platforms only): no build of it runs there."""
    from wheeldoc.lockfile.environments import not_installable

    keep = []
    for e in envs:
        pkg = not_installable(e, base.platform)
        if pkg is None:
            keep.append(e)
            continue
        report.skipped.append(Skipped(
            str(path), f"environment {e.name}: {pkg.name} {pkg.version} has no wheel for {base.platform} (the "
            f"lock lists wheels for other platforms only, and no sdist), so `uv sync` cannot install it there; "
            f"it is not judged for {base.platform}", line=pkg.line, severity=Severity.INFO))
    return keep


def not_a_lock(path: Path) -> str:
    """Why a requirements input is not checked without --resolve, and what to run instead."""
    lock = "its uv.lock (`uv lock`)" if path.name == "pyproject.toml" else \
        f"the lock it compiles to (`uv pip compile {path.name} -o {path.stem}.txt`)"
    return (f"{path.name} is an input, not a lock: nothing in it is resolved, so no build can be checked; "
            f"run `wheeldoc check --resolve {path}` (the real `uv pip compile`) or check {lock}")


def unpinned_note(facts) -> Skipped:
    """One note per file for the entries that name no version: their builds are unknown."""
    names = [p.name for p in facts.unpinned]
    first = facts.unpinned[0]
    more = f" and {len(names) - 4} more" if len(names) > 4 else ""
    return Skipped(first_path(facts, first), f"{len(names)} requirement{'s' if len(names) > 1 else ''} "
                   f"not pinned to a version ({', '.join(names[:4])}{more}): what they resolve to is "
                   f"unknown, so their builds are not checked; pin them (`uv pip compile`, `pip-compile`) "
                   f"or check the lock", line=first.line, severity=Severity.INFO)


def first_path(facts, pkg) -> str:
    return getattr(pkg, "file", None) or facts.lock.path
