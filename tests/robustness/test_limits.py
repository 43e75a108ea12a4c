"""Declared sizes are never trusted: each hostile case the issue names, refused quickly with a
message that says which limit, tested here from the CLI where a verb reads it (the sources'
own tests, named in each docstring, test the readers).

Limits and where they live: docs/robustness.md.
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests import imagefactory as im
from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.kernels.fatbin import MAX_IMAGE, entry_image, read_fatbin

REPO = Path(__file__).resolve().parents[2]
GPU = ("--gpu", "h200", "--driver", "580.95.05")


def wheeldoc(tmp: Path, *argv: str, timeout: float = 120) -> tuple[int, str, str, float]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "WHEELDOC_CACHE_DIR": str(tmp / "cache"), "NO_COLOR": "1"}
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "wheeldoc", *argv], env=env, capture_output=True,
                          text=True, timeout=timeout)
    took = time.perf_counter() - t
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.returncode, proc.stdout, proc.stderr, took


# -- a fatbin entry that claims 4 GB ------------------------------------------------------------

def _claiming(tmp: Path, fixture: str, size: int) -> Path:
    data = bytearray((REPO / "fixtures/kernels" / fixture).read_bytes())
    for e in read_fatbin(bytes(data)).entries:
        if e.compression:
            struct.pack_into("<Q", data, e.offset + 0x38, size)  # the decompressed size field
    out = tmp / f"claims-{size}-{fixture}"
    out.write_bytes(data)
    return out


@pytest.mark.parametrize("fixture", ["comp-all.fatbin", "abi7-lz4.fatbin"])  # zstd, lz4
def test_fatbin_entry_claiming_4_gb_is_refused_before_any_allocation(tmp_path, fixture):
    """Also: tests/kernels/test_fatbin.py::test_image_size_limit, and fixtures/kernels/broken/zstd-bomb.fatbin
    (a 1 TiB claim) in test_broken_fixture_gives_input_error."""
    path = _claiming(tmp_path, fixture, 4 << 30)
    data = path.read_bytes()
    for e in read_fatbin(data).entries:
        assert e.decompressed_size == 4 << 30  # listed as declared: headers only
        with pytest.raises(LimitExceeded) as err:
            entry_image(data, e, str(path))
        assert err.value.message == f"entry declares a {4 << 30}-byte image (limit {MAX_IMAGE})"
        assert err.value.offset == e.offset + 0x38
    code, out, err, took = wheeldoc(tmp_path, "kernels", str(path), *GPU)  # reads headers only
    assert code in (0, 1) and took < 10 and not err


def test_zstd_frame_larger_than_its_header_is_refused(tmp_path):
    """The frame's own content size is checked against the header before decompressing."""
    import zstandard

    data = bytearray((REPO / "fixtures/kernels/comp-all.fatbin").read_bytes())
    entry = read_fatbin(bytes(data)).entries[0]
    frame = zstandard.ZstdCompressor().compress(bytes(16 << 20))  # 16 MiB of zeros in ~600 bytes
    assert len(frame) <= entry.payload_size
    data[entry.payload_offset:entry.payload_offset + len(frame)] = frame
    struct.pack_into("<I", data, entry.offset + 0x10, len(frame))  # compressed size
    entry = read_fatbin(bytes(data)).entries[0]
    with pytest.raises(InputError, match=rf"zstd frame declares {16 << 20} bytes, header {entry.decompressed_size}"):
        entry_image(bytes(data), entry)


# -- a zip member that inflates 1000x ------------------------------------------------------------

