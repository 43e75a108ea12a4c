"""pylock.toml (PEP 751) into a `Lockfile`, validated by `packaging.pylock` where available."""

from __future__ import annotations

import re
from typing import Any

from wheeldoc.core.errors import InputError
from wheeldoc.lockfile.source import (
    Dependency,
    LockedPackage,
    Lockfile,
    Option,
    SourceKind,
    assign_lines,
    canonical_name,
    header_tool,
    key_line,
    table_lines,
    toml_loads,
)

_TOOLS = {"uv": "uv export", "pip": "pip lock"}
_TOP_KEYS = ("lock-version", "created-by", "requires-python", "environments", "extras",
             "dependency-groups", "default-groups")


def _validate(path: str, text: str, doc: dict, lines: list[int | None]) -> list[Option]:
    """Spec problems found by `packaging.pylock` (26.1+), as warnings with a line.

    Only an unsupported `lock-version` is fatal: real tools write files the strict validator
    rejects (uv exports a package without any wheel or source for a platform it has no
    wheel for), and wheeldoc still reads them.
    """
    try:
        from packaging.pylock import Pylock, PylockUnsupportedVersionError, PylockValidationError
    except ImportError:  # older packaging: only the checks in parse_pylock
        return []
    try:
        Pylock.from_dict(doc)
    except PylockUnsupportedVersionError as e:
        raise InputError(path, f"unsupported pylock: {e}", line=key_line(text, "lock-version")) from None
    except PylockValidationError as e:
        line = None
        m = re.match(r"packages\[(\d+)\]", e.context or "")
        if m and int(m.group(1)) < len(lines):
            line = lines[int(m.group(1))]
        return [Option("pylock-validation", str(e), line)]
    return []


def _wheel_ref(w: Any) -> str | None:
    if isinstance(w, dict):
        for key in ("url", "path", "name"):
            if isinstance(w.get(key), str):
                return w[key]
    return None


def _hashes(entry: Any) -> int:
    if isinstance(entry, dict) and isinstance(entry.get("hashes"), dict):
        return len(entry["hashes"])
    return 0


def _source(pkg: dict) -> tuple[SourceKind, str | None]:
    vcs = pkg.get("vcs")
    if isinstance(vcs, dict):
        return "git", vcs.get("url") or vcs.get("path")
    d = pkg.get("directory")
    if isinstance(d, dict):
        return ("editable" if d.get("editable") else "directory"), d.get("path")
    a = pkg.get("archive")
    if isinstance(a, dict):
        return ("url", a["url"]) if isinstance(a.get("url"), str) else ("path", a.get("path"))
    if isinstance(pkg.get("index"), str):
        return "registry", None
    files = list(pkg.get("wheels") or ()) + ([pkg["sdist"]] if isinstance(pkg.get("sdist"), dict) else [])
    if files and all(isinstance(f, dict) and "url" not in f and "path" in f for f in files):
        return "path", None
    if files:
        return "url", None
    return "unknown", None


def parse_pylock(path: str, text: str) -> Lockfile:
    doc = toml_loads(path, text)
    raw = doc.get("packages")
    if "lock-version" not in doc or not isinstance(raw, list):
        raise InputError(path, "not a pylock file: no `lock-version` or `[[packages]]` array", line=1)
    names = [p.get("name") if isinstance(p, dict) else None for p in raw]
    lines = assign_lines(table_lines(text, "packages"), [n if isinstance(n, str) else "" for n in names])
    warnings = _validate(path, text, doc, lines)

    parents: dict[str, list[str]] = {}
    deps_of: list[list[Dependency]] = []
    for pkg, raw_name, line in zip(raw, names, lines):
        if not isinstance(pkg, dict) or not isinstance(raw_name, str):
            raise InputError(path, "[[packages]] table without a `name`", line=line)
        name = canonical_name(raw_name)
        deps = []
        for d in pkg.get("dependencies") or ():
            if isinstance(d, dict) and isinstance(d.get("name"), str):
                dep = Dependency(name=canonical_name(d["name"]),
                                 version=d.get("version") if isinstance(d.get("version"), str) else None)
                deps.append(dep)
                lst = parents.setdefault(dep.name, [])
                if name not in lst:
                    lst.append(name)
        deps_of.append(deps)

    packages = []
    for pkg, raw_name, line, deps in zip(raw, names, lines, deps_of):
        name = canonical_name(raw_name)
        kind, where = _source(pkg)
        wheels = tuple(r for r in map(_wheel_ref, pkg.get("wheels") or ()) if r)
        sdist = pkg.get("sdist")
        hashes = sum(_hashes(w) for w in pkg.get("wheels") or ()) + _hashes(sdist)
        for k in ("archive", "vcs", "directory"):
            hashes += _hashes(pkg.get(k))
        packages.append(
            LockedPackage(
                name=name,
                version=str(pkg.get("version", "")),
                line=line,
                index=pkg.get("index") if isinstance(pkg.get("index"), str) else None,
                source=kind,
                url=where,
                wheels=wheels,
                sdist=_wheel_ref(sdist),
                dependencies=tuple(deps),
                pulled_in_by=tuple(parents.get(name, ())),
                markers=pkg.get("marker") if isinstance(pkg.get("marker"), str) else None,
                hashes=hashes,
            )
        )

    created_by = doc.get("created-by") if isinstance(doc.get("created-by"), str) else None
    options = []
    for key in _TOP_KEYS:
        if key in doc:
            v = doc[key]
            options.append(Option(key, " || ".join(map(str, v)) if isinstance(v, list) else str(v), key_line(text, key)))
    header, command = header_tool(text)
    return Lockfile(
        path=path,
        format="pylock",
        packages=tuple(packages),
        graph=any("dependencies" in p for p in raw if isinstance(p, dict)),
        tool=header or (_TOOLS.get(created_by, created_by) if created_by else None),
        tool_command=command,
        requires_python=doc.get("requires-python") if isinstance(doc.get("requires-python"), str) else None,
        options=tuple(options),
        warnings=tuple(warnings),
    )
