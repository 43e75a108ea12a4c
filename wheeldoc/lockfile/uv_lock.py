"""uv.lock (uv's universal lockfile) into a `Lockfile`.

Positions come from one regex pass over the text (`table_lines`), matched in order with the
`[[package]]` tables `tomli` returns; no position-tracking TOML parser.
"""

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
    key_line,
    table_lines,
    toml_loads,
)

_SOURCE_KINDS: tuple[tuple[str, SourceKind], ...] = (
    ("registry", "registry"),
    ("url", "url"),
    ("path", "path"),
    ("directory", "directory"),
    ("editable", "editable"),
    ("virtual", "virtual"),
    ("git", "git"),
)
_MANIFEST_LISTS = ("requirements", "constraints", "overrides", "excludes", "build-constraints")


def _source(src: Any) -> tuple[SourceKind, str | None]:
    if isinstance(src, dict):
        for key, kind in _SOURCE_KINDS:
            value = src.get(key)
            if isinstance(value, str):
                return kind, value
    return "unknown", None


def _edge(d: Any, group: str | None, cache: dict | None = None) -> Dependency | None:
    if not isinstance(d, dict):
        return None
    name = d.get("name")
    if not isinstance(name, str):
        return None
    if cache is not None and len(d) <= 2:
        # The common shapes, `{ name }` and `{ name, marker }`: one object per distinct edge.
        key = (name, d.get("marker"), group)
        dep = cache.get(key)
        if dep is None and (len(d) == 1 or isinstance(key[1], str)):
            dep = cache[key] = Dependency(canonical_name(name), key[1], group=group)
        if dep is not None:
            return dep
    extras = d.get("extra") or d.get("extras") or ()
    src = d.get("source")
    return Dependency(
        name=canonical_name(name),
        marker=d.get("marker") if isinstance(d.get("marker"), str) else None,
        extras=tuple(e for e in extras if isinstance(e, str)) if isinstance(extras, list) else (),
        version=d.get("version") if isinstance(d.get("version"), str) else None,
        specifier=d.get("specifier") if isinstance(d.get("specifier"), str) else None,
        source=_requirement_source(d) if src is None else _source(src)[1],
        group=group,
    )


def _requirement_source(d: dict) -> str | None:
    """Where a declared requirement points (uv's `[tool.uv.sources]` lowered into the lock)."""
    for key in ("index", "url", "path", "directory", "editable", "git"):
        value = d.get(key)
        if isinstance(value, str):
            return f"{key}:{value}" if key == "index" else value
    return None


def _edges(table: Any, group_prefix: str | None, cache: dict | None = None) -> list[Dependency]:
    out: list[Dependency] = []
    if group_prefix is None:
        for d in table if isinstance(table, list) else ():
            e = _edge(d, None, cache)
            if e:
                out.append(e)
        return out
    if isinstance(table, dict):
        for group, deps in table.items():
            for d in deps if isinstance(deps, list) else ():
                e = _edge(d, f"{group_prefix}:{canonical_name(str(group))}", cache)
                if e:
                    out.append(e)
    return out


def _file_ref(entry: Any) -> str | None:
    if isinstance(entry, dict):
        ref = entry.get("url") or entry.get("path") or entry.get("filename")
        return ref if isinstance(ref, str) else None
    return None


def _list(value: Any) -> list:
    """A TOML array, or nothing (`wheels = 1` is not a list of wheels)."""
    return value if isinstance(value, list) else []


def _hash_count(pkg: dict) -> int:
    n = 0
    sdist = pkg.get("sdist")
    if isinstance(sdist, dict) and sdist.get("hash"):
        n += 1
    for w in _list(pkg.get("wheels")):
        if isinstance(w, dict) and w.get("hash"):
            n += 1
    return n


def _joined_markers(markers: Any) -> str | None:
    if not isinstance(markers, list) or not markers:
        return None
    ms = [m for m in markers if isinstance(m, str)]
    if len(ms) == 1:
        return ms[0]
    return " or ".join(f"({m})" for m in ms) or None


def dependency_string(d: Dependency) -> str:
    """A declared requirement back in PEP 508-like form: `torch[x]==2.11.0+cu130 ; marker`."""
    s = d.name + (f"[{','.join(d.extras)}]" if d.extras else "") + (d.specifier or "")
    if d.source and not d.source.startswith("index:"):
        s += f" @ {d.source}"
    if d.marker:
        s += f" ; {d.marker}"
    return s


def _manifest_options(text: str, manifest: Any) -> list[Option]:
    if not isinstance(manifest, dict):
        return []
    m = re.search(r"^\[manifest\][ \t]*$", text, re.M)
    start = m.end() if m else len(text)
    nxt = re.search(r"^\[", text[start:], re.M)
    block = text[start : start + nxt.start()] if nxt else text[start:]
    base = text.count("\n", 0, start) + 1  # line of the [manifest] header
    out: list[Option] = []
    for key in _MANIFEST_LISTS:
        entries = manifest.get(key)
        if not isinstance(entries, list):
            continue
        km = re.search(r"^" + re.escape(key) + r"[ \t]*=", block, re.M)
        key_ln = base + block.count("\n", 0, km.start()) if km else None
        elem_pos = km.end() if km else 0
        for entry in entries:
            e = _edge(entry, None)
            if e is None:
                continue
            ln = key_ln
            if km:
                em = re.compile(r'name[ \t]*=[ \t]*"' + re.escape(entry["name"]) + '"').search(block, elem_pos)
                if em:
                    ln = base + block.count("\n", 0, em.start())
                    elem_pos = em.end()
            out.append(Option(key.rstrip("s") if key != "excludes" else "exclude", dependency_string(e), ln))
    return out


