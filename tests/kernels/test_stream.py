"""wheeldoc.kernels.stream: the fatbin headers of a wheel member read while it inflates must be
exactly what reading the whole member gives (or the stream must give up and say so)."""

from __future__ import annotations

import json
import os
import random
import struct

import pytest

from tests.conftest import ROOT
from wheeldoc.binary.members import WheelArchive
from wheeldoc.core.errors import InputError
from wheeldoc.kernels import facts, stream
from wheeldoc.kernels.embedded import scan, scan_file
from wheeldoc.kernels.fatbin import open_fatbin, read_host_elf

K = ROOT / "fixtures" / "kernels"
HOST_ELF = sorted(p.name for p in K.glob("*.so")) + [f"story/{p.name}" for p in (K / "story").glob("*.so")]
BROKEN = ["broken/libmixed-huge-container.so", "broken/libmixed-truncated.so"]


def _wheel(tmp_path, files: dict[str, bytes]):
    from tests.wheelfactory import WheelSpec, wheel_bytes

    spec = WheelSpec("gpulib", "1.0", platform="any", python_tag="py3", abi_tag="none", files=files)
    wheel = tmp_path / spec.filename
    wheel.write_bytes(wheel_bytes(spec))
    return wheel


def _whole(path):
    try:
        fb = open_fatbin(path)
    except InputError as e:
        return ("error", e.message, e.offset), None
    try:
        found = scan_file(str(path)) if fb.format == "elf" else ()
    except InputError as e:
        found = ("error", e.message, e.offset)
    return fb._replace(path="x", member=None), found


def _kept(data: bytes, piece: int) -> stream.Collector:
    col = stream.Collector(len(data))
    for at in range(0, len(data), piece):
        col.feed(at, data[at:at + piece])
    col.finish()
    return col


def _streamed(col: stream.Collector):
    buf = stream.Kept(col.size, col.kept)
    try:
        fb = read_host_elf(buf, "x")
    except InputError as e:
        return ("error", e.message, e.offset), None
    try:
        found = scan(buf, "x", None, find=col.find) if fb.format == "elf" else ()
    except InputError as e:
        found = ("error", e.message, e.offset)
    return fb, found


@pytest.mark.parametrize("name", HOST_ELF + BROKEN)
@pytest.mark.parametrize("piece", [1, 5, 8, 4096, 1 << 20])
def test_every_host_elf_fixture_in_pieces_of_any_size_reads_as_the_whole_file(name, piece):
    """Pieces of 1 byte put every magic and every header across piece boundaries."""
    if piece == 1 and (K / name).stat().st_size > 200_000:
        pytest.skip("a byte at a time is slow on the largest fixture; 5 covers the boundaries")
    data = (K / name).read_bytes()
    assert _streamed(_kept(data, piece)) == _whole(K / name)


