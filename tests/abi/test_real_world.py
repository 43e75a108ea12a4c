"""The real-world truth table (docs/real-world-truth.md): wheeldoc's verdicts against real
`dlopen` of real wheels from the package index, re-checked wherever those wheels are cached
(WHEELDOC_WHEELS, /work/wheels, /opt/...); skipped cleanly elsewhere."""

from __future__ import annotations

import pytest

from tests.abi import realworld


@pytest.mark.slow
def test_real_world_truth_table():
    if not realworld.TRUTH.exists():
        pytest.skip("no ground truth recorded")
    results = []
    for pair in realworld.pairs():
        verdict = realworld.wheeldoc_verdict(pair)
        if verdict is not None:
            results.append(realworld.compare(pair, verdict))
    if not results:
        pytest.skip("none of the real-world wheels is cached here")
    total = sum(c["compared"] for c in results)
    agree = sum(c["agree"] for c in results)
    assert total and agree / total >= 0.97, [
        (c["torch"], o["object"], o["dlopen"], o["wheeldoc"]) for c in results for o in c["objects"] if not o["agree"]]
    assert not [c for c in results if c["false_incompatible"]]


@pytest.mark.slow
def test_range_mode_over_the_index_on_every_cached_extension(cli, tmp_path, monkeypatch):
    """`abi EXT 'torch>=2.4,<2.16'` from the torch index on each real extension wheel of the truth
    table that is cached here: a verdict (exit 0 or 1) per release, never an internal error."""
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path))
    names = sorted({p["extension"] for p in realworld.pairs()}) if realworld.TRUTH.exists() else []
    found = [w for w in (realworld.find(n) for n in names) if w is not None]
    if not found:
        pytest.skip("none of the real-world wheels is cached here")
    for wheel in found:
        res = cli("abi", str(wheel), "torch>=2.4,<2.16", "--format", "json")
        assert res.code in (0, 1), (wheel.name, res.err[-400:])
        assert res.json()["releases_from"] == "index", wheel.name
