"""A big member's ELF facts read in a forked child (binary/forked.py): same facts as in-process,
a failing child leaves the reading (and its error) to the parent, nothing is left running."""

from __future__ import annotations

import os
import threading
import zipfile
from pathlib import Path

import pytest

from wheeldoc.binary import elf as elfmod
from wheeldoc.binary import forked
from wheeldoc.binary.elf import read_elf_member
from wheeldoc.binary.members import WheelArchive
from wheeldoc.core.cache import Cache
from wheeldoc.core.errors import InputError

ABI = Path(__file__).resolve().parents[2] / "fixtures" / "abi"
WHEEL = ABI / "wheels" / "fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"
MEMBER = "torch/lib/libc10_cuda.so"

pytestmark = pytest.mark.skipif(not forked.can_fork(), reason="fork is used on Linux only")


def no_children_left() -> bool:
    try:
        os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def one_thread() -> None:
    alive = [t.name for t in threading.enumerate() if t is not threading.current_thread()]
    assert not alive, f"threads left running by earlier tests: {alive}"


def test_child_facts_equal_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one_thread()
    monkeypatch.setattr(elfmod, "STREAM_MIN", 0)  # the small fixture is streamed, as a big member is
    cache = Cache(tmp_path)
    with WheelArchive(WHEEL) as wheel:
        child = forked.fork_read(wheel, MEMBER, cache)
        assert child is not None
        got = child.result()
        assert got is not None and got == read_elf_member(wheel, MEMBER)
        assert got.path == str(WHEEL) and got.member == MEMBER
        assert (cache.get("elf-deflated", wheel.stored_sha256(MEMBER), elfmod.PARSER_VERSION)
                is not None)  # the child stored what it learnt: the next run is warm
    assert no_children_left()


def test_failing_child_leaves_the_error_to_the_parent(tmp_path: Path) -> None:
    one_thread()
    broken = tmp_path / "broken-1.0-py3-none-any.whl"
    with zipfile.ZipFile(broken, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("broken.so", b"\x7fELF" + bytes(60))
    with WheelArchive(broken) as wheel:
        child = forked.fork_read(wheel, "broken.so", None)
        assert child is not None and child.result() is None
        with pytest.raises(InputError):
            read_elf_member(wheel, "broken.so")
    assert no_children_left()


def test_cancel_stops_and_reaps_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    one_thread()
    monkeypatch.setattr(elfmod, "read_elf_member", lambda *a, **k: os.pause())  # a child that never ends
    with WheelArchive(WHEEL) as wheel:
        child = forked.fork_read(wheel, MEMBER, None)
        assert child is not None
        child.cancel()
        assert child.result() is None
    assert no_children_left()


def test_no_fork_while_another_thread_runs() -> None:
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        with WheelArchive(WHEEL) as wheel:
            assert forked.fork_read(wheel, MEMBER, None) is None
    finally:
        stop.set()
        t.join()


def test_a_reply_that_is_not_facts_leaves_the_reading_to_the_parent(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parent never trusts the pipe blindly: a reply that does not parse as ELF facts (here,
    another parser's facts) is None, and the member is read in-process."""
    one_thread()

    class Other:
        def to_json(self) -> dict:
            return {"parser": "not-this-one"}

    monkeypatch.setattr(elfmod, "read_elf_member", lambda *a, **k: Other())  # what the child runs
    with WheelArchive(WHEEL) as wheel:
        child = forked.fork_read(wheel, MEMBER, None)
        assert child is not None and child.result() is None
    assert no_children_left()