def test_kept_bytes_are_the_headers_only():
    """The fixtures are small (the 64 KiB before the section table is most of them): a
    megabyte of other bytes after the ELF goes by unkept."""
    elf = (K / "story" / "_vllm_fa2_C.abi3.so").read_bytes()
    data = elf + random.Random(3).randbytes(1 << 20)
    col = _kept(data, 1 << 16)
    assert col.kept_bytes <= len(elf) + 4096 and not col.overflow
    buf = stream.Kept(col.size, col.kept)
    with pytest.raises(stream.Missing):
        buf[len(data) // 2: len(data) // 2 + 64]  # never kept
    assert _streamed(col)[0] == open_fatbin(K / "story" / "_vllm_fa2_C.abi3.so")._replace(path="x")


def test_a_container_in_a_data_section_with_a_damaged_entry_is_skipped_as_in_the_file():
    data = bytearray((K / "libembedded.so").read_bytes())
    (_, second), = scan_file(str(K / "libembedded.so"))[1:]
    data[second.offset + 16 + 4: second.offset + 16 + 8] = (7).to_bytes(4, "little")
    col = _kept(bytes(data), 4096)
    buf = stream.Kept(col.size, col.kept)
    assert scan(buf, "x", None, find=col.find) == scan(bytes(data), "x")
    assert len(scan(bytes(data), "x")) == 1


def test_magic_everywhere_stays_bounded_and_gives_up(monkeypatch):
    """A data section full of the magic: the stream keeps at most MAX_HITS offsets, then gives
    up (the member is read whole, which bounds its own work)."""
    monkeypatch.setattr(stream, "MAX_HITS", 1000)
    data = (K / "libmixed.so").read_bytes() + struct.pack("<I", 0xBA55ED50) * 2 * 5000
    col = _kept(data, 4096)
    assert col.overflow and len(col.hits) <= 1001


def test_read_member_on_a_wheel_and_the_fallback_when_the_stream_gives_up(tmp_path, monkeypatch):
    rng = random.Random(11)
    lib = (K / "libembedded.so").read_bytes() + rng.randbytes(300_000)  # bytes after the ELF
    wheel = _wheel(tmp_path, {"gpulib/libembedded.so": lib, "gpulib/libmulti.so": (K / "libmulti.so").read_bytes()})
    with WheelArchive(wheel) as archive:
        got = stream.read_member(archive, "gpulib/libembedded.so")
        assert got is not None and got.sha256 == archive.member("gpulib/libembedded.so").sha256
        with archive.open("gpulib/libembedded.so") as data:
            assert got.fatbin == open_fatbin_of(data.buf, "gpulib/libembedded.so", wheel)
            assert got.scan() == scan(data.buf, str(wheel), "gpulib/libembedded.so")
        monkeypatch.setattr(stream, "MAX_KEPT", 100)  # too little to keep the headers
        with pytest.raises(stream.Missing):
            stream.read_member(archive, "gpulib/libembedded.so")
    # through kernels: the same report whether the members stream, give up, or are read whole
    docs = []
    for min_member, kept in ((1 << 40, 64 << 20), (0, 64 << 20), (0, 100)):
        monkeypatch.setattr(facts, "STREAM_MIN_MEMBER", min_member)
        monkeypatch.setattr(stream, "MAX_KEPT", kept)
        inputs = facts.read_inputs([str(wheel)], None, embedded=True)
        docs.append([(lib.name, lib.fatbin, lib.embedded()) for lib in inputs.libraries])
    assert docs[0] == docs[1] == docs[2] and len(docs[0]) == 2


def open_fatbin_of(buf, member, wheel):
    from wheeldoc.kernels.fatbin import read_fatbin

    return read_fatbin(buf, str(wheel), member=member)


def test_a_member_that_is_not_a_host_elf_is_left_to_the_whole_read(tmp_path):
    wheel = _wheel(tmp_path, {"gpulib/libfake.so": b"/* GNU ld script */ INPUT(libc.so.6)\n",
                              "gpulib/sm_90.so": (K / "sm_90.cubin").read_bytes()})
    with WheelArchive(wheel) as archive:
        assert stream.read_member(archive, "gpulib/libfake.so") is None
        assert stream.read_member(archive, "gpulib/sm_90.so") is None  # a cubin named .so


def test_a_corrupt_member_is_refused_by_the_stream_as_by_opening_it(tmp_path):
    lib = (K / "libmulti.so").read_bytes()
    wheel = _wheel(tmp_path, {"gpulib/libmulti.so": bytes(lib)})
    # RECORD says another sha256: both readers refuse the member with the same message
    bad = tmp_path / "bad" / wheel.name
    bad.parent.mkdir()
    import zipfile

    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("RECORD"):
                data = b"\n".join(line if not line.startswith(b"gpulib/libmulti.so,")
                                  else b"gpulib/libmulti.so,sha256=" + b"A" * 43 + b","
                                  + line.rsplit(b",", 1)[1] for line in data.split(b"\n"))
            dst.writestr(info, data)
    with WheelArchive(bad) as archive:
        with pytest.raises(InputError) as whole:
            archive.open("gpulib/libmulti.so")
        with pytest.raises(InputError) as streamed:
            stream.read_member(archive, "gpulib/libmulti.so")
    assert streamed.value.message == whole.value.message and "RECORD" in whole.value.message


def test_kernels_on_a_wheel_of_several_streamed_members_reads_them_side_by_side(cli, tmp_path, monkeypatch):
    """Large members are read two at a time on threads; the report is the one read in order."""
    files = {f"gpulib/{n}": (K / n).read_bytes() for n in ("libmulti.so", "libembedded.so", "libident.so",
                                                          "librdc.so", "libmixed.so")}
    wheel = _wheel(tmp_path, files)
    outs = []
    for min_member, readers in ((1 << 40, 1), (0, 1), (0, 2)):
        monkeypatch.setattr(facts, "STREAM_MIN_MEMBER", min_member)
        monkeypatch.setattr(facts, "READERS", readers)
        monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path / f"cache-{min_member}-{readers}"))
        res = cli("kernels", str(wheel), "--gpu", "h200", "--driver", "13.0", "--format", "json",
                  "--fail-on", "never")
        assert res.code == 0, res.err
        outs.append(json.loads(res.out))
    assert outs[0] == outs[1] == outs[2]
    assert len(outs[0]["libraries"]) == 5
    assert os.path.isdir(tmp_path / "cache-0-2" / "fatbin-headers")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["libembedded.so", "libmulti.so", "libconcat.so", "story/_C.abi3.so"])
def test_mutated_libraries_stream_to_the_whole_members_answer_or_give_up(name):
    """Bytes flipped in headers, tables and padding: the streamed answer (result or InputError)
    is the whole member's, or the stream says `Missing`; nothing else escapes."""
    from wheeldoc.kernels.fatbin import read_fatbin

    rng = random.Random(name)
    base = (K / name).read_bytes()
    answered = 0
    for _ in range(150):
        data = bytearray(base)
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data))
            data[at] = rng.randrange(256)
        data = bytes(data)
        try:
            fb = read_fatbin(data, "x")
        except InputError as e:
            whole = (("error", e.message, e.offset), None)
        else:
            try:
                whole = (fb, scan(data, "x", None) if fb.format == "elf" else ())
            except InputError as e:
                whole = (fb, ("error", e.message, e.offset))
        if not stream.is_host_elf_head(data[:20]):
            continue
        try:
            got = _streamed(_kept(data, rng.choice([7, 64, 4096])))
        except stream.Missing:
            continue
        assert got == whole
        answered += 1
    assert answered > 50
