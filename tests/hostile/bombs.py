"""Generators of small inputs that cost minutes or gigabytes when read naively, and the places
each verb meets them (a library on disk, inside a wheel, installed in site-packages, in an image)."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import struct
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from tests import imagefactory as im
from tests.hostile import elfgen as eg

# -- ELF shapes ------------------------------------------------------------------------------------

def needed_unterminated(n: int = 100_000, length: int = 64 << 10) -> bytes:
    """`n` DT_NEEDED entries all naming one unterminated `length`-byte string."""
    return eg.shared_object(b"\0" + b"A" * length, [(eg.DT_NEEDED, 1)] * n)


def symbols_one_string(n: int = 60_000, length: int = 8 << 20) -> bytes:
    """`n` dynamic symbols whose names all point at one 8 MB string."""
    return eg.shared_object(b"\0" + b"B" * length + b"\0", [], [1] * n)


def verneed_product(records: int = 16_000, entries: int = 16_000) -> bytes:
    """.gnu.version_r: `records` records whose aux chains all run through one chain of `entries`."""
    strtab = b"\0libc.so.6\0GLIBC_2.2.5\0"
    body = bytearray()
    for i in range(records):
        aux = (records - i) * 16  # every record's chain starts at the shared aux area
        body += struct.pack("<HHIII", 1, entries, 1, aux, 16 if i < records - 1 else 0)
    for j in range(entries):
        body += struct.pack("<IHHII", 0, 0, 2 + j % 30000, 11, 16 if j < entries - 1 else 0)
    sec = eg.Sec(".gnu.version_r", eg.SHT_VERNEED, bytes(body), link=1, info=records)
    return eg.shared_object(strtab, [(eg.DT_NEEDED, 1)], extra=[sec])


def needed_times_runpath(n: int = 20_000, dirs: int = 20_000) -> bytes:
    """`n` distinct DT_NEEDED names (none exists) and a RUNPATH of `dirs` folders."""
    names = [f"libn{i}.so".encode() for i in range(n)]
    runpath = b":".join(f"$ORIGIN/d{i}".encode() for i in range(dirs))
    strtab = bytearray(b"\0")
    offs = []
    for name in names:
        offs.append(len(strtab))
        strtab += name + b"\0"
    rp = len(strtab)
    strtab += runpath + b"\0"
    return eg.shared_object(bytes(strtab), [(eg.DT_NEEDED, o) for o in offs] + [(eg.DT_RUNPATH, rp)])


def section_names_unterminated(n: int = 60_000, length: int = 64 << 10) -> bytes:
    """`n` sections all named by one unterminated `length`-byte section-name string."""
    secs = [eg.Sec("", eg.SHT_PROGBITS, b"") for _ in range(n)]
    data = eg.elf(secs)
    # point every section name at offset 1 of a name table that is all 'C', no terminator
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shnum = struct.unpack_from("<H", data, 0x3C)[0]
    body = bytearray(data[:shoff])
    names_at = len(body)
    body += b"C" * length
    table = bytearray(data[shoff:])
    for i in range(1, shnum):
        struct.pack_into("<I", table, i * 64, 1)
    struct.pack_into("<QQ", table, (shnum - 1) * 64 + 24, names_at, length)  # .shstrtab: offset, size
    out = body + table
    struct.pack_into("<Q", out, 0x28, len(body))
    return bytes(out)


def overlapping_containers(n: int = 20_000) -> bytes:
    """.rodata holding `n` entry headers, each hiding a container header (8-aligned) whose
    entries run to the section end, where the last entry is broken: every candidate walks
    the rest of the section before it fails."""
    rest = []
    for i in range(n):
        rest.append(None)
    blob = bytearray()
    size = n * 80
    for i in range(n):
        inner_at = i * 80 + 64
        fat = size - inner_at - 16
        psize = 0 if i < n - 1 else 1 << 40  # the last entry runs past every container
        blob += eg.entry(hsize=80, psize=psize, extra=eg.container(fat))
    rodata = eg.Sec(".rodata", eg.SHT_PROGBITS, bytes(blob))
    # a .nv_fatbin with nothing for the target (one sm_75 entry): the data sections get scanned
    nv = eg.Sec(".nv_fatbin", eg.SHT_PROGBITS, eg.container(64 + 16) + eg.entry(psize=16, sm=75) + bytes(16))
    return eg.shared_object(b"\0", [], extra=[nv, rodata])


def sparse_padding(path: Path, gib: float = 1.0) -> Path:
    """A library whose .nv_fatbin is a sparse gigabyte of zeros after one valid container."""
    first = eg.container(80) + eg.entry(hsize=64, psize=16) + bytes(16)
    head = eg.elf([eg.Sec(".nv_fatbin", eg.SHT_PROGBITS, b"")])
    at = len(head) + (-len(head) % 8)
    size = int(gib * (1 << 30))
    data = eg.elf([eg.Sec(".nv_fatbin", eg.SHT_PROGBITS, b"", size=size, offset=at)])
    with open(path, "wb") as fh:
        fh.write(data.ljust(at, b"\0"))
        fh.write(first)
    os.truncate(path, at + size)
    return path


def many_entries(path: Path, n: int = 1_200_000) -> Path:
    """A bare fatbin: one container of `n` empty 64-byte entries (77 MB on disk)."""
    one = eg.entry(hsize=64, psize=0)
    with open(path, "wb") as fh:
        fh.write(eg.container(n * 64))
        fh.write(one * n)
    return path


# -- where the verbs meet a library ----------------------------------------------------------------

def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _dist_files(lib: bytes, name: str) -> dict[str, bytes]:
    info = "pkg-1.0.dist-info"
    files = {f"pkg/{name}": lib, "pkg/__init__.py": b"",
             f"{info}/METADATA": b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n",
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n"}
    rows = [f"{n},sha256={_b64(d)},{len(d)}" for n, d in files.items()]
    files[f"{info}/RECORD"] = ("\n".join(rows) + f"\n{info}/RECORD,,\n").encode()
    return files


def wheel(dest: Path, lib: bytes, name: str = "_ext.so") -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / "pkg-1.0-py3-none-linux_x86_64.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        for n, d in _dist_files(lib, name).items():
            zf.writestr(n, d)
    return path


def site(dest: Path, lib: bytes, name: str = "_ext.so") -> Path:
    for n, d in _dist_files(lib, name).items():
        p = dest / n
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(d)
    return dest


def image(dest: Path, lib: bytes, name: str = "_ext.so") -> Path:
    sp = "usr/lib/python3.12/site-packages"
    entries = [im.file_("usr/bin/python3.12", b"", 0o755)]
    entries += [im.file_(f"{sp}/{n}", d) for n, d in _dist_files(lib, name).items()]
    return im.write_docker_save(dest, [im.layer(entries)], im.config())


GPU = ("--gpu", "h200", "--driver", "580.95.05")


def placements(tmp: Path, lib: bytes, name: str = "_ext.so") -> dict[str, tuple[str, ...]]:
    """verb -> argv, for every verb that reads a library: the file, a wheel, site-packages, an image."""
    so = tmp / name
    so.write_bytes(lib)
    whl = wheel(tmp / "wheel", lib, name)
    sp = site(tmp / "site", lib, name)
    img = image(tmp / "img.tar", lib, name)
    torch = tmp / "torch-build"
    (torch / "torch/lib").mkdir(parents=True, exist_ok=True)
    (torch / "torch/lib/libtorch.so").write_bytes(eg.shared_object(b"\0libtorch.so\0"))
    return {
        "kernels-file": ("kernels", str(so), *GPU),
        "kernels-wheel": ("kernels", str(whl), *GPU),
        "abi-file": ("abi", str(so), str(torch)),
        "abi-wheel": ("abi", str(whl), str(torch)),
        "doctor": ("doctor", "--site-packages", str(sp), *GPU),
        "image": ("image", str(img), *GPU),
    }


def empty_members_wheel(dest: Path, n: int = 200_000) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    path = dest / "many-1.0-py3-none-any.whl"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for i in range(n):
            zf.writestr(zipfile.ZipInfo(f"m/{i}.so"), b"")
        zf.writestr("many-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: many\nVersion: 1.0\n")
        zf.writestr("many-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr("many-1.0.dist-info/RECORD", "")
    path.write_bytes(buf.getvalue())
    return path


def doubling_dockerfile(kind: str = "ENV", n: int = 30) -> str:
    lines = ["FROM python:3.12-slim"]
    if kind == "ARG":
        lines.append("ARG A1=xxxxxxxxxxxxxxxx")
        lines += [f"ARG A{i + 1}=${{A{i}}}${{A{i}}}" for i in range(1, n)]
    else:
        lines.append("ENV A1=xxxxxxxxxxxxxxxx")
        lines += [f"ENV A{i + 1}=${{A{i}}}${{A{i}}}" for i in range(1, n)]
    lines.append(f"RUN echo ${{A{n}}} && uv pip install --system torch")
    lines.append(f"WORKDIR /${{A{n}}}")
    return "\n".join(lines) + "\n"


# -- tar archives of many members, written header by header ------------------------------------------

def _ustar(name: str, size: int = 0, mtime: int = 0) -> bytes:
    import tarfile

    info = tarfile.TarInfo(name)
    info.size, info.mtime = size, mtime
    return info.tobuf(format=tarfile.USTAR_FORMAT)


def tar_members(n: int, *, pad: int = 0, prefix: str = "m/", chunk: int = 4096, end: bool = True) -> Iterator[bytes]:
    """A tar archive of `n` members named `<prefix><7 digits>`, each holding `pad` zero bytes (0:
    empty), then (`end`) the end-of-archive blocks, in pieces of `chunk` members: one header is built, then
    only its name digits and checksum are patched (200,000 members in well under a second)."""
    data = (pad + 511) // 512 * 512
    hdr = bytearray(_ustar(f"{prefix}0000000", pad))
    at = len(prefix.encode())
    hdr[148:156] = b" " * 8
    base = sum(hdr) - 7 * ord("0")
    body = bytes(data)
    out = bytearray()
    for i in range(n):
        digits = b"%07d" % i
        hdr[at:at + 7] = digits
        hdr[148:156] = b"%06o\0 " % (base + sum(digits))
        out += hdr
        out += body
        if len(out) >= chunk * (512 + data):
            yield bytes(out)
            out.clear()
    yield bytes(out) + bytes(1024 if end else 0)


def tar_size(n: int, pad: int = 0) -> int:
    return n * (512 + (pad + 511) // 512 * 512) + 1024


def many_members_image(dest: Path, layers: list[int], *, pad: int = 0, archive_members: int = 0) -> Path:
    """A classic `docker save` tarball (uncompressed `layer.tar`s, as `docker save` writes them) whose
    layers hold `layers[i]` members of `pad` bytes each, streamed to `dest` (nothing held whole in
    memory); `archive_members` empty members are added to the archive itself."""
    import json

    diff_ids, names = [], []
    with open(dest, "wb") as fh:
        def member(name: str, pieces: Iterable[bytes], size: int, h=None) -> None:
            fh.write(_ustar(name, size, 1_700_000_000))
            for piece in pieces:
                fh.write(piece)
                if h is not None:
                    h.update(piece)
            fh.write(bytes(-size % 512))

        for i, n in enumerate(layers):
            h = hashlib.sha256()
            name = f"{i:064x}/layer.tar"
            member(name, tar_members(n, pad=pad), tar_size(n, pad), h)
            diff_ids.append(f"sha256:{h.hexdigest()}")
            names.append(name)
        for piece in tar_members(archive_members, prefix="junk/", end=False):
            fh.write(piece)
        cfg = json.dumps({**im.config(), "rootfs": {"type": "layers", "diff_ids": diff_ids}}).encode()
        cfg_name = f"{hashlib.sha256(cfg).hexdigest()}.json"
        member(cfg_name, [cfg], len(cfg))
        manifest = json.dumps([{"Config": cfg_name, "RepoTags": ["many:1"], "Layers": names}]).encode()
        member("manifest.json", [manifest], len(manifest))
        fh.write(bytes(1024))
    return dest


# -- a loader cache (/etc/ld.so.cache in an image) -------------------------------------------------

def loader_cache(entries: int = 1 << 18, *, regions: int = 1, sliding: bool = False) -> bytes:
    """A glibc loader cache (new format) whose `entries` all name strings inside `regions` runs of
    4,095 'A's: one shared string each (`sliding=False`: 262,144 entries decoded one by one made
    2 GB of names), or every offset inside the runs (`sliding=True`: up to 8 MB of distinct names
    per 4 KB run)."""
    run = 4095
    table = 48 + entries * 24
    header = struct.pack("<20sIIB3xI12x", b"glibc-ld.so.cache1.1", entries, regions * (run + 1), 2, 0)
    starts = [table + r * (run + 1) for r in range(regions)]
    if sliding:
        rows = b"".join(struct.pack("<iIIIQ", 0x303, starts[i % regions] + (i // regions) % run,
                                    starts[i % regions] + (i // regions + 1) % run, 0, 0) for i in range(entries))
    else:
        rows = struct.pack("<iIIIQ", 0x303, starts[0], starts[0], 0, 0) * entries
    return header + rows + (b"A" * run + b"\0") * regions


def image_with_file(dest: Path, path: str, data: bytes) -> Path:
    """A `docker save` tarball (gzip layer inside an OCI-style archive) holding `data` at `path`."""
    layer = im.layer([im.file_("usr/bin/true", b"", 0o755), im.file_(path, data)])
    return im.write_oci_layout(dest, [layer], im.config(), compression="gzip")
