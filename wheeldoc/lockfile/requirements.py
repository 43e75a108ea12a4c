"""Requirements files as pip-compile, `uv pip compile` and `uv export` write them.

Handles `\\` continuations (a package's line is the line where its requirement starts),
`--hash`, `-i/--index-url`, `--extra-index-url`, `-f/--find-links` and other options,
`# via` annotations (split style, single-line `# via x`, and `--annotation-style=line`),
uv's `# from URL` index annotations (`--emit-index-annotation`, the only per-package index
a requirements file can carry),
environment markers, direct URLs (`name @ https://...whl`), bare wheel paths and `-e`.
The requirement itself is parsed by `packaging.requirements.Requirement`.
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlsplit

from wheeldoc.core.errors import InputError
from wheeldoc.lockfile.source import (
    Dependency,
    LockedPackage,
    Lockfile,
    Option,
    SourceKind,
    canonical_name,
    header_tool,
)

_OPT_TAKES_VALUE = {
    "-i": "index-url", "--index-url": "index-url",
    "--extra-index-url": "extra-index-url",
    "-f": "find-links", "--find-links": "find-links",
    "-c": "constraint", "--constraint": "constraint",
    "-r": "requirement", "--requirement": "requirement",
    "-e": "editable", "--editable": "editable",
    "--trusted-host": "trusted-host",
    "--no-binary": "no-binary", "--only-binary": "only-binary",
}
_OPT_FLAGS = {"--no-index": "no-index", "--pre": "pre", "--prefer-binary": "prefer-binary",
              "--require-hashes": "require-hashes"}
_OPTION_START = re.compile(r"(?:^|\s)(--?[A-Za-z][\w-]*)")
_NAMED_URL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*@")
_HASH = re.compile(r"--hash[= ]\S+")
_ARCHIVE = (".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz", ".tar")


def _strip_comment(line: str) -> tuple[str, str | None]:
    """Split `text  # comment` the way pip does: `#` at the start or after whitespace."""
    if line.lstrip().startswith("#"):
        return "", line.lstrip()[1:].rstrip()  # leading spaces kept: they mark `# via` items
    m = re.search(r"\s#", line)
    if m:
        return line[: m.start()], line[m.end():].strip()
    return line, None


def _via_entries(text: str) -> list[str]:
    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if part.startswith("-"):
            out.append(part)  # `-r requirements.in`, `-c constraints.txt`: kept as given
        else:
            m = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", part)
            out.append(canonical_name(m.group(0)) if m else part)
    return out


def _is_path_or_url(s: str) -> bool:
    return (
        s.startswith((".", "/", "~", "file:", "http://", "https://", "git+", "hg+", "svn+", "bzr+"))
        or s.lower().endswith(_ARCHIVE)
        or bool(re.match(r"[A-Za-z]:[\\/]", s))
    )


def _kind_of(url: str, editable: bool) -> SourceKind:
    if editable:
        return "editable"
    if url.startswith(("git+", "hg+", "svn+", "bzr+")):
        return "git"
    if url.startswith(("http://", "https://")):
        return "url"
    path = urlsplit(url).path if url.startswith("file:") else url
    return "path" if path.lower().endswith(_ARCHIVE) else "directory"


def _name_version_from_url(url: str) -> tuple[str | None, str]:
    """Name and version from a wheel or sdist file name in a URL or path, else `#egg=`."""
    base = unquote(os.path.basename(urlsplit(url).path if "://" in url or url.startswith("file:") else url))
    if base.endswith(".whl"):
        from packaging.utils import InvalidWheelFilename, parse_wheel_filename

        try:
            name, ver, _, _ = parse_wheel_filename(base)
            return str(name), str(ver)
        except InvalidWheelFilename:
            return None, ""
    for ext in _ARCHIVE[1:]:
        if base.endswith(ext):
            from packaging.utils import InvalidSdistFilename, parse_sdist_filename

            try:
                name, ver = parse_sdist_filename(base)
                return str(name), str(ver)
            except InvalidSdistFilename:
                return None, ""
    m = re.search(r"[#&]egg=([A-Za-z0-9._-]+)", url)
    if m:
        return canonical_name(m.group(1)), ""
    return None, ""


class _Entry:
    __slots__ = ("name", "version", "line", "kind", "url", "markers", "hashes", "via", "wheels", "index")

    def __init__(self, name: str, version: str, line: int, kind: SourceKind, url: str | None,
                 markers: str | None, hashes: int, wheels: tuple[str, ...]) -> None:
        self.name, self.version, self.line, self.kind = name, version, line, kind
        self.url, self.markers, self.hashes, self.wheels = url, markers, hashes, wheels
        self.via: list[str] = []
        self.index: str | None = None  # from uv's `# from URL` (--emit-index-annotation)


def _pinned_version(spec) -> str:
    specs = list(spec)
    if len(specs) == 1 and specs[0].operator in ("==", "===") and "*" not in specs[0].version:
        return specs[0].version
    return ""


def _parse_requirement(path: str, req_text: str, line: int, hashes: int, editable: bool) -> _Entry:
    try:
        return _requirement(path, req_text, line, hashes, editable)
    except ValueError as e:  # urllib refuses some URLs ("Invalid IPv6 URL" for `http://[`)
        raise InputError(path, f"invalid URL in {req_text.strip()!r}: {e}", line=line) from None


def _requirement(path: str, req_text: str, line: int, hashes: int, editable: bool) -> _Entry:
    req_text = req_text.strip()
    named_url = _NAMED_URL.match(req_text)
    if editable or (not named_url and _is_path_or_url(req_text.split(";")[0].strip())):
        target = req_text.split(";")[0].strip() if not editable else req_text
        marker = req_text.split(";", 1)[1].strip() if ";" in req_text and not editable else None
        name, version = _name_version_from_url(target)
        if name is None:
            base = os.path.basename(urlsplit(target).path.rstrip("/") if "://" in target else target.rstrip("/\\"))
            name = canonical_name(re.sub(r"[^A-Za-z0-9._-]", "-", base) or "unknown")
        kind = _kind_of(target, editable)
        wheels = (target,) if target.lower().endswith(".whl") else ()
        return _Entry(canonical_name(name), version, line, kind, target, marker, hashes, wheels)

    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(req_text)
    except InvalidRequirement as e:
        first = str(e).splitlines()[0] if str(e) else "invalid requirement"
        raise InputError(path, f"invalid requirement {req_text!r}: {first}", line=line) from None
    name = canonical_name(req.name)
    markers = str(req.marker) if req.marker else None
    if req.url:
        _, version = _name_version_from_url(req.url)
        wheels = (req.url,) if urlsplit(req.url).path.lower().endswith(".whl") else ()
        return _Entry(name, version, line, _kind_of(req.url, False), req.url, markers, hashes, wheels)
    return _Entry(name, _pinned_version(req.specifier), line, "registry", None, markers, hashes, ())


def _logical_lines(text: str):
    """(start line, joined text, trailing comment) for each logical line; comments separately."""
    # Split on "\n" only: str.splitlines() also breaks on \x0b, \x1c, \u2028..., which editors
    # do not count as lines.
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in text.split("\n")]
    i, n = 0, len(lines)
    while i < n:
        start = i + 1
        body, comment = _strip_comment(lines[i])
        parts = []
        while body.rstrip().endswith("\\") and i + 1 < n:
            parts.append(body.rstrip()[:-1])
            i += 1
            body, comment = _strip_comment(lines[i])
        parts.append(body)
        i += 1
        yield start, " ".join(p.strip() for p in parts).strip(), comment


MAX_SHLEX = 64 * 1024  # shlex reads a character at a time in Python: ~1 s per MB


def _option_tokens(s: str) -> list[str]:
    import shlex

    if len(s) > MAX_SHLEX or not any(c in s for c in "'\"\\#"):  # nothing for shlex to unquote
        return s.split()
    try:
        return shlex.split(s, posix=True)
    except ValueError:
        return s.split()


def parse_requirements(path: str, text: str) -> Lockfile:
    entries: list[_Entry] = []
    options: list[Option] = []
    tool, command = header_tool(text)
    current: _Entry | None = None
    in_via = False

    for line, body, comment in _logical_lines(text):
        if not body:
            if comment is None:
                continue
            indented = comment.startswith("  ")
            comment = comment.strip()
            # A comment line: an annotation of the package above (the header is read apart).
            if current is None:
                continue
            if comment.startswith("from ") and " " not in comment[5:].strip():
                current.index = comment[5:].strip()
                in_via = False
            elif comment == "via":
                in_via = True
            elif comment.startswith("via "):
                current.via += _via_entries(comment[4:])
                in_via = False
            elif in_via and comment and indented:
                current.via += _via_entries(comment)
            else:
                in_via = False
            continue

        in_via = False
        if body.startswith("-") and not body.startswith("--hash"):
            tokens = _option_tokens(body)
            opt, value = tokens[0], None
            if "=" in opt and opt.startswith("--"):
                opt, value = opt.split("=", 1)
            elif len(tokens) > 1:
                value = " ".join(tokens[1:])
            elif len(opt) > 2 and opt[:2] in ("-i", "-f", "-c", "-r", "-e") and not opt.startswith("--"):
                opt, value = opt[:2], opt[2:]
            if opt in _OPT_TAKES_VALUE:
                key = _OPT_TAKES_VALUE[opt]
                if key == "editable":
                    hashes = len(_HASH.findall(body))
                    current = _parse_requirement(path, _HASH.sub("", value or "").strip(), line, hashes, True)
                    entries.append(current)
                    continue
                options.append(Option(key, (value or "").strip(), line))
            elif opt in _OPT_FLAGS:
                options.append(Option(_OPT_FLAGS[opt], "", line))
            else:
                options.append(Option(opt.lstrip("-"), (value or "").strip(), line))
            current = None
            continue

        m = _OPTION_START.search(body)
        # An option on the requirement line (`--hash=...`); a marker never holds ` --x`.
        req_text, opt_text = (body[: m.start()], body[m.start():]) if m else (body, "")
        current = _parse_requirement(path, req_text, line, len(_HASH.findall(opt_text)), False)
        entries.append(current)
        if comment and comment.startswith("via "):  # --annotation-style=line
            current.via += _via_entries(comment[4:])

    # Invert the `# via` annotations into dependency edges between locked packages.
    present = {e.name for e in entries}
    children: dict[str, list[str]] = {}
    for e in entries:
        for parent in e.via:
            if parent in present and e.name not in children.setdefault(parent, []):
                children[parent].append(e.name)

    packages = tuple(
        LockedPackage(
            name=e.name,
            version=e.version,
            line=e.line,
            index=e.index,
            source=e.kind,
            url=e.url,
            wheels=e.wheels,
            dependencies=tuple(Dependency(c) for c in children.get(e.name, ())),
            pulled_in_by=tuple(dict.fromkeys(e.via)),
            markers=e.markers,
            hashes=e.hashes,
        )
        for e in entries
    )
    return Lockfile(
        path=path,
        format="requirements",
        packages=packages,
        graph=any(e.via for e in entries),
        index_urls=tuple(o.value for o in options if o.name == "index-url"),
        extra_index_urls=tuple(o.value for o in options if o.name == "extra-index-url"),
        find_links=tuple(o.value for o in options if o.name == "find-links"),
        tool=tool,
        tool_command=command,
        options=tuple(options),
    )


# -- `-r` / `-c` includes ------------------------------------------------------------------------
MAX_INCLUDE_DEPTH = 5  # base.txt -> common.txt -> … ; pip has no limit, real projects use 1-2
MAX_INCLUDED_FILES = 32
INCLUDE_SKIPPED = "include-skipped"  # a `warnings` entry: an include that was not followed, and why


def project_root(path: str) -> str:
    """The nearest folder above `path` holding .git or pyproject.toml (at most 32 up), else
    the file's own folder: includes are followed inside it only."""
    here = os.path.dirname(os.path.abspath(path))
    d = here
    for _ in range(32):
        if os.path.exists(os.path.join(d, ".git")) or os.path.isfile(os.path.join(d, "pyproject.toml")):
            return os.path.realpath(d)
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return os.path.realpath(here)


