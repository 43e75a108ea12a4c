"""The WD1xx rules on held-out set 6's lockfiles (fixtures/real/heldout6/locks): 7 locks (3 uv.lock
with their pyproject.toml, 4 hand-written pin lists) from repositories no earlier corpus names,
labelled by hand (environments read with the real `uv export --frozen`) and committed (2ab8d59)
before wheeldoc first ran on them. Every check is labelled clean; the first run (nothing changed
since) raised no error or warning on any of the 13 lock x target checks (docs/real-world-heldout6.md).
These tests pin that; update them with the doc."""

from pathlib import Path

import pytest

from tests.lockfile.reallocks import assert_locks_recorded, measure_script

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "real" / "heldout6" / "locks"


def test_heldout6_locks_are_labelled_and_recorded():
    assert_locks_recorded(CORPUS, 7)


@pytest.mark.slow
def test_heldout6_lock_numbers():
    m = measure_script().measure(CORPUS)
    assert (m["tp"], m["fp"], m["miss"]) == (0, 0, 0), m["per_rule"]
    assert m["per_rule"] == {}
    assert len(m["rows"]) == 13 and m["clean_targets"] == 13 and m["clean_targets_flagged"] == 0
    mac = next(r for r in m["rows"] if r["lock"] == "data-miner/uv.lock" and r["args"] == ["--platform", "macos-arm64"])
    assert any(q.startswith("WD002 info: skipped") and "torch 2.11.0+cu128 has no wheel for macos-arm64" in q
               for q in mac["quiet"])
