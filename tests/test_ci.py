""".ci/run: both test runs happen, in order, and their exit codes decide CI's (pytest's 5, no
tests collected, is a failure for either run). `uv` is replaced by a script that records its
arguments and exits with the codes the test asks for."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FAKE_UV = """#!/bin/sh
echo "$*" >> "$UV_LOG"
case "$*" in
  --version) echo "uv 0.0.0-fake"; exit 0 ;;
  "run pytest") exit "$DEFAULT_CODE" ;;
  "run pytest -m slow") exit "$SLOW_CODE" ;;
  "run --python "*) exit "${PY_CODE:-0}" ;;
esac
exit 99
"""


@pytest.mark.parametrize("default,slow,expected", [
    (0, 0, 0), (1, 0, 1), (0, 1, 1), (5, 0, 1), (0, 5, 1), (2, 1, 2), (0, 3, 3),
])
def test_ci_runs_default_then_slow(tmp_path, default, slow, expected):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "uv").write_text(FAKE_UV)
    (bindir / "uv").chmod(0o755)
    log = tmp_path / "uv.log"
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "UV_LOG": str(log),
           "DEFAULT_CODE": str(default), "SLOW_CODE": str(slow)}
    proc = subprocess.run(["bash", str(ROOT / ".ci" / "run")], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == expected, proc.stdout + proc.stderr
    lines = log.read_text().splitlines()
    assert lines[:3] == ["--version", "run pytest", "run pytest -m slow"]
    assert len(lines) == 6 and all(x.startswith("run --python ") for x in lines[3:])  # 3.10, 3.12, 3.13
    if 5 in (default, slow):
        assert "pytest collected no tests" in proc.stderr


def test_a_failure_under_another_python_fails_ci(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "uv").write_text(FAKE_UV)
    (bindir / "uv").chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}:{os.environ['PATH']}", "UV_LOG": str(tmp_path / "uv.log"),
           "DEFAULT_CODE": "0", "SLOW_CODE": "0", "PY_CODE": "1"}
    proc = subprocess.run(["bash", str(ROOT / ".ci" / "run")], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
