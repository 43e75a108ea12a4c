"""Every lockfile fixture case, in every format the real tools wrote it: `hit-*` cases raise their
family's rule, `ok-*` cases raise no WD1xx at all (fixtures/locks/make.py made them)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCKS = ROOT / "fixtures" / "locks"
FAMILY = {"cpu-torch": {"WD101"}, "mixed-cuda": {"WD102"}, "companion": {"WD103"},
          "real-index": {"WD101", "WD102"}}


def lock_files() -> list[Path]:
    out = []
    for case in sorted(p for p in LOCKS.glob("*/*") if p.is_dir()):
        for f in sorted(case.iterdir()):
            if f.name == "uv.lock" or f.name.startswith("pylock") or (
                    f.suffix == ".txt" and f.name.startswith("requirements")):
                out.append(f)
    return out


FILES = lock_files()


def test_every_case_has_a_lock():
    cases = {p.parent for p in FILES}
    assert len(cases) >= 18


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(LOCKS)) for p in FILES])
def test_case(path, cli):
    res = cli("check", str(path), "--format", "json", "--fail-on", "never")
    assert res.code == 0, res.err
    rules = {f["rule"] for f in res.json()["findings"] if f["rule"].startswith("WD1")}
    family, case = path.parent.parent.name, path.parent.name
    if case.startswith("hit-"):
        assert FAMILY[family] <= rules, f"{family} rule not raised; got {sorted(rules)}"
    else:
        assert case.startswith("ok-") or family == "traps"
        assert rules == set(), f"unexpected {sorted(rules)}"


def test_story_fixture_shows_finding_and_fix(cli):
    res = cli("check", "fixtures/story")
    assert res.code == 1
    assert "WD101" in res.out and "torch 2.10.0+cpu" in res.out
    assert "fix: Write overrides.txt with torch==2.10.0+cu130" in res.out
    assert "--override overrides.txt" in res.out
    assert "download.pytorch.org/whl/cpu" not in res.out.split("fix:")[1]  # the CPU index is dropped


def test_gb10_target_makes_universal_pypi_torch_cpu(cli):
    path = "fixtures/locks/traps/pypi-torch-universal/uv.lock"
    x86 = cli("check", path, "--format", "json", "--platform", "linux-x86_64", "--gpu", "h100").json()
    arm = cli("check", path, "--format", "json", "--gpu", "gb10").json()
    assert not [f for f in x86["findings"] if f["rule"] == "WD101"]
    hits = [f for f in arm["findings"] if f["rule"] == "WD101"]
    assert hits and hits[0]["data"]["platform"] == "linux-aarch64"
    assert arm["target"]["gpu"] == {"name": "gb10", "compute_capability": "12.1", "arch": "sm_121"}
