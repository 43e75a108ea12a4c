"""`wheeldoc cache dir|clean`: the folder the analyzers really write to, removed after a real
run with what was freed reported, and the folders `clean` refuses (exit 2, nothing touched)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wheeldoc.core.cache import Cache, default_dir
from wheeldoc.lockfile.resolve import resolved_dir

ROOT = Path(__file__).resolve().parents[2]
STORY_WHEEL = next((ROOT / "fixtures" / "kernels" / "story").glob("*.whl"))


@pytest.fixture
def env(monkeypatch, tmp_path):
    """A private HOME; no cache variables set."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    monkeypatch.delenv("WHEELDOC_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    return tmp_path


def test_dir_follows_the_variables(cli, env, monkeypatch):
    res = cli("cache", "dir")
    assert res.code == 0 and res.out == f"{env / 'home' / '.cache' / 'wheeldoc'}\n"
    monkeypatch.setenv("XDG_CACHE_HOME", str(env / "xdg"))
    assert cli("cache", "dir").out == f"{env / 'xdg' / 'wheeldoc'}\n"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: absolute paths only
    assert cli("cache", "dir").out == f"{env / 'home' / '.cache' / 'wheeldoc'}\n"
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(env / "mine"))
    assert cli("cache", "dir").out == f"{env / 'mine'}\n"
    # the folder `dir` names is the one the analyzers write to
    assert Cache().root == default_dir() == env / "mine" and resolved_dir() == env / "mine" / "resolved"


def test_clean_removes_what_a_real_run_wrote(cli, env, monkeypatch):
    cache = env / "xdg" / "wheeldoc"
    monkeypatch.setenv("XDG_CACHE_HOME", str(env / "xdg"))
    assert cli("kernels", str(STORY_WHEEL), "--gpu", "gb10", "--driver", "580.95.05").code in (0, 1)
    written = [p for p in cache.rglob("*") if p.is_file()]
    assert written, "the kernels verb cached nothing: the test would prove nothing"
    (cache / "resolved").mkdir()
    (cache / "resolved" / "requirements.lock").write_text("torch==2.11.0\n")
    (cache / "wheels" / ("a" * 64)).mkdir(parents=True)
    res = cli("cache", "clean")
    assert res.code == 0, res.err
    assert res.out.startswith(f"Removed {cache}: {len(written) + 1:,} files, ") and res.out.rstrip().endswith("freed")
    assert not cache.exists() and (env / "xdg").is_dir()  # only wheeldoc's folder went
    res = cli("cache", "clean")
    assert res.code == 0 and res.out == f"Nothing to clean: {cache} does not exist\n"


@pytest.mark.parametrize("where,why", [
    ("/", "it is the root of the file system"),
    ("HOME", "it is your home folder or a folder above it"),
    ("ABOVE_HOME", "it is your home folder or a folder above it"),
    ("SHARED", "it holds entries wheeldoc never writes (notes.txt, pip/http)"),
    ("FILE", "it is not a folder"),
    ("LINK", "it is a symbolic link"),
])
def test_clean_refuses(cli, env, monkeypatch, where, why):
    home = env / "home"
    (home / "keep.txt").write_text("mine")
    shared = env / "shared"
    (shared / "pip" / "http").mkdir(parents=True)
    (shared / "notes.txt").write_text("x")
    (env / "file").write_text("x")
    (env / "link").symlink_to(shared)
    target = {"/": "/", "HOME": str(home), "ABOVE_HOME": str(env), "SHARED": str(shared),
              "FILE": str(env / "file"), "LINK": str(env / "link")}[where]
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", target)
    res = cli("cache", "clean")
    assert res.code == 2
    assert res.err.startswith(f"wheeldoc: error: {target}: not removing the cache folder (WHEELDOC_CACHE_DIR): {why}")
    assert (home / "keep.txt").read_text() == "mine" and (shared / "notes.txt").exists() and (env / "file").exists()


def test_clean_refuses_the_current_folder(cli, env, monkeypatch):
    work = env / "project"
    (work / "elf" / "ab").mkdir(parents=True)  # looks like a cache, but it is where we stand
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(work))
    res = cli("cache", "clean", cwd=work)
    assert res.code == 2 and "it is the current folder or a folder above it" in res.err
    assert (work / "elf" / "ab").is_dir()


def test_cache_needs_an_action(cli):
    with pytest.raises(SystemExit) as e:
        cli("cache")
    assert e.value.code == 2
    with pytest.raises(SystemExit):
        cli("cache", "purge")


def test_the_cache_verb_is_light(tmp_path):
    """`wheeldoc cache dir` imports no analyzer family and no rich (a shell prompt can call it)."""
    import subprocess
    import sys

    code = ("import sys; from wheeldoc.cli import main; main(['cache', 'dir']); "
            "print(sorted({m.split('.')[0] if not m.startswith('wheeldoc.') else '.'.join(m.split('.')[:2]) "
            "for m in sys.modules if m.startswith(('wheeldoc.', 'rich', 'packaging'))}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "WHEELDOC_CACHE_DIR": str(tmp_path)}).stdout.splitlines()
    assert out[0] == str(tmp_path)
    assert set(eval(out[1])) <= {"wheeldoc.cli", "wheeldoc.core", "wheeldoc.verbs"}, out[1]
