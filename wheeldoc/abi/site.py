"""A virtual site-packages: the shared objects of several sources at the paths they install to.

The extension's wheel, torch's wheel and the NVIDIA CUDA wheels all unpack into one
site-packages, so `$ORIGIN/../../nvidia/cu13/lib` from `torch/lib/libc10_cuda.so` names
`nvidia/cu13/lib` of another wheel. `Site` maps every shared object to the source and member
it comes from, without extracting anything, and reads ELF facts on demand through
`read_elf_member` (cached by RECORD sha256); `prefetch` starts those reads on a few threads
(inflating releases the GIL, so torch's two big libraries inflate side by side). A CUDA library known only from wheeldoc's table
(its wheel was not available) is a placeholder: present at its path, with no symbol table.
"""

from __future__ import annotations

import os
import posixpath
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wheeldoc.core.errors import InputError
from wheeldoc.core.priority import lower_this_thread

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

    from wheeldoc.core.cache import Cache
    from wheeldoc.binary.elf import ElfInfo, SymbolVersion
    from wheeldoc.binary.members import MemberSource

Exports = dict  # name -> tuple[SymbolVersion | None, ...]
# A file ld.so could load by name: `x.so`, `libz.so.1`, `libcrypto-a324fe28.so.1.1.1k` (OpenSSL's
# versions end in a letter; wheel.shared_objects() keeps numeric suffixes only).
_LIBRARY_NAME = re.compile(r"(^|/)[^/]+\.so(\.[0-9A-Za-z_]+)*$")


@dataclass(frozen=True)
class Entry:
    """One shared object of the site."""

    path: str  # site-packages-relative, `/`-separated, normalized
    origin: str  # "extension", "torch" or "cuda"
    package: str  # the distribution it belongs to (for messages)
    source: MemberSource | None  # None: a placeholder known from the CUDA table only
    member: str | None

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def placeholder(self) -> bool:
        return self.source is None


def _libraries(source: MemberSource) -> list:
    """The source's members ld.so could load (kept on the source: range mode asks per release)."""
    found = getattr(source, "_wheeldoc_libraries", None)
    if found is None or found[0] is not source.members:
        found = (source.members, [m for m in source.members if _LIBRARY_NAME.search(m.name)])
        try:
            source._wheeldoc_libraries = found  # type: ignore[attr-defined]
        except AttributeError:
            return found[1]
    return found[1]


def read_ahead(source: MemberSource, cache: Cache | None) -> None:
    """Start reading the ELF facts of every library `source` ships now, the largest first: a
    wheel's largest library, when it is deflated and big, in a forked child (binary/forked.py: it
    inflates at full speed while this process builds the torch side), the others on the reader
    threads.
    A `Site` holding the source takes the reads over (`prefetch`, `elf`)."""
    from wheeldoc.binary.elf import was_read
    from wheeldoc.binary.forked import fork_read

    started = _started(source)
    if started is None:
        return
    libraries = sorted(_libraries(source), key=lambda m: m.size or 0, reverse=True)
    big = [m for m in libraries[:MAX_CHILDREN] if m.compression == "deflated" and (m.size or 0) >= FORK_MIN
           and getattr(source, "stream", None) is not None]
    for m in big:  # forked first: no reader thread exists yet; a member read before is hashed, not inflated
        if m.name in started or (cache is not None and was_read(cache, m)):
            continue
        child = fork_read(source, m.name, cache)
        if child is not None:
            started[m.name] = _Forked(child, source, m.name, cache)
    rest = [m for m in libraries if m.name not in started]
    if rest and not _SWITCH:
        _SWITCH.append(sys.getswitchinterval())  # given back by shutdown_readers
        sys.setswitchinterval(min(_SWITCH[0], SWITCH_INTERVAL))
    for m in rest:
        started[m.name] = _executor().submit(_read_member, source, m.name, cache)


