"""wheeldoc.lockfile.environments: its marker evaluator agrees with packaging's on every marker of
the real corpus, and the walk honours overrides, forks and conflicts of real uv.lock files."""

import re
from pathlib import Path

import pytest
from packaging.markers import Marker

from wheeldoc.core.target import marker_environment
from wheeldoc.lockfile.environments import environments, marker_evaluator
from wheeldoc.lockfile.source import load_lockfile

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "real" / "locks"
_MARKER = re.compile(r'marker = "([^"]+)"')


def _corpus_markers() -> list[str]:
    found: set[str] = set()
    for lock in sorted(CORPUS.rglob("uv.lock")):
        found.update(_MARKER.findall(lock.read_text()))
    return sorted(found)


@pytest.mark.parametrize("platform", ["linux-x86_64", "linux-aarch64", "macos-arm64", "windows-amd64"])
@pytest.mark.parametrize("python", ["3.10", "3.12", "3.14"])
def test_evaluator_matches_packaging_on_every_corpus_marker(platform, python):
    env = marker_environment(platform, python)
    mine = marker_evaluator(env)
    markers = _corpus_markers()
    assert len(markers) > 400
    wrong = [m for m in markers if mine(m) != Marker(m).evaluate(env)]
    assert not wrong, wrong[:5]


def test_chosen_extras_are_all_active_at_once():
    env = marker_environment("linux-x86_64", "3.12")
    ev = marker_evaluator(env, {"extra-4-demo-cpu", "extra-4-demo-dev"})
    assert ev("extra == 'extra-4-demo-cpu' and extra == 'extra-4-demo-dev'")
    assert not ev("extra != 'extra-4-demo-cpu'")
    assert ev("sys_platform == 'linux' and (extra == 'extra-4-demo-x' or extra == 'extra-4-demo-dev')")


def _fam(e):
    return {f"{p.name}=={p.version}" for p in e.packages if p.name in ("torch", "torchvision")}


def test_override_to_never_installs_no_torch():
    lock = load_lockfile(CORPUS / "model-optimizer" / "uv.lock")
    for e in environments(lock, marker_environment("linux-x86_64", "3.12")):
        assert not any(p.name == "torch" for p in e.packages), e.name


def test_conflicting_extras_are_separate_environments():
    lock = load_lockfile(CORPUS / "warp" / "uv.lock")
    envs = {e.name: e for e in environments(lock, marker_environment("linux-x86_64", "3.12"))}
    cu12 = next(e for n, e in envs.items() if "torch-cu12" in n)
    cu13 = next(e for n, e in envs.items() if "torch-cu13" in n)
    assert _fam(cu12) == {"torch==2.13.0+cu126"} and _fam(cu13) == {"torch==2.13.0+cu130"}
    assert not any(p.name.endswith("-cu13") for p in cu12.packages)


def test_forks_pair_each_torch_with_its_own_torchvision():
    lock = load_lockfile(CORPUS / "docling" / "uv.lock")
    for platform, want in (("linux-x86_64", {"torch==2.11.0", "torchvision==0.26.0"}),
                           ("macos-arm64", {"torch==2.13.0", "torchvision==0.28.0"})):
        for e in environments(lock, marker_environment(platform, "3.12")):
            assert _fam(e) == want, (platform, e.name)
