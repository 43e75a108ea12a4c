"""Run wheeldoc in a child process and measure it: wall time and the child's own peak RSS.

Every hostile case goes through the CLI, as a user's would, and is held to the same bounds:
under `MAX_SECONDS` of wall time and `MAX_RSS_MB` of peak resident memory (this is a shared
2-core machine), no traceback, and a defined exit code. The peak RSS is the child's alone:
`os.wait4` returns the rusage of the one process it reaps. Linux keeps a process's peak RSS
across fork and exec, so a child forked straight from a grown pytest would report pytest's own
peak: wheeldoc is started by a small launcher (`_LAUNCH`, a fresh interpreter) that forks it,
reaps it with `os.wait4` and writes its peak to a file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_LAUNCH = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    f.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""
MAX_SECONDS = 5.0
MAX_RSS_MB = 300.0


@dataclass
class Run:
    argv: tuple[str, ...]
    code: int
    out: str
    err: str
    seconds: float
    rss_mb: float

    def check(self, *codes: int, seconds: float = MAX_SECONDS, rss_mb: float = MAX_RSS_MB) -> Run:
        """Assert the bounds, no traceback, and an exit code among `codes`."""
        what = f"wheeldoc {' '.join(self.argv)[:300]}"
        assert "Traceback" not in self.err and "Traceback" not in self.out, f"{what}\n{self.err[-3000:]}"
        assert self.code in codes, f"{what}: exit {self.code}, expected {codes}\n{self.err[-2000:]}\n{self.out[-2000:]}"
        assert self.seconds < seconds, f"{what}: took {self.seconds:.2f} s (bound {seconds} s)"
        assert self.rss_mb < rss_mb, f"{what}: peak RSS {self.rss_mb:.0f} MB (bound {rss_mb} MB)"
        return self

    @property
    def text(self) -> str:
        return self.out + self.err


def wheeldoc(tmp: Path, *argv: str, timeout: float = 15, env: dict | None = None,
             cache: Path | None = None) -> Run:
    """`python -m wheeldoc ARGV` with its own cache folder (`cache`, default `tmp/cache`)."""
    environ = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1",
               "WHEELDOC_CACHE_DIR": str(cache or tmp / "cache"), **(env or {})}
    peak = tmp / f".peak-{os.getpid()}-{time.monotonic_ns()}"
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", _LAUNCH, str(peak), sys.executable, "-m", "wheeldoc", *argv],
                                env=environ, stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = start + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                os.killpg(proc.pid, signal.SIGKILL)
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        seconds = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        text_out = out.read().decode("utf-8", "replace")
        text_err = err.read().decode("utf-8", "replace")
    try:
        rss_kb = int(peak.read_text())
        peak.unlink()
    except (OSError, ValueError):  # killed before the launcher wrote it: its own peak bounds the child's
        rss_kb = usage.ru_maxrss
    return Run(tuple(argv), proc.returncode, text_out, text_err, seconds, rss_kb / 1024)
