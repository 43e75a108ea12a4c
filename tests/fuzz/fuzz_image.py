"""Fuzz container image reading: docker save / OCI archives, layer tars, the merged tree.

Byte 0 of the input picks what the rest is:
- 0 (mod 3): a whole archive (`docker save` classic or OCI, an OCI archive, gzip outside);
- 1: one layer tar, its header checksums recomputed (so mutations reach past the checksum),
  wrapped by `tests/imagefactory.py` into a real `docker save` archive with correct digests;
- 2: a structured layer (`atheris.FuzzedDataProvider`): files, folders, symbolic and hard
  links, whiteouts and opaque folders with hostile names (`../`, absolute, deep, loops).
Then everything an analyzer does with an image runs: config and ENV, the library path (LD_LIBRARY_PATH, the image's loader cache), walk, stat,
readlink, listdir, read, glob, the Python environments found and their distributions.

Besides returning or raising `InputError`, every path of the merged tree must stay inside
the image (absolute, normalised, no `..`), and symbolic links resolve inside it.
"""

from __future__ import annotations

import io
import os
import posixpath
import tempfile
from pathlib import Path

from _harness import Provider, contract, instrumented, main

from tests import imagefactory as f

with instrumented():
    from wheeldoc.core.errors import InputError
    from wheeldoc.environment.machine import read_library_path
    from wheeldoc.environment.reader import inspect_environment
    from wheeldoc.image import reader as image_reader
    from wheeldoc.image.reader import find_python_environments, open_image
    from wheeldoc.image.blobs import Limits

# Small limits, so that inputs of a few kilobytes reach every member bound: the archive's own (48),
# one layer's (24), the image's (40), and the one its layers pay for (32 members, then one per
# 1,024 bytes of uncompressed tar or 16 compressed).
LIMITS = Limits(max_layers=8, max_members=40, max_layer_members=24, max_archive_members=48,
                max_total_bytes=32 << 20, ratio_floor=1 << 20, max_path_depth=24, max_path_length=512,
                max_json_bytes=1 << 20, max_symlink_hops=8)
