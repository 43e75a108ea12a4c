"""The fix for a lockfile finding, in the words of the tool that made the lock.

- `uv pip compile`: an overrides file and `--override`, plus `--torch-backend` (or the local
  source that holds the CUDA build);
- a uv project (`uv lock`, `uv export`): `[tool.uv] override-dependencies` and a
  `[tool.uv.sources]` index entry;
- pip-compile / pip: a constraints file and `--extra-index-url`.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from wheeldoc.data.torch import torch_table
from wheeldoc.core.model import Fix


@dataclass(frozen=True)
class PinPlan:
    pins: tuple[str, ...]  # "torch==2.11.0+cu130", …
    variant: str  # "cu130"
    why_variant: str
    local_source: str | None = None  # a local folder/index that holds the CUDA build, if one does
    index_options: tuple[tuple[str, str], ...] = ()  # the index options wheeldoc was given
    configured_index: str | None = None  # a CUDA index of `variant` the lock already uses


_INDEX_FLAGS = ("--index-url", "-i", "--extra-index-url")


def _is_cpu_index(url: str) -> bool:
    from wheeldoc.core.torchbuild import classify_index

    b = classify_index(url)
    return b is not None and b.kind == "cpu"


def _with_flags(command: str | None, default: str, flags: list[str],
                index_options: tuple[tuple[str, str], ...] = ()) -> str:
    base = command.strip() if command else default
    try:
        words = shlex.split(base)
    except ValueError:
        words = base.split()
    # Drop flags the fix replaces, and the CPU index torch came from (an index listed earlier
    # wins under uv's first-index strategy), so the command stays runnable as printed.
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        nxt = words[i + 1] if i + 1 < len(words) else ""
        if w in ("--override", "--torch-backend", "--constraint", "-c") or (
                w in _INDEX_FLAGS and _is_cpu_index(nxt)):
            i += 2
            continue
        flag, _, value = w.partition("=")
        if flag in ("--override", "--torch-backend", "--constraint") or (
                flag in _INDEX_FLAGS and value and _is_cpu_index(value)):
            i += 1
            continue
        out.append(w)
        i += 1
    for flag, value in index_options:  # options the lock header does not record
        if value not in out and value not in flags and not _is_cpu_index(value):
            out += [flag, value]
    return shlex.join(out + flags)


def _source_flag(plan: PinPlan, tool: str) -> list[str]:
    if plan.configured_index:
        return []  # the lock's own CUDA index serves the pinned build
    if plan.local_source:
        src = plan.local_source
        return ["--find-links", src] if not src.startswith(("http", "file:")) else ["--extra-index-url", src]
    if tool == "uv":
        return ["--torch-backend", plan.variant]
    return ["--extra-index-url", torch_table().index_url(plan.variant)]


def fix_for(lock_path: str, lock_format: str, tool: str | None, tool_command: str | None,
            plan: PinPlan) -> Fix:
    body = "\n".join(plan.pins) + "\n"
    name = Path(lock_path).name
    pinned = ", ".join(plan.pins)
    if lock_format == "uv.lock" or tool in ("uv lock", "uv export"):
        idx = f"pytorch-{plan.variant}"
        url = plan.configured_index or plan.local_source or torch_table().index_url(plan.variant)
        sources = "\n".join(f'{p.split("==")[0]} = [{{ index = "{idx}" }}]' for p in plan.pins)
        snippet = (
            "[tool.uv]\n"
            f"override-dependencies = [{', '.join(repr(p).replace(chr(39), chr(34)) for p in plan.pins)}]\n\n"
            "[tool.uv.sources]\n"
            f"{sources}\n\n"
            "[[tool.uv.index]]\n"
            f'name = "{idx}"\n'
            f'url = "{url}"\n'
            "explicit = true\n"
        )
        cmd = "uv lock"
        if tool == "uv export":
            cmd += f" && uv export --format pylock.toml -o {name}"
        return Fix(f"Override {pinned} in pyproject.toml and take it from the {plan.variant} index",
                   "display-only", command=cmd, text=snippet)
    if tool == "uv pip compile":
        cmd = _with_flags(tool_command, f"uv pip compile requirements.in -o {name}",
                          ["--override", "overrides.txt", *_source_flag(plan, "uv")], plan.index_options)
        return Fix(f"Write overrides.txt with {pinned} and re-resolve with --override",
                   "display-only", command=cmd, text=body)
    if tool == "pip lock":
        cmd = _with_flags(tool_command, "pip lock -r requirements.in",
                          ["--constraint", "constraints.txt", *_source_flag(plan, "pip")], plan.index_options)
        return Fix(f"Write constraints.txt with {pinned} and re-lock with --constraint",
                   "display-only", command=cmd, text=body)
    cmd = _with_flags(tool_command if tool == "pip-compile" else None,
                      f"pip-compile requirements.in -o {name}",
                      ["--constraint", "constraints.txt", *_source_flag(plan, "pip")], plan.index_options)
    uv_cmd = shlex.join(["uv", "pip", "compile", "requirements.in", "-o", name, "--override",
                         "constraints.txt", *_source_flag(plan, "uv")])
    return Fix(f"Write constraints.txt with {pinned} and re-resolve against the {plan.variant} index",
               "display-only", command=f"{cmd}\n# or, with uv:\n{uv_cmd}", text=body)
