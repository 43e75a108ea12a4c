"""Terminal hygiene: tables that fit COLUMNS, NO_COLOR / FORCE_COLOR, no escape codes in -o
files, stdin as `-` with --stdin-filename, progress on stderr only on a terminal."""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

SGR = re.compile("\x1b\\[[0-9;]*m")
KERNELS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "fixtures/kernels").glob("*.so"))
H200 = ("--gpu", "h200", "--driver", "580.95.05")
STORY = "fixtures/dockerfiles/rules/wd401-story.Dockerfile"
MISMATCH = "fixtures/envs/mismatch/lib/python3.12/site-packages"


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    for name in ("COLUMNS", "NO_COLOR", "FORCE_COLOR", "TERM"):
        monkeypatch.delenv(name, raising=False)


def _table_lines(out: str, start: str, stop: str | None) -> list[str]:
    lines = SGR.sub("", out).splitlines()
    i = next(k for k, line in enumerate(lines) if line.startswith(start))
    j = next((k for k, line in enumerate(lines) if k > i and stop and line.startswith(stop)), len(lines))
    return lines[i:j]


# -- width ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("color", ["never", "always"])
def test_kernels_tables_fit_80_columns(cli, monkeypatch, color):
    wide = cli("kernels", *KERNELS, *H200, "--coverage", "--color", "never")
    natural = _table_lines(wide.out, "GPU code on", "fixtures/")
    assert max(map(len, natural)) > 80  # the tables really are wider than 80 columns
    monkeypatch.setenv("COLUMNS", "80")
    res = cli("kernels", *KERNELS, *H200, "--coverage", "--color", color)
    tables = _table_lines(res.out, "GPU code on", "fixtures/")
    assert any(line.startswith("library") for line in tables) and any("Coverage" in line for line in tables)
    too_long = [line for line in tables if len(line) > 80]
    assert not too_long, too_long
    for lib in ("libabi7-lz4.so", "libmixed.so"):  # every row is still there
        assert lib in "\n".join(tables)


def test_doctor_tables_fit_80_columns(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    res = cli("doctor", "--site-packages", MISMATCH, *H200, "--color", "never")
    tables = _table_lines(res.out, "Extensions linking torch", "Errors (")
    assert "torchvision/_C.so  loads" in "\n".join(tables)
    assert sum(line.startswith("library") for line in tables) == 2  # verdicts and coverage
    assert not [line for line in tables if len(line) > 80]


def test_a_pipe_has_no_width_limit(cli):
    res = cli("kernels", *KERNELS, *H200, "--color", "never")
    assert max(map(len, _table_lines(res.out, "GPU code on", "fixtures/"))) > 80


def test_plain_table_wraps_and_keeps_every_cell():
    from wheeldoc.render.table import plain_table

    rows = [["a-very-long-library-name-that-needs-folding.so", "native", "1 (NO_BINARY_FOR_GPU)"]]
    text = plain_table(["library", "verdict", "fail"], rows, width=40)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 40 and len(lines) > 3
    spans = [m.span() for m in re.finditer(r"-+", lines[1])]
    cols = ["".join(line.ljust(40)[a:b].strip() if i < len(spans) - 1 else line[a:].strip()
                    for line in lines[2:]) for i, (a, b) in enumerate(spans)]
    assert cols == ["a-very-long-library-name-that-needs-folding.so", "native", "1 (NO_BINARY_FOR_GPU)"]
    assert plain_table(["a", "b"], [["x", "y"]], width=None) == "a  b\n-  -\nx  y"


# -- colour ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("env, flag, colour", [
    ({}, (), False),                                    # not a terminal
    ({"FORCE_COLOR": "1"}, (), True),                   # https://force-color.org
    ({"NO_COLOR": "1", "FORCE_COLOR": "1"}, (), False),  # NO_COLOR wins
    ({"NO_COLOR": "", "FORCE_COLOR": "1"}, (), True),    # an empty NO_COLOR is not set
    ({"NO_COLOR": "1"}, ("--color", "always"), True),    # the flag beats the environment
    ({"FORCE_COLOR": "1"}, ("--color", "never"), False),
    ({"FORCE_COLOR": "1", "TERM": "dumb"}, (), True),
    ({"TERM": "dumb"}, ("--color", "auto"), False),
])
def test_color_decision(cli, monkeypatch, env, flag, colour):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    res = cli("check", STORY, *flag)
    assert ("\x1b[" in res.out) is colour
    assert SGR.sub("", res.out).startswith(f"{STORY}:14: WD401 warning")


@pytest.mark.parametrize("flag", [(), ("--color", "always")])
def test_no_escape_codes_in_output_files(cli, monkeypatch, tmp_path, flag):
    monkeypatch.setenv("FORCE_COLOR", "1")
    out = tmp_path / "report.txt"
    res = cli("check", STORY, "-o", str(out), *flag)
    assert res.code == 1 and res.out == ""
    text = out.read_text()
    assert "WD401" in text and "\x1b" not in text


def _on_a_terminal(*argv: str, env: dict[str, str]) -> str:
    """Run wheeldoc with stdout and stderr on a real pseudo-terminal; return what it drew."""
    master, slave = pty.openpty()
    base = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    proc = subprocess.Popen([sys.executable, "-m", "wheeldoc", *argv], cwd=ROOT, stdout=slave, stderr=slave,
                            stdin=subprocess.DEVNULL, env={**base, "TERM": "xterm", **env})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def test_real_terminal_colour_and_no_color():
    assert "\x1b[" in _on_a_terminal("check", STORY, env={})
    plain = _on_a_terminal("check", STORY, env={"NO_COLOR": "1"})
    assert "WD401" in plain and "\x1b" not in plain


