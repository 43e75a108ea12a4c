"""Regression tests for the crashes fuzzing found: each input lives in fixtures/fuzz-crashes/.

Each fixture is checked twice: what the parser must now say about it (a value, or an
`InputError` naming the line), and replayed through its harness in a subprocess (libFuzzer
runs a file argument once), so the contract the harness checks holds for it too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from wheeldoc.core.errors import InputError
from wheeldoc.image.reader import open_image
from wheeldoc.lockfile.source import load_lockfile, parse_lockfile

REPO = Path(__file__).resolve().parents[2]
CRASHES = REPO / "fixtures" / "fuzz-crashes"
# Harness input = prefix + fixture bytes (harnesses whose byte 0 picks an input shape).
PREFIX = {"image": b"\x00"}

pytestmark = pytest.mark.fuzz


def test_uv_lock_version_holding_tables_is_read():
    """`version = [{...}]` made the option text join crash (TypeError, lock_uv.py)."""
    path = CRASHES / "uv_lock" / "version-array-of-tables.uv.lock"
    lock = parse_lockfile(str(path), path.read_text(), "uv.lock")
    assert [(p.name, p.version) for p in lock.packages] == [("torch", "2.9.1+cu128")]
    assert lock.option("version")[0].value == "{'path': 'x.whl'}"
    assert lock.option("version")[0].line == 1


def test_uv_lock_wheels_that_is_not_an_array_is_read():
    """`wheels = 1` was iterated (TypeError, lock_uv.py); found by the 480 s campaign."""
    lock = load_lockfile(CRASHES / "uv_lock" / "wheels-not-an-array.uv.lock")
    (torch,) = lock.packages
    assert (torch.name, torch.version, torch.wheels, torch.hashes) == ("torch", "2.9.1+cu128", (), 0)


@pytest.mark.parametrize("name, line", [("invalid-ipv6-url.txt", 2), ("named-invalid-ipv6-url.txt", 1)])
def test_requirement_url_urllib_cannot_split_is_an_input_error(name: str, line: int):
    """`file://[...` / `torch @ http://[...` raised urllib's ValueError (lock_requirements.py)."""
    with pytest.raises(InputError) as err:
        load_lockfile(CRASHES / "requirements" / name)
    assert err.value.line == line
    assert "invalid URL" in err.value.message and "Invalid IPv6 URL" in err.value.message


def test_whiteout_naming_nothing_does_not_remove_the_root():
    """A `.wh.` member at the root removed "/" itself; a later root entry hit KeyError (image_tree.py)."""
    with open_image(CRASHES / "image" / "root-whiteout.tar") as image:
        assert image.files.read("/os-release", 100) == b"ID=debian\n"
        assert image.files.listdir("/") == ["os-release"]
        assert image.warnings == ("layer 0: whiteout /.wh. names no file; ignored",)


FIXTURES = sorted(p for p in CRASHES.glob("*/*") if p.is_file() and p.name != "README.md")


def test_every_crash_fixture_has_a_harness():
    assert FIXTURES
    for p in FIXTURES:
        assert (Path(__file__).parent / f"fuzz_{p.parent.name}.py").is_file(), p


@pytest.mark.slow
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_crash_fixture_replays_clean_through_its_harness(fixture: Path, tmp_path: Path):
    parser = fixture.parent.name
    unit = tmp_path / fixture.name
    unit.write_bytes(PREFIX.get(parser, b"") + fixture.read_bytes())
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / f"fuzz_{parser}.py"),
                           f"-artifact_prefix={tmp_path}/", str(unit)],
                          capture_output=True, text=True, errors="replace", timeout=120, cwd=REPO)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
