"""wheeldoc as a user installs it, for the benchmarks: this checkout built into a wheel with uv
and installed with uv into a fresh virtual environment, bytecode compiled (as `uv tool install`
and pip do). A development environment runs more at every start (setuptools' `.pth` hooks, an
editable finder) than an install does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def install(scratch: str, extras: str = "fast") -> Path:
    """Install into `scratch`/venv; returns its `wheeldoc` command."""
    dist, venv = Path(scratch, "dist"), Path(scratch, "venv")
    subprocess.run(["uv", "build", "--wheel", "-q", "-o", str(dist), str(ROOT)], check=True)
    subprocess.run(["uv", "venv", "-q", "--python", f"{sys.version_info[0]}.{sys.version_info[1]}", str(venv)],
                   check=True)
    wheel = next(dist.glob("wheeldoc-*.whl"))
    subprocess.run(["uv", "pip", "install", "-q", "--python", str(venv / "bin" / "python"),
                    f"{wheel}[{extras}]" if extras else str(wheel)], check=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "compileall", "-q", str(venv / "lib")], check=True)
    return venv / "bin" / "wheeldoc"