def parse_uv_lock(path: str, text: str) -> Lockfile:
    doc = toml_loads(path, text)
    raw = doc.get("package", [])
    if "version" not in doc or not isinstance(raw, list):
        raise InputError(path, "not a uv.lock: no top-level `version` or `[[package]]` array", line=1)

    names = [p.get("name") if isinstance(p, dict) else None for p in raw]
    lines = assign_lines(table_lines(text, "package"), [n if isinstance(n, str) else "" for n in names])

    entries: list[tuple[dict, str, int | None, list[Dependency]]] = []
    # Parents by child name, and by (name, version) where the edge names the version
    # (uv does so when several entries of that name are locked, as in a fork).
    parents: dict[object, list[str]] = {}
    cache: dict = {}
    for pkg, raw_name, line in zip(raw, names, lines):
        if not isinstance(pkg, dict) or not isinstance(raw_name, str):
            raise InputError(path, "[[package]] table without a `name`", line=line)
        name = canonical_name(raw_name)
        deps = _edges(pkg.get("dependencies"), None, cache)
        if "optional-dependencies" in pkg or "dev-dependencies" in pkg:
            deps += _edges(pkg.get("optional-dependencies"), "extra", cache)
            deps += _edges(pkg.get("dev-dependencies"), "group", cache)
        for d in deps:
            lst = parents.setdefault((d.name, d.version) if d.version else d.name, [])
            if name not in lst:
                lst.append(name)
        entries.append((pkg, name, line, deps))

    packages: list[LockedPackage] = []
    for pkg, name, line, deps in entries:
        kind, where = _source(pkg.get("source"))
        sdist = pkg.get("sdist")
        meta = pkg.get("metadata")
        requires = _edges(meta.get("requires-dist"), None) if isinstance(meta, dict) else []
        packages.append(
            LockedPackage(
                name=name,
                version=str(pkg.get("version", "")),
                line=line,
                index=where if kind == "registry" else None,
                source=kind,
                url=where if kind != "registry" else None,
                wheels=tuple(r for r in map(_file_ref, _list(pkg.get("wheels"))) if r),
                sdist=_file_ref(sdist),
                dependencies=tuple(deps),
                pulled_in_by=tuple(dict.fromkeys(
                    parents.get(name, []) + parents.get((name, str(pkg.get("version", ""))), [])
                )),
                markers=_joined_markers(pkg.get("resolution-markers")),
                hashes=_hash_count(pkg),
                requires_dist=tuple(requires),
            )
        )

    options: list[Option] = []
    for key in ("version", "revision", "requires-python", "resolution-markers", "supported-markers", "required-markers"):
        if key in doc:
            value = doc[key]
            options.append(Option(key, " || ".join(map(str, value)) if isinstance(value, list) else str(value),
                                  key_line(text, key)))
    opts = doc.get("options")
    if isinstance(opts, dict):
        for key, value in opts.items():
            options.append(Option(f"options.{key}", str(value), _line_in_table(text, "options", key)))
    options += _manifest_options(text, doc.get("manifest"))

    manifest = doc.get("manifest")
    members = manifest.get("members") if isinstance(manifest, dict) else None
    return Lockfile(
        path=path,
        format="uv.lock",
        members=tuple(canonical_name(m) for m in members if isinstance(m, str)) if isinstance(members, list) else (),
        conflicts=_conflicts(doc.get("conflicts")),
        packages=tuple(packages),
        graph=True,
        tool="uv lock",
        requires_python=doc.get("requires-python") if isinstance(doc.get("requires-python"), str) else None,
        options=tuple(options),
    )


def _conflicts(raw: Any) -> tuple[tuple[tuple[str, str, str], ...], ...]:
    out = []
    for group in raw if isinstance(raw, list) else ():
        items = []
        for item in group if isinstance(group, list) else ():
            if not isinstance(item, dict) or not isinstance(item.get("package"), str):
                continue
            for kind in ("extra", "group"):
                if isinstance(item.get(kind), str):
                    items.append((canonical_name(item["package"]), kind, canonical_name(item[kind])))
        if len(items) > 1:
            out.append(tuple(items))
    return tuple(out)


def _line_in_table(text: str, table: str, key: str) -> int | None:
    m = re.search(r"^\[" + re.escape(table) + r"\][ \t]*$", text, re.M)
    if not m:
        return None
    k = re.compile(r"^" + re.escape(key) + r"[ \t]*=", re.M).search(text, m.end())
    return text.count("\n", 0, k.start()) + 1 if k else None
