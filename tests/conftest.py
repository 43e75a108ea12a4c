from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


@pytest.fixture
def cli(capsys, monkeypatch):
    """Run `wheeldoc ARGV` in-process from the repository root; returns code, stdout, stderr."""
    from wheeldoc.cli import main

    def run(*argv: str, cwd: Path | None = None) -> Result:
        monkeypatch.chdir(cwd or ROOT)
        code = main(list(argv))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def run_subprocess(*argv: str, cwd: Path | None = None, timeout: float = 120) -> Result:
    """Run the real console entry point in a fresh interpreter."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run([sys.executable, "-m", "wheeldoc", *argv], cwd=cwd or ROOT, capture_output=True,
                          text=True, timeout=timeout, env=env)
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Tests never write to the user's cache."""
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "wheeldoc-cache"))
