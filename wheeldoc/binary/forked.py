"""Big deflated members' ELF facts read in a forked child process.

Inflating on a thread stalls whenever another thread runs Python: the inflater gives the GIL
back after every piece and waits a whole switch interval to get it again (measured: 36x slower
beside a busy thread). A child process forked from this one (the modules already imported, the
archive already mapped) inflates at full speed on another core, stores what it learnt in the
cache as `read_elf_member` would, and sends it back through a pipe, one frame per member.

Only on Linux, and only while this process has a single thread (fork copies the calling thread
alone: a lock held by another thread would stay held in the child). Any failure in the child
(an unreadable member, a signal, a full disk) makes `result` return None and the caller reads
the member itself, so errors are reported exactly as without a child.
"""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wheeldoc.binary.elf import ElfInfo
    from wheeldoc.binary.members import MemberSource
    from wheeldoc.core.cache import Cache

_MAX_REPLY = 256 << 20  # a reply larger than this is dropped (the member is read in-process)


class _Batch:
    """The reply pipe of one child reading several members in order: one frame per member (a
    status byte, 0 when facts follow, then their length and the JSON)."""

    def __init__(self, pid: int, fd: int, path: str, members: list[str]) -> None:
        self.pid, self._fd, self.path = pid, fd, path
        self._pending = list(members)  # in the order the child reads them
        self._got: dict[str, ElfInfo | None] = {}
        self._open = set(members)  # handles still waiting (not answered, not cancelled)
        self._lock = threading.Lock()
        self._ended = False

    def result(self, member: str) -> ElfInfo | None:
        with self._lock:
            while member not in self._got and not self._ended:
                self._read_frame()
            self._open.discard(member)
            info = self._got.pop(member, None)
            if not self._open:
                self._end(kill=False)
            return info

    def cancel(self, member: str) -> None:
        with self._lock:
            self._open.discard(member)
            if not self._open:
                self._end(kill=True)

    def _read_frame(self) -> None:
        name = self._pending.pop(0) if self._pending else None
        head = self._read_exactly(9) if name is not None else None
        if head is None:
            self._end(kill=True)  # the child died, or sent something else: the rest is read in-process
            return
        size = int.from_bytes(head[1:], "little")
        if head[0] != 0:
            self._got[name] = None  # the child could not read it: the parent will (same errors)
            return
        body = self._read_exactly(size) if size <= _MAX_REPLY else None
        if body is None:
            self._end(kill=True)
            return
        from wheeldoc.binary.elf import ElfInfo

        try:
            self._got[name] = ElfInfo.from_json(json.loads(body), path=self.path, member=name)
        except (KeyError, TypeError, ValueError):
            self._got[name] = None

    def _read_exactly(self, n: int) -> bytes | None:
        chunks, left = [], n
        try:
            while left:
                chunk = os.read(self._fd, min(left, 1 << 20))
                if not chunk:
                    return None
                chunks.append(chunk)
                left -= len(chunk)
        except OSError:
            return None
        return b"".join(chunks)

    def _end(self, kill: bool) -> None:
        if self._ended:
            return
        self._ended = True
        if kill:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


class ForkedRead:
    """One member a child reads; `result()` waits for it."""

    def __init__(self, batch: _Batch, member: str) -> None:
        self._batch, self.path, self.member = batch, batch.path, member
        self._done = False
        self._info: ElfInfo | None = None

    @property
    def pid(self) -> int:
        return self._batch.pid

    def result(self) -> ElfInfo | None:
        """The child's facts, or None when it failed (read the member in-process then)."""
        if not self._done:
            self._done = True
            self._info = self._batch.result(self.member)
        return self._info

    def cancel(self) -> None:
        """Stop waiting for it (the child stops once no member of it is waited for)."""
        if not self._done:
            self._done = True
            self._batch.cancel(self.member)


def can_fork() -> bool:
    """Whether forking is safe here: Linux, and no thread but this one."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def fork_read(source: MemberSource, name: str, cache: Cache | None) -> ForkedRead | None:
    """Start a child reading `name`'s ELF facts (None: not forked; read it in-process)."""
    reads = fork_reads(source, [name], cache)
    return reads[0] if reads else None


def fork_reads(source: MemberSource, names: list[str], cache: Cache | None) -> list[ForkedRead] | None:
    """Start one child reading the ELF facts of `names`, in that order (None: not forked)."""
    if not names or not can_fork():
        return None
    try:
        r, w = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        return None
    if pid == 0:  # the child: never returns
        _child(source, names, cache, r, w)
    os.close(w)
    batch = _Batch(pid, r, source.path, names)
    return [ForkedRead(batch, n) for n in names]


def _child(source: MemberSource, names: list[str], cache: Cache | None, r: int, w: int) -> None:
    code = 1
    try:
        gc.disable()  # a collection would walk, and so copy, every page of the parent's heap
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.close(r)
        from wheeldoc.binary.elf import read_elf_member

        for name in names:
            try:
                info = read_elf_member(source, name, cache=cache)
                data = json.dumps(info.to_json(), separators=(",", ":")).encode()  # a few ms
                frame = b"\0" + len(data).to_bytes(8, "little") + data
            except Exception:  # noqa: BLE001 (the parent reads this member itself and reports why)
                frame = b"\1" + bytes(8)
            with memoryview(frame) as view:
                while view:
                    view = view[os.write(w, view):]
        code = 0
    except BaseException:  # noqa: BLE001 (the parent reads what is left itself)
        code = 1
    finally:
        os._exit(code)