# -- stdin ---------------------------------------------------------------------------------------

def _stdin(monkeypatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


@pytest.mark.parametrize("path, name", [
    (STORY, "docker/Dockerfile.prod"),
    ("fixtures/story/requirements.txt", "requirements.txt"),
    ("fixtures/locks/cpu-torch/hit-uv-project-cpu-index/uv.lock", "uv.lock"),
])
def test_stdin_reads_like_the_file(cli, monkeypatch, path, name):
    from_file = cli("check", path, "--output-format", "concise")
    _stdin(monkeypatch, (ROOT / path).read_bytes())
    res = cli("check", "-", "--stdin-filename", name, "--output-format", "concise")
    assert res.code == from_file.code == 1
    assert res.out == from_file.out.replace(path, name) and name in res.out


def test_stdin_name_decides_the_parser(cli, monkeypatch):
    _stdin(monkeypatch, (ROOT / STORY).read_bytes())
    res = cli("check", "-", "--stdin-filename", "requirements.txt", "--output-format", "concise")
    assert res.code == 2 and "requirements.txt" in res.err and "WD401" not in res.out


@pytest.mark.parametrize("argv, msg", [
    (("-",), "needs --stdin-filename"),
    (("-", "-", "--stdin-filename", "uv.lock"), "once"),
    ((STORY, "--stdin-filename", "Dockerfile"), "give `-`"),
    (("-", "--stdin-filename", "Dockerfile", "--fix"), "--fix rewrites files"),
])
def test_stdin_usage_errors(cli, monkeypatch, argv, msg):
    _stdin(monkeypatch, b"FROM scratch\n")
    res = cli("check", *argv)
    assert res.code == 2 and msg in res.err and res.out == ""


def test_stdin_bad_bytes_are_an_input_error(cli, monkeypatch):
    _stdin(monkeypatch, b"\xff\xfe\x00garbage")
    res = cli("check", "-", "--stdin-filename", "uv.lock")
    assert res.code == 2 and res.err.startswith("wheeldoc: error: uv.lock:1:")


def test_stdin_diff_works(cli, monkeypatch):
    _stdin(monkeypatch, (ROOT / STORY).read_bytes())
    res = cli("check", "-", "--stdin-filename", "Dockerfile", "--diff")
    assert "+ENV UV_HTTP_TIMEOUT=600" in res.out


# -- progress ------------------------------------------------------------------------------------

class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal_and_not_quiet():
    from wheeldoc.core import terminal

    tty, pipe = _Tty(), io.StringIO()
    terminal.progress("reading \x1b[2Jx", tty)
    terminal.progress("reading x", pipe)
    assert tty.getvalue() == "wheeldoc: reading \\x1b[2Jx\n" and pipe.getvalue() == ""
    terminal.set_quiet(True)
    try:
        quiet = _Tty()
        terminal.progress("reading x", quiet)
        assert quiet.getvalue() == ""
    finally:
        terminal.set_quiet(False)


def test_download_is_announced_with_name_and_size_before_it_starts(monkeypatch, tmp_path):
    from wheeldoc.abi import fetch
    from wheeldoc.core.errors import InputError

    events = []
    monkeypatch.setattr("wheeldoc.core.terminal.progress", lambda msg, stream=None: events.append(("say", msg)))

    def download(url, out):
        events.append(("download", url.rsplit("/", 1)[-1]))
        raise InputError(url, "offline")

    monkeypatch.setattr(fetch, "download", download)
    wheel = fetch.LockedWheel("torch", "2.11.0", "https://download.pytorch.org/whl/cu130/torch-2.11.0%2Bcu130-"
                              "cp312-cp312-manylinux_2_28_x86_64.whl", "ab" * 32, 942_000_000)
    with pytest.raises(InputError):
        fetch.fetch(wheel, tmp_path)
    assert events[0] == ("say", "downloading torch-2.11.0+cu130-cp312-cp312-manylinux_2_28_x86_64.whl "
                                "(898.4 MiB) from download.pytorch.org")
    assert events[1][0] == "download"


def test_range_says_how_many_wheels_it_will_fetch(tmp_path):
    from wheeldoc.abi.fetch import LockedWheel, plan_message

    local = tmp_path / "torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64.whl"
    local.write_bytes(b"x")
    wheels = [LockedWheel("torch", "2.11.0", "https://h/torch-2.11.0-cp312-cp312-linux_x86_64.whl", "a" * 64, 3 << 30),
              LockedWheel("torch", "2.10.0", "https://h/torch-2.10.0-cp312-cp312-linux_x86_64.whl", "b" * 64, 1 << 30),
              LockedWheel("torch", "2.9.0", local.as_uri(), None)]
    assert plan_message(wheels, tmp_path) == "checking 3 releases: will download 2 wheels (4.0 GiB), 1 local or cached"
    assert plan_message(wheels[2:], tmp_path) == "checking 1 release: every wheel is local or cached, nothing to download"


def test_pylock_sizes_are_read():
    from wheeldoc.abi.fetch import parse_pylock

    text = ('lock-version = "1.0"\n[[packages]]\nname = "torch"\nversion = "2.11.0"\n'
            'wheels = [{ url = "https://h/t.whl", size = 1234, hashes = { sha256 = "ab" } }]\n')
    assert parse_pylock(text)[0].size == 1234
