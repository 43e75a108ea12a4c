"""kernels/listwalk.py, the short read of `kernels --list`, against kernels/fatbin.py: on every
fixture, and on broken copies of real ones, it either steps aside (None: command_list then reads
through fatbin.py) or lists exactly what fatbin.py's reading lists."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from wheeldoc.core.errors import InputError
from wheeldoc.kernels import fatbin as F
from wheeldoc.kernels import listwalk as W
from wheeldoc.kernels.command_list import _Records
from wheeldoc.render.jsontext import encode_string
from tests.kernels.test_fatbin import REAL_LIBRARIES, extract_member

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "fixtures" / "kernels"
FILES = sorted(str(p.relative_to(KERNELS)) for p in KERNELS.rglob("*")
               if p.is_file() and p.suffix not in (".json", ".md", ".py", ".whl"))


def through_fatbin(path: str, json: bool):
    """What command_list takes from fatbin.py's reading of `path`; None when it raises."""
    try:
        if json:
            rec = _Records(path)
            fb = F.open_fatbin(path, sink=rec)
            return (fb.format, fb.section, rec.lines, rec.containers, rec.count,
                    set(rec.ids.values()), set(rec.mids.values()))
        lister = F.Lister.of(path)
        fb = F.open_fatbin(path, sink=lister)
        return fb.format, fb.section, lister.lines(fb.format), lister.identifiers
    except InputError:  # (LimitExceeded too)
        return None


def through_listwalk(path: str, json: bool):
    scan = W.scan(path, encode_string(path) if json else None)
    if scan is None:
        return None
    if json:
        return (scan.format, scan.section, scan.lines, scan.containers, scan.count,
                set(scan.ids.values()), set(scan.mids.values()))
    return scan.format, scan.section, scan.lines, scan.identifiers


def test_its_layout_constants_are_fatbins():
    for name in ("FATBIN_MAGIC", "KINDS", "KIND_CONCAT", "FLAG_LZ4", "FLAG_ZSTD",
                 "FLAG_ARCH_SPECIFIC", "FLAG_FAMILY", "MAX_ENTRY_HEADER", "MAX_ENTRIES",
                 "HEAD_READ", "CONTAINER_READ", "READ_AHEAD"):
        assert getattr(W, name) == getattr(F, name), name
    for name in ("CONTAINER", "ENTRY", "OPTS_DESC"):
        assert getattr(W, name).format == getattr(F, name).format
    assert W.SECTIONS == tuple(s.encode() for s in F.SECTIONS)


