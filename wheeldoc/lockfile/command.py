"""One lockfile in `wheeldoc check`: read it (or resolve a requirements input with `--resolve`),
derive its facts for the target and run the WD1xx rules."""

from __future__ import annotations

import argparse
from pathlib import Path

from wheeldoc.core.engine import Context, run_family
from wheeldoc.core.model import Finding, Report, Skipped
from wheeldoc.core.settings import Settings


def is_requirements_input(path: Path) -> bool:
    return path.suffix == ".in" or path.name == "pyproject.toml"


def index_options(args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    out = [("--index-url", args.index_url)] if args.index_url else []
    out += [("--extra-index-url", u) for u in args.extra_index_url]
    out += [("--find-links", u) for u in args.find_links]
    return tuple(out)


def check_lockfile(path: Path, settings: Settings, ctx: Context, args: argparse.Namespace,
                   report: Report) -> list[Finding]:
    from wheeldoc.lockfile.facts import LockFacts
    from wheeldoc.lockfile.source import load_lockfile

    if args.resolve and is_requirements_input(path):
        from wheeldoc.lockfile.resolve import resolve

        lock = resolve(path, args, settings.target)
        report.extra.setdefault("resolved", []).append({"input": str(path), "command": lock.tool_command})
    elif is_requirements_input(path):
        report.skipped.append(Skipped(str(path), not_a_lock(path)))
        return []
    else:
        lock = load_lockfile(path)
    facts = LockFacts(lock, settings.target, index_options(args))
    for w in lock.warnings:
        if w.name == "include-skipped":
            report.skipped.append(Skipped(w.file or lock.path, w.value, line=w.line))
    if facts.unpinned:
        report.skipped.append(unpinned_note(facts))
    return run_family("WD1", facts, ctx)


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
                   f"or check the lock", line=first.line)


def first_path(facts, pkg) -> str:
    return getattr(pkg, "file", None) or facts.lock.path