def test_zip_bomb_member_is_refused_and_named(tmp_path):
    """Also: tests/binary/test_members.py::test_zip_bomb_is_refused_by_ratio (1029:1),
    test_declared_size_is_never_exceeded (fixtures/abi/hostile/lying_size.whl)."""
    wheel = tmp_path / "bomb-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("bomb/libzeros.so", bytes(64 << 20))  # inflates about 1000x
        zf.write(REPO / "fixtures/kernels/libmulti.so", "bomb/libgpu.so")
    assert wheel.stat().st_size * 500 < 64 << 20
    code, out, err, took = wheeldoc(tmp_path, "kernels", str(wheel), *GPU)
    assert "bomb/libzeros.so: WD002" in out and "skipped: member refused: compression ratio" in out
    assert ":1 (limit 200:1): zip bomb" in out
    assert "bomb/libgpu.so" in out  # the other library is still analyzed
    assert code == 1 and took < 10


# -- a symbol table that points past the file ----------------------------------------------------

@pytest.mark.slow
def test_symbol_table_past_the_end_is_an_input_error_naming_the_offset(tmp_path):
    """Also: tests/binary/test_elf.py (fixtures/abi/broken/*.so: dynsym_past_end, dynsym_huge_count,
    symbol_name_past_strtab, verneed_huge_count, stripped_huge_gnu_hash)."""
    broken = REPO / "fixtures/abi/broken/dynsym_past_end.so"
    torch = REPO / "fixtures/abi/wheels/fake_torch-2.11.0+cpu-cp311-cp311-linux_x86_64.whl"
    code, out, err, took = wheeldoc(tmp_path, "abi", str(broken), str(torch))
    assert code == 2 and took < 10
    assert "dynamic symbol table at 0x2708+0xd8 lies past the end of the file (0x1708 bytes)" in err
    huge = REPO / "fixtures/abi/broken/dynsym_huge_count.so"
    code, out, err, took = wheeldoc(tmp_path, "abi", str(huge), str(torch))
    assert code == 2 and "dynamic symbols declared (limit 4000000)" in err and took < 10


# -- a heredoc that never ends -------------------------------------------------------------------

