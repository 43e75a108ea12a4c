"""wheeldoc runs nobody's code without being told: `check --resolve` resolves from wheels only
(uv --no-build) unless `--allow-build` is given, and `doctor --python` runs the interpreter it
was given in a session of its own, for a bounded time, and leaves nothing it forked behind."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from tests.hostile.runner import wheeldoc
from wheeldoc.core.target import build_target
from wheeldoc.lockfile.resolve import compile_args

GPU = ("--gpu", "h200", "--driver", "580.95.05")


def _args(**kw) -> argparse.Namespace:
    base = dict(index_url=None, extra_index_url=[], find_links=[], torch_backend=None, allow_build=False)
    return argparse.Namespace(**{**base, **kw})


def test_resolve_never_builds_unless_allowed():
    target = build_target(platform=None, gpu=None, driver=None, python=None)
    assert "--no-build" in compile_args(Path("r.in"), _args(), target, "o.txt")
    assert "--no-build" not in compile_args(Path("r.in"), _args(allow_build=True), target, "o.txt")


def test_resolve_of_a_local_source_tree_runs_no_build_backend(tmp_path):
    """A source tree whose setup.py would write a canary: resolving it needs its metadata, which
    only building gives, so wheeldoc refuses (exit 2, saying how to allow it), the canary absent."""
    canary = tmp_path / "CANARY"
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "setup.py").write_text(f"import pathlib\npathlib.Path({str(canary)!r}).write_text('built')\n"
                                  "from setuptools import setup\nsetup(name='pkg', version='1.0')\n")
    req = tmp_path / "requirements.in"
    req.write_text(f"{pkg}\n")  # absolute: uv reads relative paths from the working directory
    empty = tmp_path / "empty"
    empty.mkdir()
    r = wheeldoc(tmp_path, "check", "--resolve", str(req), "--index-url", empty.as_uri(),
                 env={"UV_OFFLINE": "1", "UV_NO_CACHE": "1"}, timeout=60).check(2, seconds=30)
    assert not canary.exists()
    assert "--allow-build" in r.err and "requirements.in" in r.err


def _fake_python(tmp: Path, body: str) -> Path:
    exe = tmp / "bin" / "python"
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text("#!/bin/sh\n" + body)
    exe.chmod(0o755)
    return exe


def _gone(pid: int, within: float = 3.0) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie still answers kill(0): look at its state
            if open(f"/proc/{pid}/stat").read().split(")")[-1].split()[0] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.05)
    return False


def test_doctor_python_that_sleeps_and_forks_is_stopped_and_leaves_nothing(tmp_path):
    pidfile = tmp_path / "child.pid"
    exe = _fake_python(tmp_path, f"sleep 300 &\necho $! > {pidfile}\nsleep 300\n")
    r = wheeldoc(tmp_path, "doctor", "--python", str(exe), *GPU, env={"WHEELDOC_PYTHON_TIMEOUT": "2"})
    r.check(2)
    assert "did not answer within 2 s" in r.err and str(exe) in r.err
    assert _gone(int(pidfile.read_text()))


def test_doctor_python_that_exits_but_leaves_a_child_behind(tmp_path):
    pidfile = tmp_path / "child.pid"
    exe = _fake_python(tmp_path, f"sleep 300 &\necho $! > {pidfile}\necho not-json\n")
    r = wheeldoc(tmp_path, "doctor", "--python", str(exe), *GPU).check(2)
    assert "printed no JSON" in r.err
    assert _gone(int(pidfile.read_text()))


def test_doctor_python_that_floods_its_output(tmp_path):
    exe = _fake_python(tmp_path, "exec yes\n")  # writes forever
    r = wheeldoc(tmp_path, "doctor", "--python", str(exe), *GPU, env={"WHEELDOC_PYTHON_TIMEOUT": "3"}).check(2)
    assert "printed more than" in r.err


def _fake_python_py(tmp: Path, body: str) -> Path:
    """A fake interpreter written in Python (the real one runs it, with `-I -S -c QUERY` as its
    arguments), so that it can fork and call setsid() itself."""
    import sys

    exe = tmp / "fakebin" / "python"
    exe.parent.mkdir(parents=True, exist_ok=True)
    exe.write_text(f"#!{sys.executable}\nimport os, sys, time\n" + body)
    exe.chmod(0o755)
    return exe


def _pids(path: Path, n: int = 1, within: float = 5.0) -> list[int]:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if path.exists() and len(path.read_text().split()) >= n:
            return [int(p) for p in path.read_text().split()]
        time.sleep(0.05)
    raise AssertionError(f"{path} never got {n} pids")


_SETSID_CHILD = """
if os.fork() == 0:
    os.setsid()  # out of the query's process group: the group kill no longer reaches it
    with open({pidfile!r}, "a") as f:
        f.write(f"{{os.getpid()}}\\n")
    time.sleep(60)
    os._exit(0)
"""


def test_doctor_python_whose_child_calls_setsid_leaves_nothing_behind(tmp_path):
    """The child keeps the query's stdout open, so before wheeldoc was a subreaper the query also
    waited out its whole timeout (20 s) for end of file."""
    pidfile = tmp_path / "setsid.pid"
    exe = _fake_python_py(tmp_path, _SETSID_CHILD.format(pidfile=str(pidfile))
                          + "time.sleep(0.3)\nprint('not-json')\n")
    r = wheeldoc(tmp_path, "doctor", "--python", str(exe), *GPU, timeout=40).check(2)
    assert "printed no JSON" in r.err
    (pid,) = _pids(pidfile)
    assert _gone(pid, within=0.5), f"setsid() child {pid} outlived `doctor --python`"


def test_doctor_python_that_hangs_with_a_setsid_child_is_stopped_and_leaves_nothing(tmp_path):
    pidfile = tmp_path / "setsid.pid"
    exe = _fake_python_py(tmp_path, _SETSID_CHILD.format(pidfile=str(pidfile)) + "time.sleep(60)\n")
    r = wheeldoc(tmp_path, "doctor", "--python", str(exe), *GPU, env={"WHEELDOC_PYTHON_TIMEOUT": "2"}).check(2)
    assert "did not answer within 2 s" in r.err
    (pid,) = _pids(pidfile)
    assert _gone(pid, within=0.5)


def test_doctor_python_that_leaves_a_double_forked_daemon(tmp_path):
    """The classic daemon: fork, setsid, fork again, the middle one exits, the grandchild closes
    its standard streams (so nothing holds the query's pipes) and sleeps on; its parent too."""
    pidfile = tmp_path / "daemon.pid"
    exe = _fake_python_py(tmp_path, f"""
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        with open({str(pidfile)!r}, "a") as f:
            f.write(f"{{os.getpid()}}\\n")
        if os.fork() == 0:  # and one more below it, still in the daemon's session
            with open({str(pidfile)!r}, "a") as f:
                f.write(f"{{os.getpid()}}\\n")
        time.sleep(60)
        os._exit(0)
    os._exit(0)
os.wait()
time.sleep(0.5)
print('not-json')
""")
    r = wheeldoc(tmp_path, "doctor", "--python", str(exe), *GPU).check(2)
    assert "printed no JSON" in r.err
    pids = _pids(pidfile, 2)
    assert all(_gone(p, within=0.5) for p in pids), f"daemon {pids} outlived `doctor --python`"
