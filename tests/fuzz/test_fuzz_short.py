"""Every fuzz harness, run for a few seconds in its own process: no crash, no hang.

This is the short run `.ci/run` does (through `uv run pytest -m slow`); long campaigns use
`tests/fuzz/campaign.py` (numbers in docs/robustness.md). Each harness starts from its
fixture seeds in a fresh corpus folder, so a run is reproducible from the repository alone.
`WHEELDOC_FUZZ_SECONDS` changes the per-harness budget (default 6: about two minutes in all).
Where atheris is missing the harness itself falls back to hypothesis and says so in its output.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

FUZZ_DIR = Path(__file__).resolve().parent
HARNESSES = sorted(p.stem.removeprefix("fuzz_") for p in FUZZ_DIR.glob("fuzz_*.py"))
SECONDS = int(os.environ.get("WHEELDOC_FUZZ_SECONDS", "6"))

pytestmark = pytest.mark.fuzz


def run_harness(name: str, *args: str, timeout: float, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(FUZZ_DIR / f"fuzz_{name}.py"), *args],
                          capture_output=True, text=True, errors="replace", timeout=timeout,
                          cwd=FUZZ_DIR.parents[1], env={**os.environ, **(env or {})})


def test_every_parser_has_a_harness():
    expected = {"elf", "fatbin", "cubin", "payload", "wheel", "image", "uv_lock", "pylock",
                "requirements", "dockerfile", "shell", "machine", "dist"}
    assert expected <= set(HARNESSES)


@pytest.mark.slow
@pytest.mark.parametrize("name", HARNESSES)
def test_short_fuzz_run_finds_no_crash(name: str, tmp_path: Path) -> None:
    corpus, crashes = tmp_path / "corpus", tmp_path / "crashes"
    crashes.mkdir()
    proc = run_harness(name, f"-max_total_time={SECONDS}", "-timeout=20", f"-artifact_prefix={crashes}/",
                       str(corpus), timeout=SECONDS * 10 + 120)
    out = proc.stdout + proc.stderr
    found = sorted(p.name for p in crashes.iterdir())
    assert proc.returncode == 0 and not found, f"fuzz_{name} crashed ({found}):\n{out[-6000:]}"
    assert any(corpus.iterdir()), "the harness wrote no seeds"
    # It really ran: libFuzzer's closing line, or the hypothesis fallback's.
    assert "Done " in out or "DONE (hypothesis fallback" in out, out[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["elf", "image"])
def test_hypothesis_fallback_runs_the_same_harness(name: str, tmp_path: Path) -> None:
    """What runs where atheris cannot: the seeds, then hypothesis inputs, under the same contract."""
    proc = run_harness(name, "-runs=300", "-max_total_time=20", str(tmp_path / "corpus"), timeout=300,
                       env={"WHEELDOC_FUZZ_ENGINE": "hypothesis"})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    assert f"DONE (hypothesis fallback, {name})" in out and "INFO: Instrumenting" not in out
