"""The recorded H200 results (docs/groundtruth/) replayed against the current load model."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

from wheeldoc.kernels.load_model import LoadPrediction

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "groundtruth_replay.py"


def test_every_recorded_h200_result_agrees_with_the_current_model():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--json"], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    got = {(r["run"], r["kind"]): r for r in json.loads(proc.stdout)}
    first_fx, first_libs = got[("first run", "fixtures")], got[("first run", "libraries")]
    # what the H200 measured before the model learned its rules ...
    assert (first_fx["rows"], first_fx["results_then"]) == (99, 87)
    assert (first_fx["choices_then"], first_fx["choices_agree_then"]) == (55, 54)
    assert (first_libs["rows"], first_libs["results_then"]) == (382, 381)
    # ... and what the current model predicts for the same images
    assert first_fx["results_now"] == 99 and first_fx["agree_now"] == 99
    assert (first_fx["choices_now"], first_fx["choices_agree_now"]) == (55, 55)
    assert first_libs["results_now"] == 382
    assert len(first_fx["changed"]) == 13 and len(first_libs["changed"]) == 1
    after_fx, after_libs = got[("after fixes", "fixtures")], got[("after fixes", "libraries")]
    assert after_fx["rows"] >= 105 and after_fx["agree_now"] == after_fx["rows"]
    assert after_libs["rows"] == 382 and after_libs["results_now"] == 382


def _load_replay():
    spec = importlib.util.spec_from_file_location("groundtruth_replay", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_replay_notices_a_wrong_model(monkeypatch):
    mod = _load_replay()
    monkeypatch.setattr(mod, "predict_image", lambda *a, **k: LoadPrediction("native", None, None))
    monkeypatch.setattr(mod, "predict_container",
                        lambda *a, **k: LoadPrediction("fail", None, "CUDA_ERROR_INVALID_PTX"))
    fx = mod.replay_fixtures(ROOT / "docs" / "groundtruth" / "gpu_groundtruth.json")
    libs = mod.replay_libraries(ROOT / "docs" / "groundtruth" / "h200_libraries.json")
    assert fx["agree_now"] < 70 and libs["results_now"] == 0
