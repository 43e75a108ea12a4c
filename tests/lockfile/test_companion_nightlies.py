"""WD103 judges companions by the release table; a nightly torch (or companion) is not a release:
its companions are the nightlies of its date, so nothing is judged (held-out 7's frozen cu130 nightly
environment: torchvision 0.26.0.dev beside torch 2.12.0.dev of the same day)."""

from __future__ import annotations

from pathlib import Path


def wd103(cli, tmp_path: Path, text: str) -> list[dict]:
    lock = tmp_path / "requirements.txt"
    lock.write_text(text)
    res = cli("check", str(lock), "--format", "json", "--fail-on", "never")
    assert res.code == 0, res.err
    return [f for f in res.json()["findings"] if f["rule"] == "WD103"]


def test_nightlies_are_not_judged_by_the_release_table(cli, tmp_path: Path) -> None:
    assert wd103(cli, tmp_path, "torch==2.12.0.dev20260316+cu130\ntorchvision==0.26.0.dev20260316+cu130\n") == []


def test_releases_still_are(cli, tmp_path: Path) -> None:
    [f] = wd103(cli, tmp_path, "torch==2.14.1\ntorchvision==0.28.0\n")
    assert f["severity"] == "error" and "torchvision 0.28.0" in f["message"]