def load_requirements(path: str, text: str) -> Lockfile:
    """A requirements file with its `-r` / `-c` includes followed (pip's semantics: relative to
    the including file), inside the project, bounded in depth and count. Packages from an
    included file keep their own file and line; a constraint pins a requirement left unpinned.
    An include that is not followed (a URL, outside the project, missing, over a limit, a cycle)
    becomes an `include-skipped` warning with the including file and line."""
    top = parse_requirements(path, text)
    if not any(o.name in ("requirement", "constraint") for o in top.options):
        return top
    from dataclasses import replace

    from wheeldoc.lockfile.source import read_text

    root = project_root(path)
    seen = {os.path.realpath(path)}
    required: list[LockedPackage] = list(top.packages)
    constraints: list[LockedPackage] = []
    indexes = {"index-url": list(top.index_urls), "extra-index-url": list(top.extra_index_urls),
               "find-links": list(top.find_links)}
    warnings: list[Option] = []
    files = 0

    def skip(where: str, line: int | None, why: str) -> None:
        from wheeldoc.core.errors import clip

        warnings.append(Option(INCLUDE_SKIPPED, clip(why), line, None if where == path else where))

    def follow(lock: Lockfile, where: str, depth: int, as_constraint: bool) -> None:
        nonlocal files
        for opt in lock.options:
            if opt.name not in ("requirement", "constraint"):
                continue
            flag = "-r" if opt.name == "requirement" else "-c"
            target = opt.value
            if not target or "://" in target:
                skip(where, opt.line, f"{flag} {target}: not followed (only files inside the project are)")
                continue
            full = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(where)), target))
            if os.path.commonpath([full, root]) != root:
                skip(where, opt.line, f"{flag} {target}: not followed (outside the project folder {root})")
                continue
            if full in seen:
                continue  # already read (a cycle, or a file included twice)
            if depth >= MAX_INCLUDE_DEPTH or files >= MAX_INCLUDED_FILES:
                skip(where, opt.line, f"{flag} {target}: not followed (more than {MAX_INCLUDE_DEPTH} levels "
                                      f"or {MAX_INCLUDED_FILES} files of includes)")
                continue
            seen.add(full)
            files += 1
            shown = os.path.normpath(os.path.join(os.path.dirname(where), target))
            try:
                inner = parse_requirements(shown, read_text(full))
            except InputError as e:
                skip(where, opt.line, f"{flag} {target}: not read: {e.message}")
                continue
            constraint = as_constraint or opt.name == "constraint"
            (constraints if constraint else required).extend(replace(p, file=shown) for p in inner.packages)
            if not constraint:
                for key, values in (("index-url", inner.index_urls), ("extra-index-url", inner.extra_index_urls),
                                    ("find-links", inner.find_links)):
                    indexes[key] += [v for v in values if v not in indexes[key]]
            follow(inner, shown, depth + 1, constraint)

    follow(top, path, 0, False)
    merged_list = list(top.packages)  # the file's own entries stay as written (marker forks too)
    where = {(p.name, p.markers): i for i, p in enumerate(merged_list)}
    for p in required[len(top.packages):]:  # an included entry adds a name, or pins an unpinned one
        i = where.get((p.name, p.markers))
        if i is None:
            where[(p.name, p.markers)] = len(merged_list)
            merged_list.append(p)
        elif not merged_list[i].version and p.version:
            merged_list[i] = p
    for c in constraints:  # a constraint pins what a requirement leaves open; it adds nothing
        for i, p in enumerate(merged_list):
            if p.name == c.name and not p.version and c.version:
                merged_list[i] = replace(c, markers=p.markers, pulled_in_by=p.pulled_in_by or c.pulled_in_by)
    merged = tuple(merged_list)
    return replace(top, packages=merged, index_urls=tuple(indexes["index-url"]),
                   extra_index_urls=tuple(indexes["extra-index-url"]), find_links=tuple(indexes["find-links"]),
                   warnings=top.warnings + tuple(warnings))
