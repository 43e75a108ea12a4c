"""wheeldoc.core.cache: content-addressed, checksummed, safe under concurrent writers."""

from __future__ import annotations

import dataclasses
import hashlib
import multiprocessing
import os
from pathlib import Path

import pytest

from wheeldoc.core.cache import Cache, default_dir, sha256_file
from wheeldoc.binary.elf import PARSER_VERSION, ElfInfo, read_elf_member
from wheeldoc.binary.members import WheelArchive

ABI = Path(__file__).resolve().parents[2] / "fixtures" / "abi"
TORCH_V1 = ABI / "wheels" / "fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"
KEY = hashlib.sha256(b"content").hexdigest()


def test_round_trip_and_miss(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    assert cache.get("elf", KEY, "v1") is None
    value = {"names": ["a", "b"], "n": 3, "nested": {"x": [1.5, None, True]}, "text": "é"}
    assert cache.put("elf", KEY, "v1", value)
    assert cache.get("elf", KEY, "v1") == value
    assert cache.get("elf", KEY, "v2") is None  # the parser version is part of the key
    assert (cache.hits, cache.misses) == (1, 2)
    assert cache.path("elf", KEY, "v1") == tmp_path / "elf" / KEY[:2] / f"{KEY}.v1"


def test_location_from_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path / "explicit"))
    assert default_dir() == tmp_path / "explicit" and Cache().root == tmp_path / "explicit"
    monkeypatch.delenv("WHEELDOC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_dir() == tmp_path / "xdg" / "wheeldoc"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_dir() == tmp_path / "home" / ".cache" / "wheeldoc"


@pytest.mark.parametrize("kind, sha, version", [
    ("../x", KEY, "v1"), ("elf", "abc", "v1"), ("elf", KEY.upper(), "v1"), ("elf", KEY, "v1/../../x"),
])
def test_keys_are_validated(tmp_path: Path, kind: str, sha: str, version: str) -> None:
    with pytest.raises(ValueError):
        Cache(tmp_path).put(kind, sha, version, 1)


def test_none_is_not_a_value(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        Cache(tmp_path).put("elf", KEY, "v1", None)


@pytest.mark.parametrize("damage", ["flip", "truncate", "magic", "empty", "garbage-json"])
def test_corrupted_entry_is_detected_and_rebuilt(tmp_path: Path, damage: str) -> None:
    cache = Cache(tmp_path)
    cache.put("elf", KEY, "v1", {"value": list(range(100))})
    path = cache.path("elf", KEY, "v1")
    raw = bytearray(path.read_bytes())
    if damage == "flip":
        raw[-5] ^= 0xFF
    elif damage == "truncate":
        raw = raw[: len(raw) // 2]
    elif damage == "magic":
        raw[:4] = b"XXXX"
    elif damage == "empty":
        raw = bytearray()
    else:  # a valid checksum over a payload that is not zlib-compressed JSON
        import zlib

        payload = zlib.compress(b"{not json")
        raw = bytearray(b"WDC1" + hashlib.sha256(payload).digest() + payload)
    path.write_bytes(bytes(raw))
    assert cache.get("elf", KEY, "v1") is None
    assert cache.rebuilt == 1 and not path.exists()
    built = []
    value = cache.get_or_build("elf", KEY, "v1", lambda: built.append(1) or {"value": [7]})
    assert value == {"value": [7]} and built == [1]
    assert cache.get("elf", KEY, "v1") == {"value": [7]}


def test_get_or_build_rebuilds_values_the_decoder_rejects(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    cache.put("elf", KEY, "v1", {"old": "layout"})
    value = cache.get_or_build("elf", KEY, "v1", lambda: {"new": 1}, decode=lambda v: v["new"] and v)
    assert value == {"new": 1} and cache.rebuilt == 1


def test_unwritable_cache_is_ignored(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    cache = Cache(blocker)
    assert cache.put("elf", KEY, "v1", {"a": 1}) is False
    assert cache.get_or_build("elf", KEY, "v1", lambda: {"a": 2}) == {"a": 2}


def _writer(root: str, worker: int, rounds: int) -> int:
    """Write this worker's (large) value again and again; read after each write. Returns the
    number of reads that saw anything but a complete value from some worker."""
    cache = Cache(root)
    bad = 0
    for i in range(rounds):
        cache.put("elf", KEY, "v1", {"worker": worker, "blob": [worker] * 20000, "round": i})
        got = cache.get("elf", KEY, "v1")
        if got is None or got["blob"] != [got["worker"]] * 20000:
            bad += 1
    return bad + cache.rebuilt


@pytest.mark.slow
def test_concurrent_writers_never_corrupt(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        bad = pool.starmap(_writer, [(str(tmp_path), w, 150) for w in range(4)])
    assert bad == [0, 0, 0, 0]
    entry_dir = Cache(tmp_path).path("elf", KEY, "v1").parent
    assert os.listdir(entry_dir) == [f"{KEY}.v1"]  # no temporary file left behind
    assert Cache(tmp_path).get("elf", KEY, "v1")["blob"][0] in range(4)


# -- the ELF facts cache, end to end --------------------------------------------------
class _NoOpen(WheelArchive):
    def open(self, name: str):  # type: ignore[override]
        if name.endswith(".so"):
            raise AssertionError(f"{name} was read although it is cached")
        return super().open(name)

    def stream(self, name: str, *, check: bool = True):  # type: ignore[override]
        raise AssertionError(f"{name} was streamed although it is cached")


def test_elf_facts_cached_by_record_hash(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    with WheelArchive(TORCH_V1) as wheel:
        cold = read_elf_member(wheel, "torch/lib/libc10_cuda.so", cache=cache)
        sha = wheel.member("torch/lib/libc10_cuda.so").sha256
    assert cache.get("elf", sha, PARSER_VERSION) == cold.to_json()
    with _NoOpen(TORCH_V1) as wheel:
        warm = read_elf_member(wheel, "torch/lib/libc10_cuda.so", cache=cache)
    assert warm == cold and warm.member == "torch/lib/libc10_cuda.so"
    # A cached value from an older layout is dropped and read again.
    cache.put("elf", sha, PARSER_VERSION, {"parser": PARSER_VERSION, "broken": True})
    with WheelArchive(TORCH_V1) as wheel:
        assert read_elf_member(wheel, "torch/lib/libc10_cuda.so", cache=cache) == cold
    assert ElfInfo.from_json(cache.get("elf", sha, PARSER_VERSION)) == cold


def test_sha256_file() -> None:
    path = ABI / "lib/libc10.so"
    assert sha256_file(path) == hashlib.sha256(path.read_bytes()).hexdigest()


def _stored_bytes(wheel: Path, name: str) -> bytes:
    import struct
    import zipfile

    with zipfile.ZipFile(wheel) as z, open(wheel, "rb") as f:
        info = z.getinfo(name)
        f.seek(info.header_offset)
        head = f.read(30)
        n, extra = struct.unpack_from("<HH", head, 26)
        f.seek(info.header_offset + 30 + n + extra)
        return f.read(info.compress_size)


def test_streamed_members_are_cached_by_the_sha256_of_their_stored_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wheeldoc.binary import elf as elfmod

    monkeypatch.setattr(elfmod, "STREAM_MIN", 0)  # these small members take the streaming path
    cache = Cache(tmp_path)
    name = "torch/lib/libtorch.so"
    with WheelArchive(TORCH_V1) as wheel:
        cold = read_elf_member(wheel, name, cache=cache)
        record = wheel.member(name).sha256
        key = wheel.stored_sha256(name)
    assert key == hashlib.sha256(_stored_bytes(TORCH_V1, name)).hexdigest()
    assert cold.tables_from == "segments"
    assert cache.get("elf", record, PARSER_VERSION) is None  # nothing is stored under what RECORD claims
    assert ElfInfo.from_json(cache.get("elf-deflated", key, PARSER_VERSION)) == cold
    with _NoOpen(TORCH_V1) as wheel:
        assert read_elf_member(wheel, name, cache=cache) == cold


def test_a_streamed_member_is_inflated_only_up_to_its_dynamic_tables(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from wheeldoc.binary import elf as elfmod
    from wheeldoc.binary.members import MemberStream

    monkeypatch.setattr(elfmod, "STREAM_MIN", 0)
    monkeypatch.setattr(elfmod, "STREAM_HEAD", 1024)  # (64 KiB would hold all of this small file)
    monkeypatch.setattr("wheeldoc.binary.members._OUT_CHUNK", 512)
    seen: list[tuple[int, int]] = []
    close = MemberStream.close

    def spy(self: MemberStream) -> None:
        seen.append((self.consumed, self.size))
        close(self)

    monkeypatch.setattr(MemberStream, "close", spy)
    name = "torch/lib/libtorch.so"  # 6,088 bytes, PT_DYNAMIC ends at 4,032
    with WheelArchive(TORCH_V1) as wheel:
        streamed = read_elf_member(wheel, name, cache=Cache(tmp_path))
        with wheel.open(name) as data:
            whole = elfmod.read_elf(data.buf, wheel.path, member=name)
    assert dataclasses.replace(streamed, tables_from="sections") == whole  # read through segments
    assert seen == [(4096, 6088)]  # 8 pieces of 512 bytes: the rest never inflated
