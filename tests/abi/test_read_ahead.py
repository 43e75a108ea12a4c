"""EXT's libraries are read from the moment it is opened (abi/site.py `read_ahead`): the big
deflated ones in forked children, the rest on threads; a Site takes the reads over and sees the
same facts as reading each member itself."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wheeldoc.abi import site as sitemod
from wheeldoc.abi.site import Site, cancel_read_ahead, read_ahead
from wheeldoc.binary import elf as elfmod
from wheeldoc.binary.elf import read_elf_member
from wheeldoc.binary.forked import can_fork
from wheeldoc.binary.members import WheelArchive
from wheeldoc.core.cache import Cache

WHEEL = Path(__file__).resolve().parents[2] / "fixtures" / "abi" / "wheels" / "fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"


def test_site_takes_over_the_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(elfmod, "STREAM_MIN", 0)  # every deflated member counts as big here
    monkeypatch.setattr(sitemod, "FORK_MIN", 0)
    with WheelArchive(WHEEL) as wheel:
        may_fork = can_fork()  # (asked before the reader threads start)
        read_ahead(wheel, Cache(tmp_path))
        started = dict(wheel._wheeldoc_ahead)
        forked = [wheel.member(n) for n, f in started.items() if isinstance(f, sitemod._Forked)]
        if may_fork:  # the largest deflated library (at most MAX_CHILDREN of them) inflates in a child
            assert len(forked) == sitemod.MAX_CHILDREN == 1 and forked[0].compression == "deflated"
            assert all(wheel.member(n).size <= forked[0].size for n in started)
        else:
            assert not forked
        site = Site(Cache(tmp_path))
        entries = site.add_source(wheel, "torch", "torch")
        assert {e.member for e in entries} == set(started)
        for e in entries:
            assert site.elf(e) == read_elf_member(wheel, e.member)
        assert not wheel._wheeldoc_ahead  # each read taken over once
        site.close()
    if may_fork:
        with pytest.raises(ChildProcessError):
            os.waitpid(-1, os.WNOHANG)


def test_closing_cancels_what_was_not_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(elfmod, "STREAM_MIN", 0)
    monkeypatch.setattr(sitemod, "FORK_MIN", 0)
    with WheelArchive(WHEEL) as wheel:
        read_ahead(wheel, None)
        assert wheel._wheeldoc_ahead
        cancel_read_ahead(wheel)
        assert not wheel._wheeldoc_ahead
    if can_fork():
        with pytest.raises(ChildProcessError):
            os.waitpid(-1, os.WNOHANG)


def test_the_switch_interval_is_given_back(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    before = sys.getswitchinterval()
    with WheelArchive(WHEEL) as wheel:
        read_ahead(wheel, None)
        assert sys.getswitchinterval() <= sitemod.SWITCH_INTERVAL
        cancel_read_ahead(wheel)
    sitemod.shutdown_readers()
    assert sys.getswitchinterval() == before