def test_heredoc_that_never_ends(tmp_path):
    """Also: tests/dockerfile/test_parser.py::test_malformed_fixture_is_refused_with_file_and_line
    (fixtures/dockerfiles/malformed/unterminated-heredoc.Dockerfile, line 4)."""
    body = "echo a line of a heredoc that is never closed\n"
    near = tmp_path / "near-limit.Dockerfile"  # just under MAX_DOCKERFILE_BYTES (4 MiB)
    near.write_text("FROM python:3.12\nRUN <<EOF\n" + body * ((4 << 20) // len(body) - 1))
    code, out, err, took = wheeldoc(tmp_path, "check", str(near))
    assert code == 2 and took < 10
    assert err.strip() == (f"wheeldoc: error: {near}:2: unterminated heredoc 'EOF' "
                           f"(opened here; the file ends at line {near.read_text().count(chr(10))})")
    over = tmp_path / "over-limit.Dockerfile"
    over.write_text("FROM python:3.12\nRUN <<EOF\n" + body * ((5 << 20) // len(body)))
    code, out, err, took = wheeldoc(tmp_path, "check", str(over))
    assert code == 2 and took < 10
    assert f"Dockerfile is {over.stat().st_size} bytes, over the {4 << 20} byte limit" in err


# -- a 50 MB lockfile ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["pylock.toml", "requirements.txt", "uv.lock"])
def test_50_mb_lockfile_is_refused_before_it_is_read(tmp_path, name):
    """Also: tests/verbs/test_cli.py::test_huge_lock_is_refused_quickly (a real 50 MB uv.lock)."""
    big = tmp_path / name
    with big.open("wb") as f:  # sparse: the size alone must refuse it
        f.truncate(50 << 20)
    code, out, err, took = wheeldoc(tmp_path, "check", str(big))
    assert code == 2 and took < 5
    assert "lockfile is 50.0 MiB, over wheeldoc's limit of 16 MiB" in err


# -- a docker save layer bomb --------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("shape", ["gzip layer.tar", "docker save | gzip"])
def test_docker_save_layer_bomb_is_stopped(tmp_path, shape):
    """Also: tests/image/test_reader.py::test_decompression_bomb_is_stopped (OCI layouts, gzip
    and zstd layers) and test_resource_limits (members, bytes, JSON, layers)."""
    zeros = im.layer([im.file_("zeros", bytes(80 << 20))])
    path = tmp_path / "bomb.tar"
    if shape == "gzip layer.tar":
        im.write_docker_save(path, [im.compress(zeros, "gzip")], im.config())
        what = "layer inflates"
    else:
        im.write_docker_save(path, [zeros], im.config(), outer="gzip")
        what = "archive inflates"
    assert path.stat().st_size * 500 < 80 << 20
    code, out, err, took = wheeldoc(tmp_path, "image", str(path), *GPU)
    assert code == 2 and took < 15
    assert what in err and "max_ratio 200): a decompression bomb?" in err


# -- deeply nested paths and symbolic link loops in image layers ---------------------------------

def test_deeply_nested_path_in_a_layer_is_refused(tmp_path):
    """Also: tests/image/test_reader.py::test_resource_limits (40 folders, limit 32)."""
    deep = im.layer([im.file_("/".join(["d"] * 300) + "/f", b"x")])
    path = im.write_docker_save(tmp_path / "deep.tar", [deep], im.config())
    code, out, err, took = wheeldoc(tmp_path, "image", str(path), *GPU)
    assert code == 2 and took < 10
    assert "path 301 folders deep (limit 256)" in err


@pytest.mark.slow
def test_symlink_loops_in_an_image_end_and_stay_inside(tmp_path):
    """Also: tests/image/test_reader.py::test_symlinks_stay_inside_the_image (loops raise InputError
    'symbolic links', links out of the root resolve inside it)."""
    sp = "usr/local/lib/python3.12/site-packages"
    lay = im.layer([
        im.file_(f"{sp}/pkg-1.0.dist-info/METADATA", b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n\n"),
        im.file_(f"{sp}/pkg-1.0.dist-info/RECORD", b"pkg/libgpu.so,,\n"),
        im.file_(f"{sp}/pkg/libgpu.so", (REPO / "fixtures/kernels/libmulti.so").read_bytes()),
        im.symlink(f"{sp}/pkg/liba.so", "libb.so"), im.symlink(f"{sp}/pkg/libb.so", "liba.so"),
        im.symlink(f"{sp}/pkg/libself.so", "libself.so"),
        im.symlink(f"{sp}/pkg/sub", "."),  # a folder that contains itself
        im.symlink(f"{sp}/pkg/up", "../../../../../../../../.."),
        im.symlink("usr/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"),
        im.symlink(f"{sp}/pkg/libout.so", "../../../../../../../../etc/shadow"),
    ])
    path = im.write_docker_save(tmp_path / "loops.tar", [lay],
                                im.config(env=["LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu:/" + sp + "/pkg/sub"]))
    code, out, err, took = wheeldoc(tmp_path, "image", str(path), *GPU)
    assert code in (0, 1) and took < 15, err
    assert "pkg/libgpu.so" in out  # the library beside the loops is analyzed


def test_library_path_entry_that_loops_is_a_note_not_an_error(tmp_path):
    """Found by these tests: a link loop named in the image's LD_LIBRARY_PATH made `read_library_path`
    raise, and `wheeldoc image` report the whole image unreadable (exit 2, naming `/x` alone)."""
    from wheeldoc.image.reader import open_image
    from wheeldoc.environment.machine import read_library_path

    lay = im.layer([im.symlink("x", "y"), im.symlink("y", "x"), im.dir_("lib")])
    path = im.write_docker_save(tmp_path / "loop.tar", [lay], im.config(env=["LD_LIBRARY_PATH=/x:/lib"]))
    with open_image(path) as image:
        lp = read_library_path(image.env, fs=image.files, ldconfig=False)
    assert lp.ld_library_path == ("/x", "/lib")
    assert f"LD_LIBRARY_PATH entry {path}!/x: more than 40 symbolic links (a link loop?)" in lp.notes
