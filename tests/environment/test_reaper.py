"""wheeldoc as a child subreaper while `--python` runs: what the query leaves behind is killed,
what wheeldoc had before is not, and the flag is put back (wheeldoc/environment/reaper.py)."""

from __future__ import annotations

import builtins
import ctypes
import os
import subprocess
import sys

import pytest

from wheeldoc.environment import reaper as rp

_PRCTL = rp._prctl()
pytestmark = pytest.mark.skipif(_PRCTL is None, reason="no prctl (not Linux)")


def _subreaper() -> int:
    value = ctypes.c_int(-1)
    assert _PRCTL(rp.PR_GET_CHILD_SUBREAPER, ctypes.byref(value), 0, 0, 0) == 0
    return value.value


_CHAIN = """
import os, sys, time
depth, setsid_at = int(sys.argv[1]), int(sys.argv[2])
r, w = os.pipe()
for level in range(depth):
    if os.fork() != 0:
        break  # the parent of this generation
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.dup2(null, 2)
    if level == setsid_at:
        os.setsid()
    os.write(w, f"{os.getpid()} ".encode())
else:
    level = depth
if level == 0:  # the top: wait for every generation's pid, print them, exit (orphaning them)
    os.close(w)
    got = b""
    while len(got.split()) < depth:
        got += os.read(r, 4096)
    print(got.decode())
    sys.exit(0)
time.sleep(60)
"""


def _orphans(depth: int = 1, setsid_at: int = 0) -> list[int]:
    """Run a process that forks a chain of `depth` generations (the one at `setsid_at` calls
    setsid()) and exits, orphaning them: their pids."""
    out = subprocess.run([sys.executable, "-c", _CHAIN, str(depth), str(setsid_at)], capture_output=True,
                         text=True, timeout=30).stdout
    return [int(p) for p in out.split()]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0] != "Z"


def test_orphans_come_to_us_and_are_killed_and_the_flag_is_restored():
    before = _subreaper()
    keep = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])  # ours before: kept
    try:
        with rp.Reaper() as r:
            assert r.active and _subreaper() == 1
            (pid,) = _orphans()
            assert pid in rp.children()  # re-parented to us, not to init
            assert r.kill_rest() == 1
            assert not _alive(pid)
        assert _subreaper() == before
        assert keep.poll() is None
    finally:
        keep.kill()
        keep.wait()


def test_children_found_by_scanning_proc_where_the_kernel_has_no_children_file(monkeypatch):
    real_open = builtins.open

    def no_children_file(path, *a, **kw):
        if str(path).endswith("/children"):
            raise FileNotFoundError(path)
        return real_open(path, *a, **kw)

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        monkeypatch.setattr(rp, "open", no_children_file, raising=False)
        assert proc.pid in rp.children()
    finally:
        proc.kill()
        proc.wait()


def test_without_prctl_nothing_is_changed_and_nothing_killed(monkeypatch):
    """The fallback: only the caller's process-group kill applies (a setsid() child escapes)."""
    monkeypatch.setattr(rp, "_prctl", lambda: None)
    with rp.Reaper() as r:
        assert not r.active and r.kill_rest() == 0
    assert _subreaper() == 0


def test_a_chain_of_generations_is_killed_to_the_end():
    """Each round kills one generation; their children come to us and go in the next."""
    with rp.Reaper() as r:
        pids = _orphans(depth=5, setsid_at=2)
        assert len(pids) == 5
        assert r.kill_rest() == 5
        assert not any(_alive(p) for p in pids)
