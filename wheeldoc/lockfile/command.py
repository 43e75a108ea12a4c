"""One lockfile in `wheeldoc check`: read it (or resolve a requirements input with `--resolve`),
derive its facts for the target and run the WD1xx rules."""

from __future__ import annotations

import argparse
from pathlib import Path

from wheeldoc.core.engine import Context, run_family
from wheeldoc.core.model import Finding, Report
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
    else:
        lock = load_lockfile(path, data=data)
    facts = LockFacts(lock, settings.target, index_options(args))
    return run_family("WD1", facts, ctx)
