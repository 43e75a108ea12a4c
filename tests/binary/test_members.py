"""wheeldoc.binary.members: wheels, directories, installed distributions; hostile archives."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.binary.elf import read_elf, read_elf_member
from wheeldoc.binary.members import (
    DEFAULT_LIMITS,
    IN_MEMORY_MAX,
    DirectoryTree,
    DistMetadata,
    InstalledDistribution,
    Limits,
    SingleFile,
    WheelArchive,
    find_distribution,
    find_distributions,
    open_source,
    parse_record,
    record_digest,
)

ABI = Path(__file__).resolve().parents[2] / "fixtures" / "abi"
WHEELS = ABI / "wheels"
HOSTILE = ABI / "hostile"
EXT = WHEELS / "ext-1.0-cp311-cp311-linux_x86_64.whl"
TORCH_V1 = WHEELS / "fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"
TORCH_CPU = WHEELS / "fake_torch-2.11.0+cpu-cp311-cp311-linux_x86_64.whl"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# -- wheels --------------------------------------------------------------------------
@pytest.mark.parametrize("path", sorted(WHEELS.glob("*.whl")), ids=lambda p: p.name)
def test_members_match_zipfile_and_record(path: Path) -> None:
    with zipfile.ZipFile(path) as zf, WheelArchive(path) as wheel:
        expected = {i.filename: zf.read(i) for i in zf.infolist() if not i.is_dir()}
        assert [m.name for m in wheel.members] == list(expected)
        assert wheel.rejected == ()
        for m in wheel.members:
            data = expected[m.name]
            assert m.size == len(data)
            assert m.sha256 == (None if m.name.endswith("RECORD") else sha256(data))
            with wheel.open(m.name) as got:
                assert bytes(got.buf) == data
                assert got.verified_sha256() == sha256(data)


def test_stored_member_is_a_view_and_deflated_is_inflated() -> None:
    with WheelArchive(EXT) as wheel:
        so = wheel.member("ext/_C.so")
        assert so is not None and so.compression == "stored" and so.compressed_size == so.size
        with wheel.open("ext/_C.so") as data:
            assert isinstance(data.buf, memoryview) and data.sha256 is None
            assert read_elf(data.buf, wheel.path, member="ext/_C.so").needed[0] == "libc10_cuda.so"
        init = wheel.member("ext/__init__.py")
        assert init is not None and init.compression == "deflated"
        with wheel.open("ext/__init__.py") as data:
            assert bytes(data.buf) == b"from ext import _C\n"
            assert data.sha256 == init.sha256  # computed while inflating, checked against RECORD


def test_shared_objects() -> None:
    with WheelArchive(TORCH_V1) as wheel:
        assert [m.name for m in wheel.shared_objects()] == [
            "torch/lib/libc10.so", "torch/lib/libtorch.so", "torch/lib/libc10_cuda.so"]
    with WheelArchive(WHEELS / "fake_nvidia_cuda_runtime-13.0.0-py3-none-linux_x86_64.whl") as wheel:
        assert [m.name for m in wheel.shared_objects()] == ["nvidia/cu13/lib/libcudart.so.13"]


def test_metadata_and_tags() -> None:
    with WheelArchive(TORCH_V1) as wheel:
        assert wheel.dist_info == "fake_torch-2.11.0+cu130.dist-info"
        assert wheel.metadata() == DistMetadata("fake_torch", "2.11.0+cu130",
                                                ("fake-nvidia-cuda-runtime==13.0.0",), None)
        info = wheel.wheel_info()
        assert (info.name, info.version, info.build) == ("fake-torch", "2.11.0+cu130", None)
        assert info.tags == ("cp311-cp311-linux_x86_64",) == info.wheel_tags
        assert (info.wheel_version, info.generator, info.root_is_purelib) == ("1.0", "wheeldoc-fixtures", False)
    with WheelArchive(TORCH_CPU) as wheel:
        assert wheel.member("torch/lib/libc10_cuda.so") is None
        assert wheel.metadata().requires_dist == ()
    with WheelArchive(EXT) as wheel:
        assert wheel.metadata().requires_dist == ("fake-torch==2.11.0",)


@pytest.mark.slow
def test_large_member_goes_through_an_anonymous_file(tmp_path: Path) -> None:
    payload = b"".join(hashlib.sha256(str(i).encode()).digest() for i in range((IN_MEMORY_MAX * 2) // 32))
    path = tmp_path / "big-1.0-py3-none-any.whl"
    record = f"big/blob.bin,{record_digest(sha256(payload))},{len(payload)}\nbig-1.0.dist-info/RECORD,,\n"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("big/blob.bin", payload)
        zf.writestr("big-1.0.dist-info/RECORD", record)
    before = set(os.listdir(tmp_path))
    with WheelArchive(path) as wheel, wheel.open("big/blob.bin") as data:
        assert len(payload) > IN_MEMORY_MAX
        assert type(data.buf).__name__ == "mmap"
        assert data.buf[:] == payload and data.sha256 == sha256(payload)
    assert set(os.listdir(tmp_path)) == before  # nothing written beside the archive


@pytest.mark.parametrize("member", ["torch/lib/libc10_cuda.so", "torch/__init__.py"])
def test_stream_yields_the_member_in_order(member: str) -> None:
    with zipfile.ZipFile(TORCH_V1) as zf:
        expected = zf.read(member)
    with WheelArchive(TORCH_V1) as wheel, wheel.stream(member) as stream:
        got = b""
        for at, piece in stream:
            assert at == len(got)
            got += bytes(piece)
        assert got == expected and stream.sha256 == sha256(expected)
        assert stream.finish() == stream.sha256


def test_stream_of_a_stored_member_and_early_stop() -> None:
    with WheelArchive(EXT) as wheel:
        with wheel.stream("ext/_C.so") as stream:
            first = next(iter(stream))
            assert first[0] == 0 and stream.sha256 is None  # stopped early: nothing verified
        with wheel.stream("ext/_C.so") as stream:
            assert stream.finish() == wheel.member("ext/_C.so").sha256


def test_stream_checks_record_and_declared_size() -> None:
    with WheelArchive(HOSTILE / "bad_record-1.0-py3-none-any.whl") as wheel, wheel.stream("pkg/data.bin") as s:
        with pytest.raises(InputError, match="does not match RECORD"):
            s.finish()
    with WheelArchive(HOSTILE / "lying_size.whl") as wheel, wheel.stream("pkg/big.bin") as s:
        with pytest.raises(LimitExceeded, match="beyond its declared size"):
            list(s)
    with WheelArchive(HOSTILE / "bomb.whl") as wheel, pytest.raises(InputError, match="member refused"):
        wheel.stream("pkg/zeros.bin")


# -- hostile archives ------------------------------------------------------------------
def rejected(path: Path, limits: Limits = DEFAULT_LIMITS) -> dict[str, str]:
    with WheelArchive(path, limits) as wheel:
        return {r.name: r.reason for r in wheel.rejected}


def test_traversal_absolute_and_symlink_entries_are_refused() -> None:
    reasons = rejected(HOSTILE / "traversal.whl")
    assert reasons == {
        "../evil.so": "path traversal ('..')",
        "pkg/../../evil2.so": "path traversal ('..')",
        "/abs/evil.so": "absolute path",
        "C:/evil.so": "absolute path",
        "pkg\\..\\..\\evil3.so": "path traversal ('..')",
        "pkg/link.so": "symlink entry",
    }
    with WheelArchive(HOSTILE / "traversal.whl") as wheel:
        assert [m.name for m in wheel.members] == ["pkg/ok.txt"]
        for name in reasons:
            with pytest.raises(InputError, match="member refused"):
                wheel.open(name)


def test_zip_bomb_is_refused_by_ratio() -> None:
    assert rejected(HOSTILE / "bomb.whl") == {
        "pkg/zeros.bin": "compression ratio 1029:1 (limit 200:1): zip bomb"}
    assert rejected(HOSTILE / "bomb.whl", Limits(max_ratio=2000)) == {}


def test_member_size_limit() -> None:
    assert "pkg/zeros.bin" in rejected(HOSTILE / "bomb.whl", Limits(max_ratio=2000, max_member_size=1 << 20))


def test_member_count_limit() -> None:
    with pytest.raises(LimitExceeded, match="members"):
        WheelArchive(EXT, Limits(max_members=2))


@pytest.mark.parametrize("name, member, reason", [
    ("duplicate.whl", "pkg/dup.txt", "duplicate name (2 entries)"),
    ("overlap.whl", "pkg/other.txt", "overlaps member 'pkg/ok.txt' in the archive"),
    ("encrypted.whl", "pkg/secret.txt", "encrypted"),
    ("bzip2.whl", "pkg/b.txt", "unsupported compression method 12"),
])
def test_suspicious_entries_are_refused(name: str, member: str, reason: str) -> None:
    assert rejected(HOSTILE / name)[member] == reason


def test_declared_size_is_never_exceeded() -> None:
    with WheelArchive(HOSTILE / "lying_size.whl") as wheel:
        with pytest.raises(LimitExceeded, match="beyond its declared size of 100 bytes") as err:
            wheel.open("pkg/big.bin")
        assert err.value.member == "pkg/big.bin"


def test_record_mismatch_is_an_input_error() -> None:
    with WheelArchive(HOSTILE / "bad_record-1.0-py3-none-any.whl") as wheel:
        with pytest.raises(InputError, match="does not match RECORD"):
            wheel.open("pkg/data.bin")


@pytest.mark.parametrize("name", ["truncated.whl", "not_a_zip.whl"])
def test_unreadable_archives(name: str) -> None:
    with pytest.raises(InputError, match="not a readable zip archive"):
        WheelArchive(HOSTILE / name)


def test_empty_and_missing_archives(tmp_path: Path) -> None:
    (tmp_path / "e.whl").write_bytes(b"")
    with pytest.raises(InputError, match="empty file"):
        WheelArchive(tmp_path / "e.whl")
    with pytest.raises(InputError, match="cannot read"):
        WheelArchive(tmp_path / "missing.whl")


def test_corrupt_deflate_data_and_crc(tmp_path: Path) -> None:
    raw = bytearray(TORCH_V1.read_bytes())
    with zipfile.ZipFile(TORCH_V1) as zf:
        info = zf.getinfo("torch/lib/libc10.so")
    name_len, extra_len = int.from_bytes(raw[info.header_offset + 26: info.header_offset + 28], "little"), \
        int.from_bytes(raw[info.header_offset + 28: info.header_offset + 30], "little")
    start = info.header_offset + 30 + name_len + extra_len
    for i in range(start + 100, start + 400):
        raw[i] ^= 0x5A
    path = tmp_path / "corrupt.whl"
    path.write_bytes(bytes(raw))
    with WheelArchive(path) as wheel:
        with pytest.raises(InputError) as err:
            wheel.open("torch/lib/libc10.so")
        assert err.value.member == "torch/lib/libc10.so"
        assert any(s in err.value.message for s in ("corrupt deflate", "CRC-32", "inflates to", "does not match"))


def test_local_header_mismatch(tmp_path: Path) -> None:
    raw = bytearray(EXT.read_bytes())
    with zipfile.ZipFile(EXT) as zf:
        info = zf.getinfo("ext/_C.so")
    raw[info.header_offset + 30] = ord("X")  # the local header's copy of the name
    path = tmp_path / "mismatch.whl"
    path.write_bytes(bytes(raw))
    with WheelArchive(path) as wheel, pytest.raises(InputError, match="local header names another file"):
        wheel.open("ext/_C.so")


def test_empty_member_name(tmp_path: Path) -> None:
    path = tmp_path / "empty-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(zipfile.ZipInfo(""), b"x")  # once crashed zipfile's is_dir()
    with WheelArchive(path) as wheel:
        assert wheel.members == () and [r.reason for r in wheel.rejected] == ["empty or NUL-containing name"]


SEED_WHEELS = [p.read_bytes() for p in (TORCH_V1, EXT, HOSTILE / "traversal.whl", HOSTILE / "overlap.whl")]


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(seed=st.sampled_from(SEED_WHEELS), tail=st.booleans(),
       edits=st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), min_size=1, max_size=6),
       cut=st.integers(0, 1 << 16))
def test_mutated_wheels_never_escape_input_error(tmp_path: Path, seed: bytes, tail: bool,
                                                 edits: list[tuple[int, int]], cut: int) -> None:
    data = bytearray(seed)
    for at, value in edits:  # aim at the central directory (the end) or anywhere
        i = (len(data) - 1 - at % 600) if tail else at % len(data)
        data[max(i, 0)] = value
    if cut < len(data) and cut % 3 == 0:
        data = data[:cut]
    path = tmp_path / "m-1.0-py3-none-any.whl"
    path.write_bytes(bytes(data))
    try:
        with WheelArchive(path) as wheel:
            wheel.metadata()
            for m in wheel.members:
                try:
                    with wheel.open(m.name) as got:
                        bytes(got.buf)
                    if m.name.endswith(".so"):
                        read_elf_member(wheel, m.name)
                except InputError:
                    pass
    except InputError:
        pass


# -- RECORD --------------------------------------------------------------------------
def test_parse_record() -> None:
    digest = sha256(b"x")
    rows = parse_record(f"a/b.py,{record_digest(digest)},1\nc.py,sha512=abc,2\nd,,\n\"e,f\",,\n".encode(), "w")
    assert rows == {"a/b.py": (digest, 1), "c.py": (None, 2), "d": (None, None), "e,f": (None, None)}


def test_parse_record_digest_alphabet_on_every_python() -> None:
    """The strict urlsafe alphabet is checked without `a2b_base64(strict_mode=...)` (3.11+ only)."""
    good = record_digest(sha256(b"x"))
    value = good.split("=", 1)[1]
    bad = [value[:42] + "+", value[:42] + "/", value[:42] + "=", value[:20] + " " + value[21:],
           value[:42], value + "A", value[:42] + "\u00e9"]
    text = f"ok,{good},1\n" + "".join(f"f{i},sha256={v},1\n" for i, v in enumerate(bad))
    rows = parse_record(text.encode(), "w")
    assert rows["ok"] == (sha256(b"x"), 1)
    assert [rows[f"f{i}"][0] for i in range(len(bad))] == [None] * len(bad)


# -- directories, installed distributions, single files ------------------------------
@pytest.mark.slow
def test_installed_distribution_matches_the_wheel(tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--no-compile",
                    "--disable-pip-version-check", "--python-version", "3.11", "--target", str(site), str(TORCH_V1), str(EXT)],
                   check=True, capture_output=True)
    dists = find_distributions(site)
    assert [d.dist_info for d in dists] == ["ext-1.0.dist-info", "fake_torch-2.11.0+cu130.dist-info"]
    dist = find_distribution(site, "Fake-Torch")
    assert dist is not None and dist.metadata().version == "2.11.0+cu130"
    with WheelArchive(TORCH_V1) as wheel:
        for m in wheel.members:
            if m.name.endswith((".so", ".py")):
                got = dist.member(m.name)
                assert got is not None and (got.sha256, got.size) == (m.sha256, m.size)
                with dist.open(m.name) as a, wheel.open(m.name) as b:
                    assert bytes(a.buf) == bytes(b.buf)
                    assert a.verified_sha256() == m.sha256
    facts = read_elf_member(dist, "torch/lib/libc10_cuda.so")
    assert facts.soname == "libc10_cuda.so" and facts.member == "torch/lib/libc10_cuda.so"
    assert isinstance(open_source(site / "ext-1.0.dist-info"), InstalledDistribution)


@pytest.mark.slow
def test_directory_tree_takes_hashes_from_a_record(tmp_path: Path) -> None:
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--no-compile",
                    "--disable-pip-version-check", "--python-version", "3.11", "--target", str(site), str(EXT)],
                   check=True, capture_output=True)
    tree = DirectoryTree(site)
    assert tree.dist_info == "ext-1.0.dist-info"
    with WheelArchive(EXT) as wheel:
        assert tree.member("ext/_C.so").sha256 == wheel.member("ext/_C.so").sha256 is not None
    assert tree.metadata().requires_dist == ("fake-torch==2.11.0",)


def test_installed_distribution_refuses_files_outside(tmp_path: Path) -> None:
    dist_info = tmp_path / "site" / "x-1.0.dist-info"
    dist_info.mkdir(parents=True)
    (tmp_path / "site" / "x.py").write_text("print(1)\n")
    (tmp_path / "secret").write_text("no\n")
    (tmp_path / "site" / "link.py").symlink_to(tmp_path / "secret")
    (dist_info / "METADATA").write_text("Name: x\nVersion: 1.0\n")
    (dist_info / "RECORD").write_text("x.py,,\n../secret,,\nlink.py,,\n../../bin/x,,\ngone.py,,\n"
                                      "x-1.0.dist-info/METADATA,,\nx-1.0.dist-info/RECORD,,\n")
    dist = InstalledDistribution(dist_info)
    assert [m.name for m in dist.members] == ["x.py", "x-1.0.dist-info/METADATA", "x-1.0.dist-info/RECORD"]
    assert {r.name: r.reason.split(" (")[0] for r in dist.rejected} == {
        "../secret": "outside site-packages", "link.py": "outside site-packages",
        "../../bin/x": "outside site-packages", "gone.py": "listed in RECORD but missing"}
    assert dist.metadata() == DistMetadata("x", "1.0", (), None)


def test_directory_tree_and_symlinks(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "lib").mkdir(parents=True)
    lib = (ABI / "lib/cudart13/libcudart.so.13").read_bytes()
    (root / "lib" / "libcudart.so.13.0.1").write_bytes(lib)
    (root / "lib" / "libcudart.so.13").symlink_to("libcudart.so.13.0.1")
    (root / "lib" / "escape.so").symlink_to("/etc/passwd")
    (root / "lib" / "dirlink").symlink_to(".")
    os.mkfifo(root / "fifo")
    tree = DirectoryTree(root)
    assert [(m.name, m.link_target) for m in tree.members] == [
        ("lib/libcudart.so.13", "lib/libcudart.so.13.0.1"), ("lib/libcudart.so.13.0.1", None)]
    assert {r.name: r.reason for r in tree.rejected} == {
        "fifo": "not a regular file",
        "lib/dirlink": "symlink to a directory or a missing file",
        "lib/escape.so": "symlink leading outside the tree"}
    with tree.open("lib/libcudart.so.13") as data:
        assert bytes(data.buf) == lib
    assert read_elf_member(tree, "lib/libcudart.so.13").soname == "libcudart.so.13"
    assert tree.metadata() is None and isinstance(open_source(root), DirectoryTree)


def test_single_file() -> None:
    src = open_source(ABI / "ext/_C.so")
    assert isinstance(src, SingleFile) and [m.name for m in src.members] == ["_C.so"]
    assert read_elf_member(src, "_C.so").needed == ("libc10_cuda.so", "libc10.so", "libcudart.so.13")
    with pytest.raises(InputError, match="no such member"):
        src.open("other.so")
    empty = SingleFile(ABI / "broken/empty.so")
    with empty.open("empty.so") as data:
        assert len(data) == 0


def test_read_bytes_limit() -> None:
    with WheelArchive(EXT) as wheel, pytest.raises(LimitExceeded):
        wheel.read_bytes("ext/_C.so", limit=100)


def test_archive_never_writes_member_paths(tmp_path: Path) -> None:
    """Opening every member of the traversal archive creates no file anywhere near it."""
    copy = tmp_path / "t.whl"
    copy.write_bytes((HOSTILE / "traversal.whl").read_bytes())
    with WheelArchive(copy) as wheel:
        for m in wheel.members:
            wheel.open(m.name).close()
    assert sorted(os.listdir(tmp_path)) == ["t.whl"]
    assert not (tmp_path.parent / "evil.so").exists()



@pytest.mark.parametrize("inflater", ["zlib", "isal"])
def test_both_inflaters_give_the_same_members_and_the_same_errors(inflater, monkeypatch, tmp_path) -> None:
    """`raw_inflater` takes python-isal when it is installed (`wheeldoc[fast]`), else zlib: members
    and the message for corrupt deflate data are the same either way."""
    import zlib

    from wheeldoc.binary import members as mod

    if inflater == "zlib":
        monkeypatch.setattr(mod, "raw_inflater", lambda: (zlib.decompressobj(-15), (zlib.error,)))
    else:
        pytest.importorskip("isal")
    wheel = ABI / "wheels" / "fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(wheel) as z, WheelArchive(str(wheel)) as w:
        for m in w.members:
            if m.compression == "deflated":
                with w.open(m.name) as data:
                    assert bytes(data.buf) == z.read(m.name), m.name
    bad = tmp_path / "bad-1.0-py3-none-any.whl"
    payload = os.urandom(4096)
    with zipfile.ZipFile(bad, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bad/x.so", payload)
        z.writestr("bad-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: bad\nVersion: 1.0\n")
    raw = bytearray(bad.read_bytes())
    at = raw.find(b"bad/x.so") + len("bad/x.so")  # the local header's name ends; the deflate data follows
    raw[at + 10: at + 40] = b"\xff" * 30
    bad.write_bytes(bytes(raw))
    with WheelArchive(str(bad)) as w, pytest.raises(InputError, match="corrupt deflate data|CRC-32|inflates"):
        with w.open("bad/x.so"):
            pass


def test_a_symlink_realpath_cannot_read_is_rejected_not_raised(tmp_path: Path, monkeypatch) -> None:
    """`wheeldoc abi /` met /proc/1/cwd, whose realpath raises PermissionError in a container."""
    import wheeldoc.binary.members as members

    (tmp_path / "a.so").write_bytes(b"x")
    (tmp_path / "link").symlink_to(tmp_path / "a.so")
    real = os.path.realpath

    def guarded(path, *a, **k):
        if str(path).endswith("link"):
            raise PermissionError(13, "Permission denied")
        return real(path, *a, **k)

    monkeypatch.setattr(members.os.path, "realpath", guarded)
    tree = DirectoryTree(tmp_path)
    assert [m.name for m in tree.members] == ["a.so"]
    assert [(r.name, r.reason) for r in tree.rejected] == [("link", "cannot resolve the symlink: Permission denied")]


@pytest.mark.parametrize("out_chunk", [1, 7, 512, 4096])
def test_inflating_in_small_pieces_gives_every_byte(out_chunk: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The inflater may still hold output after the last input byte was given (a long match
    cut by the output limit): it is drained, not called truncated."""
    import wheeldoc.binary.members as members

    monkeypatch.setattr(members, "_OUT_CHUNK", out_chunk)
    for path in (TORCH_V1, EXT):
        with zipfile.ZipFile(path) as z, WheelArchive(path) as wheel:
            for info in z.infolist():
                if info.compress_type != zipfile.ZIP_DEFLATED:
                    continue
                with wheel.open(info.filename) as data:
                    assert bytes(data.buf) == z.read(info), (path.name, info.filename)
                with wheel.stream(info.filename) as pieces:
                    assert b"".join(bytes(p) for _, p in pieces) == z.read(info)
