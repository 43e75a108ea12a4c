"""WD101: one cause, one finding. A CPU torch that is an error carries the CPU torchvision /
torchaudio beside it (their build follows torch's, and the fix pins them together); a CPU
companion beside a CUDA torch is still its own finding."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASE = (ROOT / "fixtures/locks/cpu-torch/hit-exact-pin-admits-cpu/requirements.uv.txt").read_text()
VISION = "torchvision==0.25.0+cpu   # via -r requirements.in\n    # from file:///tmp/wheeldoc-fixtures/download.pytorch.org/whl/cpu\n"


def findings(cli, tmp_path: Path, text: str) -> list[dict]:
    lock = tmp_path / "requirements.uv.txt"
    lock.write_text(text)
    res = cli("check", str(lock), "--format", "json", "--fail-on", "never")
    assert res.code == 0, res.err
    return [f for f in res.json()["findings"] if f["rule"] in ("WD101", "WD102") and f["severity"] != "info"]


def test_cpu_companions_ride_on_the_cpu_torch_finding(cli, tmp_path: Path) -> None:
    [f] = findings(cli, tmp_path, BASE + VISION)
    assert f["rule"] == "WD101" and f["data"]["package"] == "torch"
    assert "torchvision 0.25.0+cpu beside it is a CPU-only build too" in f["message"]
    assert f["data"]["cpu_companions"] == ["torchvision"]


def test_a_cpu_companion_beside_a_cuda_torch_is_its_own_finding(cli, tmp_path: Path) -> None:
    text = BASE.replace("torch==2.10.0+cpu ", "torch==2.10.0+cu130").replace("whl/cpu\ntyping", "whl/cu130\ntyping")
    got = findings(cli, tmp_path, text + VISION)
    assert got and all(f["data"]["package"] == "torchvision" for f in got)
