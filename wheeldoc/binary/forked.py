"""A big deflated member's ELF facts read in a forked child process.

Inflating on a thread stalls whenever another thread runs Python: the inflater gives the GIL
back after every piece and waits a whole switch interval to get it again (measured: 36x slower
beside a busy thread). A child process forked from this one (the modules already imported, the
archive already mapped) inflates at full speed on another core, stores what it learnt in the
cache as `read_elf_member` would, and sends it back through a pipe.

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


class ForkedRead:
    """One child reading one member; `result()` waits for it."""

    def __init__(self, pid: int, fd: int, path: str, member: str) -> None:
        self.pid, self._fd, self.path, self.member = pid, fd, path, member
        self._done = False
        self._info: ElfInfo | None = None

    def result(self) -> ElfInfo | None:
        """The child's facts, or None when it failed (read the member in-process then)."""
        if self._done:
            return self._info
        self._done = True
        chunks, size = [], 0
        try:
            while True:
                chunk = os.read(self._fd, 1 << 20)
                if not chunk:
                    break
                size += len(chunk)
                if size > _MAX_REPLY:
                    chunks = []
                    break
                chunks.append(chunk)
        except OSError:
            chunks = []
        finally:
            self._close()
        if self._reap() != 0 or not chunks:
            return None
        from wheeldoc.binary.elf import ElfInfo

        try:
            self._info = ElfInfo.from_json(json.loads(b"".join(chunks)), path=self.path, member=self.member)
        except (KeyError, TypeError, ValueError):
            self._info = None
        return self._info

    def cancel(self) -> None:
        """Stop the child if it still runs."""
        if self._done:
            return
        self._done = True
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        self._close()
        self._reap()

    def _close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def _reap(self) -> int:
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            return -1
        return os.waitstatus_to_exitcode(status)


def can_fork() -> bool:
    """Whether forking is safe here: Linux, and no thread but this one."""
    return sys.platform.startswith("linux") and hasattr(os, "fork") and threading.active_count() == 1


def fork_read(source: MemberSource, name: str, cache: Cache | None) -> ForkedRead | None:
    """Start a child reading `name`'s ELF facts (None: not forked; read it in-process)."""
    if not can_fork():
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
        _child(source, name, cache, r, w)
    os.close(w)
    return ForkedRead(pid, r, source.path, name)


def _child(source: MemberSource, name: str, cache: Cache | None, r: int, w: int) -> None:
    code = 1
    try:
        gc.disable()  # a collection would walk, and so copy, every page of the parent's heap
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.close(r)
        from wheeldoc.binary.elf import read_elf_member

        info = read_elf_member(source, name, cache=cache)
        data = json.dumps(info.to_json(), separators=(",", ":")).encode()  # a few ms, whatever the cache did
        with memoryview(data) as view:
            while view:
                view = view[os.write(w, view):]
        code = 0
    except BaseException:  # noqa: BLE001 (the parent reads the member itself and reports why)
        code = 1
    finally:
        os._exit(code)
