""".pre-commit-hooks.yaml through the real `pre-commit try-repo`.

The hook repository is a fresh git repository holding this checkout's tracked files as they
are on disk (what a clean clone at this commit holds, plus uncommitted edits to tracked files),
so the test does not depend on HEAD being pushed anywhere and never sees untracked work.
pre-commit builds wheeldoc from it into its own virtualenv (dependencies from the package
index); PRE_COMMIT_HOME is a temporary folder.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
R = ROOT / "fixtures" / "dockerfiles" / "rules"
pytestmark = pytest.mark.slow

GIT_ENV = {"GIT_AUTHOR_NAME": "wheeldoc tests", "GIT_AUTHOR_EMAIL": "tests@wheeldoc.invalid",
           "GIT_COMMITTER_NAME": "wheeldoc tests", "GIT_COMMITTER_EMAIL": "tests@wheeldoc.invalid",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout


def _pre_commit() -> list[str]:
    exe = Path(sys.executable).parent / "pre-commit"
    if not exe.exists():
        pytest.skip("pre-commit is not installed (dev dependency group)")
    return [str(exe)]


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> Path:
    """A one-commit git repository with the tracked files of this checkout."""
    repo = tmp_path_factory.mktemp("hook-repo")
    files = _git(ROOT, "ls-files", "-z").split("\0") + [".pre-commit-hooks.yaml"]
    for rel in filter(None, files):
        src = ROOT / rel
        if not src.is_file():  # deleted in the working tree
            continue
        dst = repo / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "snapshot for pre-commit try-repo")
    return repo


@pytest.fixture(scope="module")
def user_repo(tmp_path_factory) -> Path:
    repo = tmp_path_factory.mktemp("user-repo")
    (repo / "bad").mkdir()
    (repo / "good").mkdir()
    shutil.copy(R / "wd401-story.Dockerfile", repo / "bad" / "Dockerfile")
    shutil.copy(R / "wd401-story-fixed.Dockerfile", repo / "good" / "Dockerfile")
    shutil.copy(ROOT / "fixtures" / "story" / "requirements.txt", repo / "bad" / "requirements.txt")
    shutil.copy(ROOT / "fixtures" / "locks" / "clean" / "ok-uv-project-cu130" / "uv.lock", repo / "good" / "uv.lock")
    (repo / "notes.md").write_text("not checked\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    return repo


def _try_repo(hook_repo: Path, user_repo: Path, home: Path, hook: str, *files: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("VIRTUAL_ENV", None)
    return subprocess.run([*_pre_commit(), "try-repo", str(hook_repo), hook, "--files", *files, "--verbose"],
                          cwd=user_repo, capture_output=True, text=True, env=env, timeout=900)


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


def test_dockerfile_hook_fails_on_the_story_and_passes_when_fixed(hook_repo, user_repo, home):
    bad = _try_repo(hook_repo, user_repo, home, "wheeldoc-dockerfile", "bad/Dockerfile")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "WD401" in bad.stdout and "UV_HTTP_TIMEOUT" in bad.stdout and "Failed" in bad.stdout
    assert "bad/Dockerfile:14:1: WD401 warning: [*] " in bad.stdout  # concise, the hooks' default
    good = _try_repo(hook_repo, user_repo, home, "wheeldoc-dockerfile", "good/Dockerfile")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "Passed" in good.stdout


def test_dockerfile_hook_only_takes_dockerfiles(hook_repo, user_repo, home):
    res = _try_repo(hook_repo, user_repo, home, "wheeldoc-dockerfile", "notes.md", "good/uv.lock")
    assert res.returncode == 0 and "no files to check" in res.stdout.lower(), res.stdout


def test_lockfile_hook(hook_repo, user_repo, home):
    bad = _try_repo(hook_repo, user_repo, home, "wheeldoc-lockfile", "bad/requirements.txt", "good/Dockerfile")
    assert bad.returncode == 1 and "WD101" in bad.stdout, bad.stdout + bad.stderr
    good = _try_repo(hook_repo, user_repo, home, "wheeldoc-lockfile", "good/uv.lock", "notes.md")
    assert good.returncode == 0, good.stdout + good.stderr


@pytest.fixture(scope="module")
def named_repo(tmp_path_factory) -> Path:
    """Every name of tests/verbs/test_discovery.py, each holding a file with a finding, so the
    hook's output names exactly the files pre-commit handed it."""
    from tests.verbs.test_discovery import DOCKERFILES, LOCKFILES, NOT_DOCKERFILES, NOT_LOCKFILES

    repo = tmp_path_factory.mktemp("named-repo")
    docker = (R / "wd401-story.Dockerfile").read_bytes()
    story = (ROOT / "fixtures" / "story" / "requirements.txt").read_bytes()
    for name in DOCKERFILES + NOT_DOCKERFILES:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(docker)
    for name in LOCKFILES + NOT_LOCKFILES:
        if "uv.lock" in name or "pylock" in name or name == "pyproject.toml":
            continue
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_bytes(story)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    return repo


@pytest.mark.parametrize("hook", ["wheeldoc-dockerfile", "wheeldoc-lockfile"])
def test_the_hooks_take_exactly_the_names_check_dir_discovers(hook_repo, named_repo, home, hook):
    from wheeldoc.verbs.discover import discover

    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("VIRTUAL_ENV", None)
    res = subprocess.run([*_pre_commit(), "try-repo", str(hook_repo), hook, "--all-files", "--verbose"],
                         cwd=named_repo, capture_output=True, text=True, env=env, timeout=900)
    assert res.returncode == 1, res.stdout + res.stderr
    kind = "Dockerfile" if hook.endswith("dockerfile") else "requirements"
    tracked = _git(named_repo, "ls-files").split()
    named = {p for p in tracked if re.search(rf"(^|\s){re.escape(p)}:\d+", res.stdout, re.M)}
    found = {p.relative_to(named_repo).as_posix() for p in discover(named_repo).files}
    want = {p for p in found if (kind == "Dockerfile") == ("ockerfile" in p.lower() or "ontainerfile" in p.lower())}
    assert named == want, (sorted(named ^ want), res.stdout[-3000:])