image_reader.MEMBERS_FLOOR = 32
_DIR = Path(tempfile.mkdtemp(prefix="wheeldoc-fuzz-image-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None))
ARCHIVE = _DIR / "image.tar"
NAMES = ["usr/lib/python3.12/site-packages/torch/version.py", "usr/lib/python3.12/site-packages",
         "usr/lib/python3.12/site-packages/torch-2.11.0.dist-info/METADATA", "etc/ld.so.cache",
         "opt/venv/pyvenv.cfg", "opt/venv/lib/python3.12/site-packages/x.so", "lib", "usr/lib",
         "../escape", "/abs/file", "a/../../b", "./rel", "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z",
         "loop", "loop/self", ".wh..wh..opq", "usr/.wh.lib", "a" * 300, ""]
TARGETS = ["/", "..", "../../../../etc/passwd", "/etc/passwd", "loop", "loop/self", "usr/lib", ".",
           "/usr/lib/python3.12/site-packages/torch/version.py", "a" * 200]
METADATA = b"Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\nRequires-Dist: nvidia-cublas==13.1.0.3\n\n"
VERSION_PY = b"__version__ = '2.11.0+cu130'\ncuda = '13.0'\ngit_version = 'abc'\ndebug = False\n"


def _env_layer() -> list[f.Entry]:
    sp = "usr/lib/python3.12/site-packages"
    return [f.dir_("usr"), f.dir_("usr/lib"), f.dir_(sp), f.dir_(f"{sp}/torch-2.11.0.dist-info"),
            f.file_(f"{sp}/torch-2.11.0.dist-info/METADATA", METADATA),
            f.file_(f"{sp}/torch-2.11.0.dist-info/RECORD", b"torch/version.py,,\n"),
            f.file_(f"{sp}/torch/version.py", VERSION_PY),
            f.symlink("lib", "usr/lib"), f.symlink("loop", "loop/self"), f.hardlink("hard", f"{sp}/torch/version.py"),
            f.file_("etc/os-release", b"ID=debian\n")]


def seeds() -> list[bytes]:
    base = f.layer(_env_layer())
    upper = f.layer([f.whiteout("etc/os-release"), f.opaque("usr/lib"), f.symlink("up", "../../..")],
                    fmt=__import__("tarfile").GNU_FORMAT)
    out = [b"\x01" + base, b"\x01" + upper]
    for style, outer in (("classic", "none"), ("oci", "none"), ("oci-archive", "none"), ("classic", "gzip")):
        f.write_docker_save(ARCHIVE, [base, upper], f.config(env=["PATH=/usr/bin", "LD_LIBRARY_PATH=/lib"]),
                            style=style, outer=outer)
        out.append(b"\x00" + ARCHIVE.read_bytes())
    out.append(b"\x02" + bytes(range(256)))
    import _hostile_seeds

    return out + _hostile_seeds.image()  # the shapes tests/hostile/ proves bounded


def fix_checksums(raw: bytes) -> bytes:
    """Recompute every tar header checksum where a reader walking the archive meets a header."""
    buf = bytearray(raw)
    pos = 0
    while pos + 512 <= len(buf):
        if not any(buf[pos:pos + 512]):
            pos += 512
            continue
        buf[pos + 148:pos + 156] = b" " * 8
        buf[pos + 148:pos + 156] = b"%06o\0 " % sum(buf[pos:pos + 512])
        field = bytes(buf[pos + 124:pos + 136]).split(b"\0", 1)[0].strip()
        try:
            size = int(field or b"0", 8)
        except ValueError:
            break
        pos += 512 + (size + 511) // 512 * 512
    return bytes(buf)


def structured(data: bytes) -> bytes:
    fdp = Provider(data)
    entries: list[f.Entry] = []
    for _ in range(fdp.ConsumeIntInRange(0, 24)):
        path = fdp.PickValueInList(NAMES) if fdp.ConsumeBool() else fdp.ConsumeUnicodeNoSurrogates(
            fdp.ConsumeIntInRange(0, 64))
        kind = fdp.ConsumeIntInRange(0, 6)
        if kind == 0:
            entries.append(f.file_(path, fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 256))))
        elif kind == 1:
            entries.append(f.dir_(path))
        elif kind == 2:
            entries.append(f.symlink(path, fdp.PickValueInList(TARGETS) if fdp.ConsumeBool() else path))
        elif kind == 3:
            entries.append(f.hardlink(path, fdp.PickValueInList(NAMES + TARGETS)))
        elif kind == 4:
            entries.append(f.whiteout(path))
        elif kind == 5:
            entries.append(f.opaque(path))
        else:
            entries.append(f.Entry(path, fdp.PickValueInList(["char", "fifo"])))
    try:
        return f.layer(entries)
    except (ValueError, UnicodeError, OSError):  # tarfile refuses some names itself
        return f.layer([])


def _inside(path: str) -> bool:
    return path.startswith("/") and posixpath.normpath(path) == path and ".." not in path.split("/")


def _use(image) -> None:
    files = image.files
    read_library_path(image.env, fs=files, ldconfig=False)  # LD_LIBRARY_PATH and /etc/ld.so.cache, as `image` reads them
    seen = 0
    for path, entry in files.walk():
        if not _inside(path):
            raise AssertionError(f"tree path outside the image: {path!r}")
        seen += 1
        if seen > 256:
            break
        try:
            real = files.realpath(path)
            if not _inside(real):
                raise AssertionError(f"{path!r} resolves outside the image: {real!r}")
            files.stat(path)
            files.readlink(path)
            if entry.type == "dir":
                files.listdir(path)
            elif entry.type == "file":
                files.read(path, 1 << 16)
                with files.open_buffer(path) as buf:
                    bytes(buf[:16])
        except InputError:
            continue
    files.glob("/usr/lib/*/site-packages/*")
    for loc in find_python_environments(image):
        inspect_environment(loc, fs=files)


@contract
def test_one_input(data: bytes) -> None:
    if not data:
        return
    mode, rest = data[0] % 3, data[1:]
    if mode == 0:
        ARCHIVE.write_bytes(rest)
    else:
        layer = fix_checksums(rest) if mode == 1 else structured(rest)
        f.write_docker_save(ARCHIVE, [layer], f.config(env=["PATH=/usr/bin"]))
    with open_image(ARCHIVE, limits=LIMITS) as image:
        _use(image)


if __name__ == "__main__":
    main(__file__, test_one_input, seeds)
