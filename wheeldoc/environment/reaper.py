"""Nothing an interpreter we ran forks outlives the query, even what left its session.

`doctor --python PY` runs PY in a session of its own and kills that session's process group when
PY answers or times out. A grandchild that calls `setsid()` (a double-forking daemon, say) leaves
the group and would survive. On Linux, `Reaper` makes wheeldoc a child subreaper for the
duration of the query (`prctl(PR_SET_CHILD_SUBREAPER)`, through ctypes on libc; nothing analyzed
is loaded): every orphan among PY's descendants is re-parented to wheeldoc instead of init, so
after PY has ended, the children wheeldoc did not have before are exactly what PY left behind.
`kill_rest` SIGKILLs and reaps them, then their own children (re-parented in turn), until none
is left; the flag is then restored. Children are listed from `/proc/self/task/*/children`, or
by scanning `/proc/*/stat` for our pid where the kernel lacks that file.

Where prctl is unavailable (not Linux, or a kernel before 3.4), an orphan goes to init as before,
and only the process-group kill applies: a `setsid()` grandchild can then escape (docs/robustness.md).
"""

from __future__ import annotations

import os
import signal
import time

PR_SET_CHILD_SUBREAPER = 36
PR_GET_CHILD_SUBREAPER = 37
KILL_SECONDS = 5.0  # at most this long killing what is left (each round kills one generation)


def _prctl():
    """libc's prctl, or None where there is none (not Linux, no ctypes, a libc without it)."""
    if not os.path.isdir("/proc/self/task"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)  # the symbols already loaded: libc's among them
        fn = libc.prctl
    except (ImportError, OSError, AttributeError):
        return None
    fn.restype = ctypes.c_int
    return fn


def children() -> set[int] | None:
    """The pids of our children (zombies included); None where /proc cannot tell."""
    out: set[int] = set()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return None
    try:
        for task in tasks:
            with open(f"/proc/self/task/{task}/children", "rb") as fh:
                out.update(int(p) for p in fh.read().split())
        return out
    except FileNotFoundError:  # a kernel without CONFIG_PROC_CHILDREN: scan every process
        pass
    except (OSError, ValueError):
        return None
    me = os.getpid()
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:
        return None
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            if int(fields[1]) == me:
                out.add(pid)
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return out


class Reaper:
    """`with Reaper() as r: ...run the child...; r.kill_rest()` (kill_rest runs again on exit).

    `active` says whether wheeldoc was made a subreaper (False: only the process-group kill of
    the caller applies)."""

    def __init__(self) -> None:
        self.active = False
        self._prctl = None
        self._previous = 0
        self._before: set[int] = set()

    def __enter__(self) -> Reaper:
        fn = _prctl()
        before = children()
        if fn is None or before is None:
            return self
        import ctypes

        previous = ctypes.c_int(0)
        if fn(PR_GET_CHILD_SUBREAPER, ctypes.byref(previous), 0, 0, 0) != 0:
            return self
        if fn(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            return self
        self._prctl, self._previous, self._before, self.active = fn, previous.value, before, True
        return self

    def kill_rest(self, *, keep: int | None = None) -> int:
        """SIGKILL and reap every child we did not have on entry (but `keep`, a child its owner
        reaps itself, such as a `Popen` not yet waited for), generation by generation; the
        number killed."""
        if not self.active:
            return 0
        killed = 0
        deadline = time.monotonic() + KILL_SECONDS
        while time.monotonic() < deadline:
            now = children()
            if now is None:
                break
            rest = sorted(now - self._before - ({keep} if keep is not None else set()))
            if not rest:
                break
            for pid in rest:
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed += 1
                except (ProcessLookupError, PermissionError):
                    pass
            for pid in rest:  # reaped here: once a parent is gone, its children are ours
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass
        return killed

    def __exit__(self, *exc) -> None:
        if not self.active:
            return
        try:
            self.kill_rest()
        finally:
            self._prctl(PR_SET_CHILD_SUBREAPER, self._previous, 0, 0, 0)
            self.active = False
