"""`wheeldoc check DIR` finds, recursively and honouring .gitignore, exactly the names the
pre-commit hooks match: one definition (wheeldoc/core/names.py), spelled verbatim in
.pre-commit-hooks.yaml. The real pre-commit run on these names is in test_precommit_hooks.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT
from wheeldoc.core.names import DOCKERFILE_PATTERN, LOCKFILE_PATTERN, is_dockerfile_path, is_lockfile_path

DOCKERFILES = ["Dockerfile", "docker/Dockerfile.prod", "Dockerfile-cuda", "app.dockerfile", "ci/gpu.Dockerfile",
               "Containerfile", "deploy/Dockerfile_dev", "x/DOCKERFILE"]
NOT_DOCKERFILES = ["Dockerfile.dockerignore", "Dockerfile.j2", "docker/Dockerfile.in", "Dockerfile.md",
                   "mydockerfile", "dockerfiles/notes.txt", "docker-compose.yml"]
LOCKFILES = ["uv.lock", "sub/uv.lock", "pylock.toml", "pylock.gpu.toml", "requirements.txt",
             "requirements-dev.txt", "dev-requirements.txt", "requirements/base.txt", "svc/requirements/gpu.txt",
             "deps.lock.txt", "constraints.txt", "requirements-dev.lock"]
NOT_LOCKFILES = ["requirements.in", "pyproject.toml", "README.txt", "requirements/sub/x.txt",
                 "requirements/base.in", "pylock.a.b.toml", "uv.lock.bak", "notes/requirements.md"]


def hook_patterns() -> dict[str, str]:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    return {h["id"]: h["files"] for h in hooks}


def test_the_hooks_spell_the_same_patterns():
    hooks = hook_patterns()
    assert hooks == {"wheeldoc-dockerfile": DOCKERFILE_PATTERN, "wheeldoc-lockfile": LOCKFILE_PATTERN}


@pytest.mark.parametrize("path", DOCKERFILES + NOT_DOCKERFILES + LOCKFILES + NOT_LOCKFILES)
def test_each_name_through_the_hooks_and_the_code(path):
    hooks = hook_patterns()
    want_docker, want_lock = path in DOCKERFILES, path in LOCKFILES
    assert bool(re.search(hooks["wheeldoc-dockerfile"], path)) == is_dockerfile_path(path) == want_docker
    assert bool(re.search(hooks["wheeldoc-lockfile"], path)) == is_lockfile_path(path) == want_lock


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return root


DOCKER = "FROM python:3.12-slim\nRUN echo ok\n"
PIN = "numpy==2.0.0\n"


def inputs(cli, root: Path, *extra: str) -> list[str]:
    res = cli("check", ".", *extra, "--format", "json", cwd=root)
    assert res.code in (0, 1), res.err
    return res.json()["inputs"]


def test_check_dot_is_recursive_and_finds_every_hook_name(cli, tmp_path):
    files = {n: DOCKER for n in DOCKERFILES} | {n: PIN for n in LOCKFILES if "uv.lock" not in n
                                                  and "pylock" not in n}
    files |= {n: "\n" for n in NOT_DOCKERFILES + NOT_LOCKFILES}
    root = tree(tmp_path, files)
    want = sorted(n for n in files if n in DOCKERFILES or n in LOCKFILES)
    assert inputs(cli, root) == want


def test_gitignore_and_environments_are_skipped(cli, tmp_path):
    root = tree(tmp_path, {
        ".gitignore": "# build output\nbuild/\n/requirements-root.txt\n*.generated.txt\n!keep.generated.txt\n"
                      "docs/**/Dockerfile\n",
        "build/requirements.txt": PIN, "src/build/requirements.txt": PIN,  # `build/` matches at any depth
        "requirements-root.txt": PIN, "sub/requirements-root.txt": PIN,  # `/x` anchors to the root
        "requirements/a.generated.txt": PIN, "requirements/keep.generated.txt": PIN,
        "docs/x/y/Dockerfile": DOCKER, "docs/Dockerfile": DOCKER,
        "svc/.gitignore": "requirements-local.txt\n", "svc/requirements-local.txt": PIN,
        "svc/requirements.txt": PIN, "requirements-local.txt": PIN,
        ".venv/requirements.txt": PIN, "env/pyvenv.cfg": "home = /usr/bin\n", "env/requirements.txt": PIN,
        "node_modules/x/Dockerfile": DOCKER, ".git/requirements.txt": PIN,
        "lib/python3.12/site-packages/pkg/requirements.txt": PIN,
        "Dockerfile": DOCKER,
    })
    # `docs/**/Dockerfile`: `**/` is zero or more folders (git), so docs/Dockerfile goes too
    assert inputs(cli, root) == ["Dockerfile", "requirements-local.txt", "requirements/keep.generated.txt",
                                 "sub/requirements-root.txt", "svc/requirements.txt"]


def test_an_empty_tree_and_a_partial_walk_are_said(cli, tmp_path, monkeypatch):
    res = cli("check", str(tmp_path), "--format", "json")
    assert res.code == 1 and "no lockfile or Dockerfile in this directory or below it" in res.out
    import wheeldoc.verbs.discover as discover

    monkeypatch.setattr(discover, "MAX_ENTRIES", 3)
    root = tree(tmp_path / "big", {f"d{i}/requirements.txt": PIN for i in range(5)})
    res = cli("check", str(root), "--format", "json")
    notes = [f["message"] for f in res.json()["findings"] if f["rule"] == "WD002"]
    assert any("stopped after 3 entries" in n for n in notes) and res.code == 1


def test_explicit_files_keep_their_meaning(cli, tmp_path):
    root = tree(tmp_path, {"Dockerfile.j2": DOCKER})
    res = cli("check", "Dockerfile.j2", "--format", "json", cwd=root)
    assert res.code == 0 and res.json()["inputs"] == ["Dockerfile.j2"]


def test_gitignore_matching_agrees_with_git(cli, tmp_path):
    """The same tree through git itself (`ls-files --others --exclude-standard`) as the oracle."""
    import subprocess

    root = tree(tmp_path, {
        ".gitignore": "build/\n/requirements-root.txt\n*.generated.txt\n!keep.generated.txt\na/**/Dockerfile\n"
                      "[Dd]eploy*/\n**/tmp/requirements.txt\nreq?.lock.txt\n\\#odd.lock.txt\n",
        "build/requirements.txt": PIN, "src/build/requirements.txt": PIN, "requirements-root.txt": PIN,
        "sub/requirements-root.txt": PIN, "requirements/a.generated.txt": PIN,
        "requirements/keep.generated.txt": PIN, "a/Dockerfile": DOCKER, "a/b/c/Dockerfile": DOCKER,
        "b/a/Dockerfile": DOCKER, "Deploy-x/Dockerfile": DOCKER, "deploy2/uv.lock.txt": PIN,
        "x/tmp/requirements.txt": PIN, "tmp/requirements.txt": PIN, "req1.lock.txt": PIN, "req12.lock.txt": PIN,
        "#odd.lock.txt": PIN, "svc/.gitignore": "requirements-local.txt\n!/Dockerfile\n",
        "svc/requirements-local.txt": PIN, "svc/deep/requirements-local.txt": PIN, "svc/Dockerfile": DOCKER,
        "Dockerfile": DOCKER,
    })
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    listed = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=root, check=True,
                            capture_output=True, text=True).stdout.split()
    want = sorted(p for p in listed if is_lockfile_path(p) or is_dockerfile_path(p))
    assert len(want) >= 5
    assert inputs(cli, root) == want
