"""The cached wheel listing (wheeldoc/abi/listing.py): keyed by the central directory,
equal to what a full open finds, never cached for archives that fail to open."""

from __future__ import annotations

import shutil
import zipfile

import pytest

from tests.conftest import ROOT
from wheeldoc.abi.listing import ListedWheel, central_directory_digest, open_wheel
from wheeldoc.core.cache import Cache
from wheeldoc.core.errors import InputError
from wheeldoc.binary.elf import read_elf_member
from wheeldoc.binary.members import WheelArchive

W = ROOT / "fixtures" / "abi" / "wheels"
T11 = W / "fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"
T12 = W / "fake_torch-2.12.0+cu130-cp311-cp311-linux_x86_64.whl"


def test_digest_is_the_content_of_the_listing(tmp_path):
    copy = tmp_path / T11.name
    shutil.copy(T11, copy)
    assert central_directory_digest(str(copy)) == central_directory_digest(str(T11))
    assert central_directory_digest(str(T12)) != central_directory_digest(str(T11))
    (tmp_path / "x.whl").write_bytes(b"not a zip")
    assert central_directory_digest(str(tmp_path / "x.whl")) is None


def test_second_open_comes_from_the_cache_and_matches(tmp_path):
    cache = Cache(tmp_path / "cache")
    first = open_wheel(str(T11), cache)
    assert isinstance(first, WheelArchive)
    second = open_wheel(str(T11), cache)
    assert isinstance(second, ListedWheel)
    assert second.members == first.members and second.rejected == first.rejected
    assert second.dist_info == first.dist_info and second.metadata() == first.metadata()
    assert second.wheel_info() == first.wheel_info()
    assert second._archive is None, "nothing read yet: the archive stays closed"
    # a member read goes to the archive, and gives the same facts
    a = read_elf_member(first, "torch/lib/libc10_cuda.so")
    b = read_elf_member(second, "torch/lib/libc10_cuda.so")
    assert a.to_json() == b.to_json() and second._archive is not None
    first.close(), second.close()


def test_corrupt_listing_is_rebuilt(tmp_path):
    cache = Cache(tmp_path / "cache")
    open_wheel(str(T12), cache).close()
    (entry,) = (tmp_path / "cache" / "wheel-listing").rglob("*.listing-1")
    cache.put("wheel-listing", entry.name.split(".")[0], "listing-1", {"members": "nonsense"})
    again = open_wheel(str(T12), cache)
    assert isinstance(again, WheelArchive)
    assert isinstance(open_wheel(str(T12), cache), ListedWheel)


@pytest.mark.parametrize("name", ["truncated.whl", "duplicate.whl", "overlap.whl", "bomb.whl"])
def test_hostile_archives_are_never_listed_from_the_cache(tmp_path, name):
    cache = Cache(tmp_path / "cache")
    path = str(ROOT / "fixtures" / "abi" / "hostile" / name)
    for _ in range(2):
        try:
            src = open_wheel(path, cache)
        except InputError:
            continue
        assert isinstance(src, (WheelArchive, ListedWheel))
        assert src.rejected or name == "truncated.whl"  # refused members stay refused
        src.close()


def test_listing_keeps_member_hashes(tmp_path):
    cache = Cache(tmp_path / "cache")
    open_wheel(str(T11), cache).close()
    listed = open_wheel(str(T11), cache)
    with zipfile.ZipFile(T11) as zf:
        record = zf.read("fake_torch-2.11.0+cu130.dist-info/RECORD").decode()
    assert all(m.sha256 for m in listed.members if m.name.endswith(".so"))
    assert len(listed.members) == len([ln for ln in record.splitlines() if ln.strip()])