# Only the largest member is forked: it is the critical path (vLLM's FA2 library, 293 MB
# inflated, its dynamic table at 99 %), and a child costs ~25 ms of CPU (the pages of this process
# it touches are copied). The others inflate on the reader threads at a lower priority; a Python
# thread gives them the GIL back sooner with a shorter switch interval (Python's default, 5 ms,
# makes a reader wait that long after each piece: 15 runs, vLLM 0.33.0 against the index: one
# child 1.29 s median, four children 1.30 s, none 1.32 s, before any of this 1.43 s).
FORK_MIN = 64 << 20
MAX_CHILDREN = 1
SWITCH_INTERVAL = 0.0005


class _Forked:
    """A forked read seen as a Future; a child that failed is read again here (same errors)."""

    def __init__(self, child, source: MemberSource, member: str, cache: Cache | None) -> None:
        self.child, self.source, self.member, self.cache = child, source, member, cache
        self._cancelled = False

    def result(self):
        info = self.child.result()
        return info if info is not None else _read_member(self.source, self.member, self.cache)

    def cancel(self) -> bool:
        self.child.cancel()
        self._cancelled = True
        return True

    def cancelled(self) -> bool:
        return self._cancelled


def cancel_read_ahead(source: MemberSource) -> None:
    """Drop the reads `read_ahead` queued for `source` and wait for those running (it is closing)."""
    started = getattr(source, "_wheeldoc_ahead", None) or {}
    _cancel_and_wait(list(started.values()))
    started.clear()


def _cancel_and_wait(futures: list) -> None:
    """Cancel the reads not started and wait for the running ones (their results unused)."""
    for future in futures:
        future.cancel()
    for future in futures:
        if not future.cancelled():
            try:
                future.result()
            except Exception:  # noqa: BLE001 (nobody asked for it)
                pass


def _started(source: MemberSource) -> dict[str, Future] | None:
    found = getattr(source, "_wheeldoc_ahead", None)
    if found is None:
        found = {}
        try:
            source._wheeldoc_ahead = found  # type: ignore[attr-defined]
        except AttributeError:
            return None
    return found


_POOL: list[ThreadPoolExecutor] = []
_SWITCH: list[float] = []  # the switch interval before read_ahead shortened it


def _executor() -> ThreadPoolExecutor:
    """The reader threads, one set per process (as many as cores, at most 4)."""
    if not _POOL:
        from concurrent.futures import ThreadPoolExecutor  # imported once a thread is needed (after any fork)

        _POOL.append(ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1), thread_name_prefix="wheeldoc-elf",
                                        initializer=lower_this_thread))
    return _POOL[0]


def shutdown_readers() -> None:
    """End the reader threads once a command is done with them (the next command, or a caller
    embedding wheeldoc, then starts from a process with one thread: forking is allowed again)."""
    if _POOL:
        _POOL.pop().shutdown(wait=True, cancel_futures=True)
    if _SWITCH:
        sys.setswitchinterval(_SWITCH.pop())


def _read_member(source: MemberSource, member: str, cache: Cache | None):
    from wheeldoc.binary.elf import read_elf_member

    return read_elf_member(source, member, cache=cache)


def looks_like_library(name: str) -> bool:
    """A member name ld.so could load (`x.so`, `libz.so.1`, `libcrypto-….so.1.1.1k`)."""
    return bool(_LIBRARY_NAME.search(name))


def normalize(path: str) -> str | None:
    """A site-relative path, or None when it leaves the site (`../x`) or is absolute."""
    if path.startswith("/"):
        return None
    norm = posixpath.normpath(path)
    if norm == ".." or norm.startswith("../"):
        return None
    return "" if norm == "." else norm