@pytest.mark.parametrize("json", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("name", FILES)
def test_a_fixture_is_listed_as_fatbin_lists_it_or_left_to_it(name, json):
    path = str(KERNELS / name)
    got = through_listwalk(path, json)
    assert got is None or got == through_fatbin(path, json)


TAKEN = ["libmulti.so", "libmixed.so", "libident.so", "two-containers.fatbin", "fb-sm80-ptx80.fatbin",
         "comp-all.fatbin", "abi7-lz4.fatbin", "story/_vllm_fa2_C.abi3.so"]
LEFT = ["zero-padded.fatbin", "concat-mixed.fatbin", "libconcat.so", "sm_121f.cubin",
        "compute_90-isa9.0.ptx", "libhostonly.so", "empty.fatbin", "lto_90.fatbin"]


@pytest.mark.parametrize("name", TAKEN)
def test_the_usual_files_are_read_on_the_short_path(name):
    path = str(KERNELS / name)
    for json in (False, True):
        got = through_listwalk(path, json)
        assert got is not None and got[2] and got == through_fatbin(path, json)


@pytest.mark.parametrize("name", LEFT)
def test_what_fatbin_reads_or_reports_otherwise_is_left_to_it(name):
    """Zero padding, concatenated entries, standalone cubin and PTX, no GPU code step aside."""
    for json in (False, True):
        assert through_listwalk(str(KERNELS / name), json) is None


def test_every_broken_fixture_fatbin_reports_is_left_to_it():
    """(A corrupt payload, e.g. bad-zstd.fatbin, is no matter for a listing: both list it.)"""
    reported = 0
    for path in sorted((KERNELS / "broken").iterdir()):
        for json in (False, True):
            if through_fatbin(str(path), json) is None:
                reported += 1
                assert through_listwalk(str(path), json) is None, path.name
    assert reported >= 20


@pytest.mark.parametrize("name", ["libmixed.so", "two-containers.fatbin", "comp-all.fatbin",
                                  "fb-sm80-ptx80.fatbin", "fb-sm100a-sm120-ptx120.fatbin"])
def test_broken_copies_are_listed_alike_or_left_to_fatbin(name, tmp_path):
    """Each byte of the ELF header, the fatbin section's header and the first section headers,
    and of every container and entry header, set to 0x00 and to 0xFF; the file cut short at
    many lengths and between containers: where fatbin.py raises, the short path steps aside;
    where it reads, the short path lists the same or steps aside."""
    data = (KERNELS / name).read_bytes()
    fb = F.open_fatbin(str(KERNELS / name))
    spots: list[int] = []
    if fb.format == "elf":
        from wheeldoc.binary.elffile import ElfFile

        shoff = int.from_bytes(data[40:48], "little")
        index = ElfFile(data).section(fb.section).index
        spots += [*range(64), *range(shoff, shoff + 64 * 4),
                  *range(shoff + 64 * index, shoff + 64 * index + 64)]
    for c in fb.containers:
        spots += range(c.offset, c.offset + c.header_size)
        for e in c.entries:
            spots += range(e.offset, e.offset + e.header_size)
    copy = tmp_path / name.replace("/", "_")
    taken = 0
    ends = [c.end for c in fb.containers]  # cut between containers
    cases = [data[:cut] for cut in [*range(1, len(data), max(1, len(data) // 300)), *ends]]
    for at in spots:
        for value in (0, 0xFF):
            if data[at] != value:
                cases.append(data[:at] + bytes([value]) + data[at + 1:])
    for case in cases:
        copy.write_bytes(case)
        for json in (False, True):
            got = through_listwalk(str(copy), json)
            want = through_fatbin(str(copy), json)
            if want is None:
                assert got is None
            else:
                assert got is None or got == want
            taken += got is not None
    assert taken  # (some broken copies still read alike: a changed size field, an arch)


def test_the_short_path_imports_no_reader(tmp_path):
    """`kernels --list` of a usual file imports neither fatbin.py nor the ELF reader (nor
    `collections`, which their record types need): what it costs at start-up is what it imports."""
    lib = str(KERNELS / "libmulti.so")
    code = ("import sys; from wheeldoc.cli import main; main(['kernels', '--list', " + repr(lib) + "]); "
            "print(sorted(m for m in sys.modules if m in ('collections', 'wheeldoc.kernels.fatbin', "
            "'wheeldoc.binary.elffile', 'wheeldoc.kernels.cubin', 'wheeldoc.core.records')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=tmp_path).stdout.splitlines()
    assert out[0] == "ELF file    1: libmulti.1.sm_90a.cubin"
    assert out[-1] == "[]"


def test_a_compat_copy_is_refused_exactly_where_parse_compat_refuses_it():
    import random

    from wheeldoc.kernels.cubin import parse_compat

    rng = random.Random(11)
    blobs = [b"", b"\x02\x09\x01\x00", b"\x04\x01\x08\x00abcdefgh\x02\x09\x00\x00\x00\x00\x00\x00"]
    for _ in range(3000):
        n = rng.randrange(0, 40)
        blobs.append(bytes(rng.choice((0, 0, 1, 2, 3, 4, 4, 5, 9, 255)) if rng.random() < 0.6
                           else rng.randrange(256) for _ in range(n)))
    agreed = {True: 0, False: 0}
    for blob in blobs:
        try:
            parse_compat(blob)
            ok = True
        except ValueError:
            ok = False
        assert W._compat_ok(blob) is ok, blob
        agreed[ok] += 1
    assert min(agreed.values()) > 100


def test_more_entries_than_the_limit_are_left_to_fatbin(monkeypatch):
    path = str(KERNELS / "libmulti.so")
    assert through_listwalk(path, True) is not None
    monkeypatch.setattr(F, "MAX_ENTRIES", 2)
    monkeypatch.setattr(W, "MAX_ENTRIES", 2)
    assert through_fatbin(path, True) is None  # LimitExceeded
    assert through_listwalk(path, True) is None and through_listwalk(path, False) is None


@pytest.mark.slow
@pytest.mark.parametrize("pattern, member", REAL_LIBRARIES, ids=[Path(m).name for _, m in REAL_LIBRARIES])
def test_real_libraries_are_read_on_the_short_path_alike(pattern, member):
    """cuBLASLt, NCCL, cuDNN and libtorch_cuda (local wheels, else skipped): taken, and listed as
    fatbin.py lists them."""
    lib = str(extract_member(pattern, member))
    for json in (False, True):
        got = through_listwalk(lib, json)
        assert got is not None and len(got[2]) > 100
        assert got == through_fatbin(lib, json)
