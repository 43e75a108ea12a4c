"""On the real wheels of this machine's local index: `torch<2.14` + torchvision resolves to
torch 2.13.0+cpu beside a CUDA torchvision 0.28.0, and wheeldoc flags both problems."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

INDEXES = ("file:///opt/pypi/simple", "file:///opt/pypi-more/simple")
FIND_LINKS = "/opt/wheels"


@pytest.fixture(scope="module")
def real_lock(tmp_path_factory) -> Path:
    if not (Path("/opt/pypi-more/simple/torchvision").is_dir() and Path(FIND_LINKS).is_dir()):
        pytest.skip("this machine's local index of real torch wheels is not present")
    from uv import find_uv_bin

    work = tmp_path_factory.mktemp("real")
    (work / "requirements.in").write_text("torch<2.14\ntorchvision\n")
    cmd = [find_uv_bin(), "pip", "compile", "requirements.in", "-o", "requirements.lock",
           "--index-url", INDEXES[0], "--extra-index-url", INDEXES[1], "--find-links", FIND_LINKS,
           "--python-platform", "x86_64-unknown-linux-gnu", "--python-version", "3.11"]
    proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "UV_NO_CONFIG": "1"})
    assert proc.returncode == 0, proc.stderr
    return work / "requirements.lock"


def test_real_resolution_yields_cpu_torch_beside_cuda_torchvision(real_lock):
    text = real_lock.read_text()
    assert "torch==2.13.0+cpu" in text and "torchvision==0.28.0" in text


def test_wheeldoc_flags_both_problems(real_lock, cli):
    res = cli("check", str(real_lock), "--extra-index-url", INDEXES[1], "--format", "json")
    assert res.code == 1
    by_rule = {f["rule"]: f for f in res.json()["findings"]}
    assert set(by_rule) == {"WD101", "WD102"}
    assert by_rule["WD101"]["data"]["version"] == "2.13.0+cpu"
    # torchvision's own METADATA, read from the real wheel: its pin admits the CPU build.
    assert by_rule["WD101"]["data"]["pins"]["torchvision"].startswith("requires torch==2.13.0")
    assert by_rule["WD101"]["fix"]["text"] == "torch==2.13.0+cu130\n"
    assert by_rule["WD102"]["data"]["package"] == "torchvision"
    assert by_rule["WD102"]["data"]["torch_build"] == "cpu"


def test_same_lock_for_a_cpu_only_target_is_clean_of_cpu_findings(real_lock, cli):
    # On macOS PyPI ships CPU-only torch and torchvision: nothing wants CUDA there.
    res = cli("check", str(real_lock), "--platform", "macos-arm64", "--format", "json")
    rules = {f["rule"] for f in res.json()["findings"]}
    assert "WD101" not in rules
