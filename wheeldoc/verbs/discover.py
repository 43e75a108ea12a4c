"""`wheeldoc check DIR`: the files below DIR whose names the pre-commit hooks match
(`core.names`), found recursively, honouring `.gitignore` files, skipping VCS folders, virtual
environments, node_modules and site-packages. Bounded: at most MAX_ENTRIES directory entries
and MAX_DEPTH levels are looked at, and the walk says so when it stops early. No git needed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from wheeldoc.core.names import is_dockerfile_path, is_lockfile_path

SKIP_DIRS = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "site-packages", "dist-packages",
             "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
MAX_ENTRIES = 200_000
MAX_DEPTH = 32
MAX_IGNORE_BYTES = 256 * 1024  # a .gitignore larger than this is not read (and the walk says so)


@dataclass
class Found:
    files: list[Path] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # why the walk is partial, when it is


@dataclass(frozen=True)
class _Rule:
    base: str  # the folder of the .gitignore, relative to the root ("" for the root)
    regex: re.Pattern
    negate: bool
    dir_only: bool
    anchored: bool


def _glob_to_regex(glob: str) -> str:
    out, i, n = [], 0, len(glob)
    while i < n:
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = glob.find("]", i + 2)
            if j == -1:
                out.append(re.escape(c))
                i += 1
            else:
                body = glob[i + 1:j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def parse_gitignore(text: str, base: str) -> list[_Rule]:
    """The rules of one .gitignore (git's syntax: `#`, `!`, trailing `/`, a `/` anchors, `**`)."""
    rules = []
    for raw in text.splitlines()[:10_000]:
        line = raw.rstrip()
        if raw.endswith("\\ "):
            line += " "
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        elif line.startswith("\\"):
            line = line[1:]  # `\#name`, `\!name`
        dir_only = line.endswith("/")
        line = line.rstrip("/")
        if not line:
            continue
        anchored = "/" in line
        line = line.lstrip("/")
        try:
            regex = re.compile(_glob_to_regex(line))
        except re.error:
            continue
        rules.append(_Rule(base, regex, negate, dir_only, anchored))
    return rules


def _ignored(rules: list[_Rule], rel: str, is_dir: bool) -> bool:
    verdict = False
    name = rel.rsplit("/", 1)[-1]
    for r in rules:
        if r.dir_only and not is_dir:
            continue
        if r.base:
            if not rel.startswith(r.base + "/"):
                continue
            sub = rel[len(r.base) + 1:]
        else:
            sub = rel
        if r.regex.fullmatch(sub if r.anchored else name):
            verdict = not r.negate
    return verdict


def _read_ignore(path: str, notes: list[str]) -> str:
    try:
        if os.path.getsize(path) > MAX_IGNORE_BYTES:
            notes.append(f"{path}: larger than {MAX_IGNORE_BYTES:,} bytes, not read")
            return ""
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def discover(root: str | os.PathLike[str]) -> Found:
    """Every lockfile and Dockerfile below `root`, sorted by path."""
    found = Found()
    top = os.fspath(root)
    rules: list[_Rule] = []
    seen = 0
    stack = [("", 0)]
    while stack:
        rel_dir, depth = stack.pop()
        folder = os.path.join(top, rel_dir) if rel_dir else top
        ignore_file = os.path.join(folder, ".gitignore")
        if os.path.isfile(ignore_file):
            rules = rules + parse_gitignore(_read_ignore(ignore_file, found.notes), rel_dir)
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            found.notes.append(f"{folder}: not read ({e.strerror or e})")
            continue
        subdirs = []
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES:
                found.notes.append(f"stopped after {MAX_ENTRIES:,} entries: the rest of {top} was not searched")
                stack.clear()
                break
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if entry.name in SKIP_DIRS or _ignored(rules, rel, True) \
                        or os.path.isfile(os.path.join(entry.path, "pyvenv.cfg")):
                    continue
                if depth + 1 > MAX_DEPTH:
                    found.notes.append(f"{rel}: deeper than {MAX_DEPTH} levels, not searched")
                    continue
                subdirs.append((rel, depth + 1))
            elif (is_lockfile_path(rel) or is_dockerfile_path(rel)) and not _ignored(rules, rel, False):
                found.files.append(Path(top, rel))
        stack.extend(reversed(subdirs))
    found.files.sort(key=lambda p: p.as_posix())
    return found
