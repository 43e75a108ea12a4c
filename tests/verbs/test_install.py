"""The footprint of a real install (docs/install.md): the built wheel installed by `uv tool
install` and by pre-commit, each under 40 MiB measured with `du`, and the installed base
wheeldoc (no uv, lz4, zstandard or pyelftools) runs the offline verbs and names the `resolve`
extra when `--resolve` finds no uv.

Slow: builds the wheel and installs it twice (dependencies from the package index, usually
from uv's and pip's caches).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wheeldoc import __version__

ROOT = Path(__file__).resolve().parents[2]
LIMIT_KIB = 40 * 1024
pytestmark = pytest.mark.slow


def _script():
    spec = importlib.util.spec_from_file_location("measure_footprint", ROOT / "scripts" / "measure_footprint.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def installs(tmp_path_factory):
    pre_commit = Path(sys.executable).parent / "pre-commit"
    if not pre_commit.exists():
        pytest.skip("pre-commit is not installed (dev dependency group)")
    return _script().measure(("uv-tool", "pre-commit"), tmp_path_factory.mktemp("footprint"),
                             pre_commit_exe=str(pre_commit))


@pytest.mark.parametrize("kind", ["uv-tool", "pre-commit"])
def test_install_is_under_40_mib(installs, kind):
    r = installs[kind]
    assert 1024 < r["kib"] < LIMIT_KIB, r
    assert r["after_first_run_kib"] < LIMIT_KIB, r


@pytest.mark.parametrize("kind", ["uv-tool", "pre-commit"])
def test_the_installed_base_wheeldoc_runs(installs, kind):
    version, story, kernels = installs[kind]["first_run"]
    assert version["exit"] == 0 and version["stdout"].split()[-1] == __version__
    assert story["exit"] == 1 and "WD101" in story["stdout"], story
    assert kernels["exit"] == 0 and "comp-all.1.sm_80.cubin" in kernels["stdout"], kernels  # zstd, lz4 inside
    for run in (version, story, kernels):
        assert "Traceback" not in run["stderr"], run


def test_resolve_without_uv_names_the_extra(installs, tmp_path):
    exe = Path(installs["uv-tool"]["wheeldoc"])
    res = subprocess.run([str(exe), "check", "--resolve", "fixtures/story/requirements.in"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PATH": str(tmp_path)})  # an empty folder: no uv anywhere
    assert res.returncode == 2, res.stdout + res.stderr
    assert "wheeldoc[resolve]" in res.stderr + res.stdout and "Traceback" not in res.stderr