class Site:
    def __init__(self, cache: Cache | None = None) -> None:
        self.cache = cache
        self.files: dict[str, Entry] = {}
        self.unreadable: dict[str, InputError] = {}
        self._elf: dict[str, ElfInfo] = {}
        self._exports: dict[str, Exports] = {}
        self.read_members: list[tuple[str, str]] = []  # (package, member) actually parsed, in order
        self._futures: dict[str, Future] = {}

    def prefetch(self, entries) -> None:
        """Start reading these entries' ELF facts in the background (`elf` waits for them), the
        largest first: the few big members then inflate side by side instead of one last, alone."""
        def size(entry: Entry) -> int:
            lookup = getattr(entry.source, "member", None)
            m = lookup(entry.member) if lookup is not None and entry.member else None
            return getattr(m, "size", None) or 0

        for entry in sorted(entries, key=size, reverse=True):
            if entry.placeholder or entry.path in self._elf or entry.path in self._futures:
                continue
            self._futures[entry.path] = self._ahead(entry) or _executor().submit(self._read, entry)

    def close(self) -> None:
        """Cancel the reads not started and wait for the running ones."""
        futures, self._futures = list(self._futures.values()), {}
        _cancel_and_wait(futures)

    def _ahead(self, entry: Entry) -> Future | None:
        """The read `read_ahead` started for this entry, if any (taken over: asked once)."""
        started = getattr(entry.source, "_wheeldoc_ahead", None)
        future = started.pop(entry.member, None) if started else None
        return None if future is None or future.cancelled() else future

    def _read(self, entry: Entry):
        return _read_member(entry.source, entry.member, self.cache)

    def add_source(self, source: MemberSource, origin: str, package: str, prefix: str = "") -> list[Entry]:
        added = []
        for m in _libraries(source):
            path = normalize(prefix + m.name)
            if path is None or path in self.files:
                continue  # the first source to install a path wins (like an installer would)
            kind = "cuda" if origin == "torch" and path.startswith("nvidia/") else origin  # a whole site
            entry = Entry(path, kind, package, source, m.name)
            self.files[path] = entry
            added.append(entry)
        return added

    def add_placeholder(self, path: str, package: str) -> Entry | None:
        norm = normalize(path)
        if norm is None or norm in self.files:
            return None
        entry = Entry(norm, "cuda", package, None, None)
        self.files[norm] = entry
        return entry

    def find(self, directory: str, soname: str) -> Entry | None:
        path = normalize(posixpath.join(directory, soname) if directory else soname)
        return self.files.get(path) if path is not None else None

    def elf(self, entry: Entry) -> ElfInfo | None:
        """The entry's ELF facts; None for placeholders and unreadable files (see `unreadable`)."""
        if entry.placeholder or entry.path in self.unreadable:
            return None
        info = self._elf.get(entry.path)
        if info is None:
            future = self._futures.pop(entry.path, None) or self._ahead(entry)
            try:
                info = future.result() if future is not None else self._read(entry)
            except InputError as e:
                self.unreadable[entry.path] = e
                return None
            self._elf[entry.path] = info
            self.read_members.append((entry.package, entry.member or entry.path))
        return info

    def is_read(self, entry: Entry) -> bool:
        return entry.path in self._elf

    def unversioned(self, entry: Entry) -> bool:
        """The object has no `.gnu.version` table at all."""
        info = self.elf(entry)
        return info is not None and not info.symbols.versym

    def exports(self, entry: Entry) -> Exports:
        cached = self._exports.get(entry.path)
        if cached is None:
            info = self.elf(entry)
            cached = info.symbols.exports() if info is not None else {}
            self._exports[entry.path] = cached
        return cached


def defines(exports: Exports, name: str, version: str | None, *, unversioned_object: bool = False) -> bool:
    """Whether a definition satisfies a reference, as ld.so matches them: a versioned
    reference needs that version name (a hidden `foo@V` counts), except in an object without
    any symbol versioning, which satisfies it by name; an unversioned one takes any
    definition that is not hidden."""
    versions: tuple[SymbolVersion | None, ...] | None = exports.get(name)
    if not versions:
        return False
    if version is None:
        return any(v is None or not v.hidden for v in versions)
    if unversioned_object:
        return True
    return any(v is not None and v.name == version for v in versions)
