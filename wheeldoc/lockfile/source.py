"""Resolved lockfiles read into frozen data: uv.lock, pylock.toml (PEP 751), requirements.txt.

`load_lockfile(path)` detects the format from the name and the first bytes, and returns a
`Lockfile` whose packages carry 1-based line numbers, the index each came from where the
format records it, the wheels it names, its dependencies and what pulled it in.
`find_lockfiles(directory)` lists the lockfiles a directory holds.

The parsers live in `lock_uv.py`, `lock_pylock.py` and `lock_requirements.py`; they share
the dataclasses below. Bad input raises `InputError` (with a line where there is one), and a
file over `MAX_LOCK_BYTES` raises `LimitExceeded` before it is read.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.core.files import open_regular

if TYPE_CHECKING:
    from pathlib import Path

Format = Literal["uv.lock", "pylock", "requirements"]
SourceKind = Literal["registry", "url", "path", "directory", "git", "editable", "virtual", "unknown"]

# The largest real uv.lock files seen are a few MB; tomli needs ~0.07 s per MB.
MAX_LOCK_BYTES = 16 * 1024 * 1024

_CANONICAL = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")


_canonical_cache: dict[str, str] = {}


def canonical_name(name: str) -> str:
    """`packaging.utils.canonicalize_name`, skipping its (slow, ~30 ms) import for names
    that are already canonical, as every name in a uv.lock is."""
    got = _canonical_cache.get(name)
    if got is None:
        if _CANONICAL.match(name):
            got = name  # a fixed point of canonicalize_name
        else:
            from packaging.utils import canonicalize_name

            got = str(canonicalize_name(name))
        if len(_canonical_cache) < 100_000:
            _canonical_cache[name] = got
    return got


@dataclass(frozen=True)
class Dependency:
    """One edge of the dependency graph, or one requirement a package declares.

    `version` is set where the lock disambiguates between several locked entries of the
    same name (uv.lock forks). `specifier` and `source` are set for requirements as declared
    (uv.lock `[package.metadata] requires-dist`): e.g. `specifier=">=2.10"`,
    `source="index:pytorch-cu130"`. `group` names the extra (`extra:cuda`) or dependency
    group (`group:dev`) the edge belongs to; None for the main dependencies.
    """

    name: str
    marker: str | None = None
    extras: tuple[str, ...] = ()
    version: str | None = None
    specifier: str | None = None
    source: str | None = None
    group: str | None = None


@dataclass(frozen=True)
class LockedPackage:
    """One resolved package entry.

    `version` is the version string as locked (`"2.11.0+cu130"`; empty when the lock has
    none, e.g. an unpinned requirement or a virtual workspace member). `index` is the index
    URL (or path) the lock records for this entry: uv.lock `source.registry`, pylock
    `index`, uv's `# from URL` annotation in requirements files; None where the file does not
    record it per package (pip-compile output, pip lock's pylock; see `Lockfile.index_urls`).
    `url` is the direct URL, path or git reference for non-registry sources.
    `pulled_in_by` holds parent names (canonical) or requirement sources as given
    (`-r requirements.in`, `-c constraints.txt`). `markers` is the environment marker of
    the requirement line (requirements, pylock) or the fork markers of the entry (uv.lock
    `resolution-markers`, joined with ` or `).
    """

    name: str
    version: str
    line: int | None
    index: str | None = None
    source: SourceKind = "registry"
    url: str | None = None
    wheels: tuple[str, ...] = ()
    sdist: str | None = None
    dependencies: tuple[Dependency, ...] = ()
    pulled_in_by: tuple[str, ...] = ()
    markers: str | None = None
    hashes: int = 0
    requires_dist: tuple[Dependency, ...] = ()
    file: str | None = None  # the file that holds `line` when not the lock itself (`-r base.txt`)

    @property
    def local(self) -> str | None:
        """The local version label (`cu130` for `2.11.0+cu130`), without parsing the version."""
        _, plus, local = self.version.partition("+")
        return local if plus else None

    @property
    def public_version(self) -> str:
        return self.version.partition("+")[0]


@dataclass(frozen=True)
class Option:
    """A lock-wide option with its line: `--index-url URL` in requirements files,
    `[manifest] overrides` entries or `[options]` keys in uv.lock, pylock top-level keys."""

    name: str
    value: str
    line: int | None = None
    file: str | None = None  # when not the lock itself (an included requirements file)


@dataclass(frozen=True)
class Lockfile:
    path: str
    format: Format
    packages: tuple[LockedPackage, ...]
    index_urls: tuple[str, ...] = ()
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    tool: str | None = None
    """What wrote the file: "pip-compile", "uv pip compile", "uv export", "uv lock",
    "pip lock", or the raw `created-by` value of a pylock file; None when unknown."""
    tool_command: str | None = None
    """The command line recorded in the header comment, as written."""
    requires_python: str | None = None
    options: tuple[Option, ...] = ()
    graph: bool = False
    """Whether the file records the dependency graph (`dependencies` / `pulled_in_by`):
    always for uv.lock; for requirements files when they carry `# via` annotations; for
    pylock only when its packages list `dependencies` (neither `uv export` nor `pip lock`
    writes them). When False, an empty `dependencies` means "not recorded", not "none"."""
    members: tuple[str, ...] = ()
    """uv.lock: the workspace members (`[manifest] members`), canonical names; empty when the
    lock names none (a single project: its root is the `editable`/`virtual` entry at `.`)."""
    conflicts: tuple[tuple[tuple[str, str, str], ...], ...] = ()
    """uv.lock `conflicts`: each a set of (package, "extra" | "group", name) never installed together."""
    warnings: tuple[Option, ...] = ()
    """Problems that did not stop reading (e.g. `pylock-validation`: a spec violation
    reported by `packaging.pylock`), each with its line where known."""
    _by_name: dict[str, tuple[LockedPackage, ...]] = field(
        default=None, init=False, repr=False, compare=False, hash=False  # type: ignore[assignment]
    )

    def get(self, name: str) -> tuple[LockedPackage, ...]:
        """Every entry locked under `name` (any spelling); several where a uv.lock forks."""
        by_name = self._by_name
        if by_name is None:
            grouped: dict[str, list[LockedPackage]] = {}
            for p in self.packages:
                grouped.setdefault(p.name, []).append(p)
            by_name = {k: tuple(v) for k, v in grouped.items()}
            object.__setattr__(self, "_by_name", by_name)
        return by_name.get(canonical_name(name), ())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self.get(name))

    def option(self, name: str) -> tuple[Option, ...]:
        return tuple(o for o in self.options if o.name == name)

    @property
    def indexes_seen(self) -> tuple[str, ...]:
        """Distinct per-package index URLs, in order of first appearance."""
        return tuple(dict.fromkeys(p.index for p in self.packages if p.index))


# -- reading and detection --------------------------------------------------------------------


def read_text(path: str | os.PathLike[str], max_bytes: int = MAX_LOCK_BYTES) -> str:
    """The file's text, refusing oversized, binary or non-UTF-8 files with an `InputError`."""
    p = str(path)
    try:
        size = os.stat(p).st_size
    except OSError as e:
        raise InputError(p, f"cannot read: {e.strerror or e}") from None
    if size > max_bytes:
        raise LimitExceeded(
            p,
            f"lockfile is {size / 2**20:.1f} MiB, over wheeldoc's limit of "
            f"{max_bytes / 2**20:.0f} MiB",
        )
    try:
        with open_regular(p) as f:
            data = f.read(max_bytes + 1)
    except OSError as e:
        raise InputError(p, f"cannot read: {e.strerror or e}") from None
    return decode_text(p, data, max_bytes)


def decode_text(p: str, data: bytes, max_bytes: int = MAX_LOCK_BYTES) -> str:
    """A lockfile's bytes (a file's, or stdin's) as text, refusing oversized, binary or non-UTF-8 data."""
    if len(data) > max_bytes:
        raise LimitExceeded(p, f"lockfile is over wheeldoc's limit of {max_bytes / 2**20:.0f} MiB")
    nul = data.find(b"\0")
    if nul >= 0:
        raise InputError(p, "binary data, not a text lockfile", line=data.count(b"\n", 0, nul) + 1, offset=nul)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(
            p, f"not UTF-8 text: {e.reason}", line=data.count(b"\n", 0, e.start) + 1, offset=e.start
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


_PYLOCK_NAME = re.compile(r"pylock(?:\.[^.]+)?\.toml\Z")
_REQ_LOCK_NAME = re.compile(r"requirements[\w.-]*\.lock\Z")  # Rye: requirements(-dev).lock
_REQ_LINE = re.compile(r"^\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\]\s*)?(?:===?|@)", re.M)


def detect_format(path: str | os.PathLike[str], text: str) -> Format:
    """Format by name, then by content; `InputError` when it is none of the three."""
    name = os.path.basename(str(path))
    if name == "uv.lock":
        return "uv.lock"
    head = text[:4096]
    if _PYLOCK_NAME.match(name):
        if not re.search(r"^\s*(?:lock-version\s*=|\[)", head, re.M) and _REQ_LINE.search(head):
            return "requirements"  # a requirements file under PEP 751's name (an older `uv export -o pylock.toml`)
        return "pylock"
    if re.search(r"^lock-version\s*=", head, re.M):
        return "pylock"
    if re.search(r"^version\s*=\s*\d+\s*$", head, re.M) and (
        "[[package]]" in text or re.search(r"^requires-python\s*=", head, re.M)
    ):
        return "uv.lock"
    if name.endswith((".txt", ".in")) or _REQ_LOCK_NAME.match(name) or _REQ_LINE.search(head):
        return "requirements"
    raise InputError(
        str(path), "unknown lockfile format (expected uv.lock, pylock.toml or a requirements file)"
    )


def load_lockfile(path: str | os.PathLike[str], *, max_bytes: int = MAX_LOCK_BYTES,
                  data: bytes | None = None) -> Lockfile:
    """`data`: the content when it does not come from the file (stdin); the name still decides."""
    text = read_text(path, max_bytes) if data is None else decode_text(str(path), data, max_bytes)
    fmt = detect_format(path, text)
    return parse_lockfile(str(path), text, fmt)


def parse_lockfile(path: str, text: str, fmt: Format) -> Lockfile:
    if fmt == "uv.lock":
        from wheeldoc.lockfile.uv_lock import parse_uv_lock

        return parse_uv_lock(path, text)
    if fmt == "pylock":
        from wheeldoc.lockfile.pylock import parse_pylock

        return parse_pylock(path, text)
    from wheeldoc.lockfile.requirements import load_requirements

    return load_requirements(path, text)


_SKIP_DIRS = {".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox", "site-packages"}


def is_lockfile_name(name: str) -> bool:
    """A lockfile's name (or path relative to the project): the pre-commit hook's pattern."""
    from wheeldoc.core.names import is_lockfile_path

    return is_lockfile_path(name)


def find_lockfiles(directory: str | os.PathLike[str], *, recursive: bool = False) -> list[Path]:
    """Lockfiles in `directory`, sorted: uv.lock, pylock.toml, pylock.*.toml, *requirements*.txt,
    *constraints*.txt and Rye's requirements*.lock. With `recursive`, also below it (virtualenvs and VCS dirs skipped)."""
    from pathlib import Path

    root = Path(directory)
    if not root.is_dir():
        raise InputError(str(directory), "not a directory")
    found: list[Path] = []
    if recursive:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
            found += [Path(dirpath, f) for f in sorted(filenames)
                      if is_lockfile_name(f if rel == "." else f"{rel}/{f}")]
    else:
        found = sorted(p for p in root.iterdir() if p.is_file() and is_lockfile_name(p.name))
    return found


# -- helpers shared by the parsers --------------------------------------------------------


def toml_loads(path: str, text: str) -> dict:
    import tomli

    from wheeldoc.core.safeload import MAX_DEPTH, depth, load_toml

    try:
        doc = tomli.loads(text)
    except tomli.TOMLDecodeError as e:
        msg = getattr(e, "msg", None) or str(e).split(" (at ")[0]
        raise InputError(path, f"invalid TOML: {msg}", line=getattr(e, "lineno", None)) from None
    except (RecursionError, ValueError, MemoryError):  # nesting, or an integer of 4,300+ digits
        return load_toml(text, path)  # raises the InputError that names what went wrong
    if depth(doc) > MAX_DEPTH:
        raise InputError(path, f"TOML nests deeper than {MAX_DEPTH} levels (limit MAX_DEPTH)")
    return doc


_NAME_AFTER_HEADER = re.compile(
    r'[ \t]*(?:#[^\n]*)?\n(?:[ \t]*(?:#[^\n]*)?\n)*[ \t]*name[ \t]*=[ \t]*["\']([^"\'\n]*)["\']'
)


def table_lines(text: str, header: str) -> list[tuple[int, str | None]]:
    """(line, name) for each `[[header]]` table in order: the header's 1-based line and the
    value of the `name = "..."` key right after it (None if the table does not start so).

    `str.find` for the headers plus newline counting between them: ~0.5 ms per MB, ten
    times cheaper than a multiline regex scan; no TOML parsing.
    """
    needle = f"[[{header}]]"
    out: list[tuple[int, str | None]] = []
    line, last, pos = 1, 0, text.find(needle)
    while pos >= 0:
        if pos == 0 or text[pos - 1] == "\n":
            line += text.count("\n", last, pos)
            last = pos
            m = _NAME_AFTER_HEADER.match(text, pos + len(needle))
            out.append((line, m.group(1) if m else None))
        pos = text.find(needle, pos + len(needle))
    return out


def assign_lines(tables: list[tuple[int, str | None]], names: list[str]) -> list[int | None]:
    """Match parsed table names to `table_lines` output in order; None where they disagree."""
    if len(tables) == len(names):
        return [ln if (n is None or n == nm) else None for (ln, n), nm in zip(tables, names)]
    # Counts differ (a table header in an unusual form): match greedily by name.
    out: list[int | None] = []
    i = 0
    for nm in names:
        j = i
        while j < len(tables) and tables[j][1] != nm:
            j += 1
        if j < len(tables):
            out.append(tables[j][0])
            i = j + 1
        else:
            out.append(None)
    return out


def key_line(text: str, key: str) -> int | None:
    """1-based line of the first top-level `key =` in a TOML text."""
    m = re.search(r"^" + re.escape(key) + r"[ \t]*=", text, re.M)
    return text.count("\n", 0, m.start()) + 1 if m else None


_TOOL_PREFIXES = (
    ("uv pip compile", "uv pip compile"),
    ("uv export", "uv export"),
    ("pip-compile", "pip-compile"),
    ("pip lock", "pip lock"),
)


def header_tool(text: str) -> tuple[str | None, str | None]:
    """(tool, command) from the leading comment block that pip-compile and uv write:

        # This file was autogenerated by uv via the following command:
        #    uv pip compile requirements.in -o requirements.txt

    The command is the first comment line after the "autogenerated" line that looks like
    a command (pip-compile puts a "by the following command:" line and a blank `#` between).
    """
    seen_autogen = False
    tool = None
    for line in text[:8192].splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if not stripped.startswith("#"):
            break
        body = stripped[1:].strip()
        if "autogenerated by" in body:
            seen_autogen = True
            tool = "pip-compile" if "pip-compile" in body else ("uv" if " uv " in f" {body} " else None)
            continue
        if seen_autogen and body and not body.endswith(":"):
            for prefix, name in _TOOL_PREFIXES:
                if body.startswith(prefix):
                    return name, body
            return tool, body
    return tool, None
