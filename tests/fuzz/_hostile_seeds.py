"""Seeds of the hostile shapes tests/hostile/ proves bounded, small enough for a fuzzer (at most
64 KiB each), so the campaigns mutate around them: names that share one string, version chains
that share entries, DT_NEEDED x RUNPATH, overlapping containers, zero padding, deep nesting,
4,300-digit and Unicode digits, doubling variables, ONBUILD chains, credentials."""

from __future__ import annotations

from tests.hostile import bombs as b
from tests.hostile import bombs
from tests.hostile import deep as d
from tests.hostile import elfgen as eg


def elf() -> list[bytes]:
    return [b.needed_unterminated(2_000, 4 << 10), b.symbols_one_string(1_000, 16 << 10),
            b.verneed_product(60, 60), b.needed_times_runpath(200, 200), b.section_names_unterminated(200, 4 << 10)]


def fatbin() -> list[bytes]:
    padded = eg.container(80) + eg.entry(psize=16) + bytes(16) + bytes(32 << 10) + eg.container(80) + eg.entry(psize=16) + bytes(16)
    entries = eg.container(500 * 64) + eg.entry() * 500
    return [b.overlapping_containers(300), padded, entries]


def dockerfile() -> list[bytes]:
    out = [b.doubling_dockerfile("ENV", 12).encode(), b.doubling_dockerfile("ARG", 12).encode(),
           ("FROM python:3.12\nENV B=" + "${A:-" * 200 + "x" + "}" * 200 + "\n").encode(),
           ("FROM python:3.12\n" + "ONBUILD " * 40 + "RUN echo\n").encode(),
           f"FROM python:3.12\nRUN {d.nested_array(2_000)}\nCMD {d.nested_array(2_000)}\n".encode(),
           "FROM python:3.12 AS a\nFROM python:3.12\nCOPY --from=² /x /y\nCOPY --from=99999999999999999999 /x /y\n".encode(),
           "FROM nvidia/cuda:1².0-runtime\nENV UV_INDEX_URL=https://u:ghp_0123456789abcdefABCDEF0123@x.example/simple\n"
           "FROM python:3.12\nRUN uv pip install --system torch\n".encode()]
    return out


def uv_lock() -> list[bytes]:
    return [d.uv_lock("x = " + d.nested_array(500)).encode(), d.uv_lock("size = " + "9" * 4_400).encode(),
            d.uv_lock("").replace('"2.11.0"', '"2.1²"').encode(),
            d.uv_lock("").replace("https://pypi.org", "https://alice:s3cr3t-t0k3n-value@pypi.org").encode()]


def pylock() -> list[bytes]:
    return [d.pylock("x = " + d.nested_array(500)).encode(), d.pylock("x = " + "9" * 4_400).encode()]


def requirements() -> list[bytes]:
    return [("torch @ http://[" + "y" * 20_000 + "\n").encode(), ("--frobnicate " + "y" * 20_000 + "\n").encode(),
            ("torch==2.11.0 \\\n" + ("x" * 100 + " \\\n") * 200 + "\n").encode(),
            b"--index-url https://alice:tok3n-s3cr3t-value@pypi.example/simple\ntorch==2.1\xc2\xb2\n"]


def dist() -> list[bytes]:
    """fuzz_dist's inputs: byte 0 picks METADATA (0), RECORD (1), direct_url.json (2), version.py (3)."""
    return [bytes([1]) + "torch/a.so,sha256=x,²\n../outside.so,,\n/abs.so,,\n".encode() + b"x.so,,9" + b"9" * 4_400,
            bytes([2]) + d.nested_object_json(2_000).encode(),
            bytes([3]) + b"__version__ = " + b"(" * 2_000 + b"'1'" + b")" * 2_000 + b"\n",
            bytes([3]) + b"__version__ = " + b"-" * 20_000 + b"1\n"]


# -- round two: the harnesses of images, wheels, RUN scripts, the machine, cubins, payloads --------

SECRET_URL = "https://alice:ghp_0123456789abcdefABCDEF0123@pypi.example/simple"
CONTROL = "\x1b[31mred\x07\r\nX\x1b]0;title\x07"
MAX_SEED = 64 << 10


def _small(seeds: list[bytes]) -> list[bytes]:
    """The seeds a fuzzer should mutate around: each at most 64 KiB (checked, not cut)."""
    too_big = [len(s) for s in seeds if len(s) > MAX_SEED]
    assert not too_big, f"hostile seeds over {MAX_SEED} bytes: {too_big}"
    return seeds


def _tmp():
    import tempfile

    return tempfile.TemporaryDirectory(prefix="wheeldoc-seeds-")


def _raw_tar(members: list[tuple[bytes, bytes]]) -> bytes:
    """A tar of (512-byte header, data) pairs, headers taken as given (checksums fixed by the
    image harness, which recomputes them)."""
    out = bytearray()
    for hdr, data in members:
        out += hdr + data + bytes(-len(data) % 512)
    return bytes(out + bytes(1024))


def _header(name: str, size: int = 0, typeflag: bytes = b"0", mode: bytes = b"0000644") -> bytes:
    import tarfile

    info = tarfile.TarInfo(name)
    info.size = size
    hdr = bytearray(info.tobuf(format=tarfile.USTAR_FORMAT))
    hdr[156:157] = typeflag
    hdr[100:100 + len(mode)] = mode
    return bytes(hdr)


def _pax(records: dict[str, str], name: str, data: bytes = b"") -> list[tuple[bytes, bytes]]:
    body = b""
    for k, v in records.items():
        rec = f" {k}={v}\n".encode()
        n = len(rec) + 1
        while len(str(n)) + len(rec) != n:
            n = len(str(n)) + len(rec)
        body += str(n).encode() + rec
    return [(_header("././@PaxHeader", len(body), b"x"), body), (_header(name, len(data)), data)]


def _site_layer(sp: str = "usr/lib/python3.12/site-packages") -> list:
    """A site-packages whose dist-info carries the round-two shapes: credentials and control
    characters in METADATA, 4,300-digit and Unicode-digit RECORD sizes, rows outside, a nested
    direct_url.json, a torch/version.py that nests."""
    from tests import imagefactory as im

    info = f"{sp}/torch-2.11.0+cu130.dist-info"
    record = ("torch/version.py,,9" + "9" * 4_400 + "\ntorch/a.so,sha256=x,²\n../../../etc/passwd,,\n/abs.so,,\n")
    return [im.file_(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: torch{CONTROL}\nVersion: 2.1²\n"
                                         f"Project-URL: Index, {SECRET_URL}\n\n".encode()),
            im.file_(f"{info}/RECORD", record.encode()),
            im.file_(f"{info}/direct_url.json", d.nested_object_json(300).encode()),
            im.file_(f"{sp}/torch/version.py", b"__version__ = " + b"(" * 300 + b"'1'" + b")" * 300 + b"\n"),
            im.file_("usr/bin/python3.12", b"", 0o755)]


def image() -> list[bytes]:
    """fuzz_image's inputs: byte 0 picks a whole archive (0), a layer tar (1) or a structured layer (2)."""
    import json

    from tests import imagefactory as im

    out = []
    with _tmp() as tmp:
        from pathlib import Path

        tmp = Path(tmp)
        layer = im.layer(_site_layer())
        cfg = im.config(env=[f"UV_INDEX_URL={SECRET_URL}", f"PIP_EXTRA_INDEX_URL={SECRET_URL}",
                             f"TITLE={CONTROL}", "LD_LIBRARY_PATH=/usr/lib:/opt/²:" + "/d" * 2_000],
                        labels={"token": "hf_" + "A" * 34, "x": CONTROL},
                        history=[f"RUN pip install --index-url {SECRET_URL} torch"])
        out.append(b"\x00" + im.write_docker_save(tmp / "a.tar", [layer], cfg, tags=(f"app:1²{CONTROL}",)).read_bytes())
        base = im.config()
        for kw in ({"config": d.nested_object_json(300).encode()},
                   {"manifest": d.nested_array(300).encode()},
                   {"config": (json.dumps(base)[:-1] + ', "zz": ' + "9" * 4_400 + "}").encode()},
                   {"manifest": json.dumps([{"Config": "x", "Layers": [], "RepoTags": ["a:" + "9" * 4_400]}]).encode()}):
            out.append(b"\x00" + d.image_with(tmp / "b.tar", **kw).read_bytes())
        oci = im.write_docker_save(tmp / "c.tar", [layer], im.config(), style="oci-archive")
        out.append(b"\x00" + _replace(oci, {"index.json": ('{"schemaVersion": 2, "manifests": '
                                                           + d.nested_array(300) + "}").encode()}))
        # the harness's member caps (archive 48, layer 24, image 40, 32 before the layers pay):
        # 50 junk members in the archive; two layers of 20 empty members (pay for 11 each); a
        # layer of 30 members that pays for them (512 bytes each); three that pay, 45 in all
        for i, (layers, pad, junk) in enumerate((([1], 0, 50), ([20, 20], 0, 0), ([30], 512, 0),
                                                  ([20, 20, 5], 512, 0))):
            out.append(b"\x00" + bombs.many_members_image(tmp / f"m{i}.tar", layers, pad=pad,
                                                           archive_members=junk).read_bytes())
    out.append(b"\x01" + b"".join(bombs.tar_members(40)))  # one layer of 40 empty members
    out.append(b"\x01" + im.layer([im.file_("/".join(["d"] * 40) + "/f", b"x"),
                                   im.symlink(f"bad{CONTROL}", f"../{CONTROL}"),
                                   im.file_(f"etc/{CONTROL}", CONTROL.encode())]))
    out.append(b"\x01" + _raw_tar(_pax({"size": "9" * 4_400}, "big") + _pax({"size": "²"}, "sup")
                                  + _pax({"path": "a/" * 300 + "f", "GNU.sparse.size": "9" * 50}, "sparse")))
    out.append(b"\x01" + _raw_tar([(_header("m²", 0, b"0", "²".encode()), b""),
                                   (_header("sparse", 0, b"S"), b""),
                                   (_header("big", 0, b"0", b"7" * 7), b"")]))
    out.append(b"\x01" + im.layer([im.file_("etc/ld.so.cache", bombs.loader_cache(1_500)),
                                   im.file_("usr/lib/libcudart.so.12", b"")]))
    return _small(out)


def _replace(path, members: dict[str, bytes]) -> bytes:
    import io
    import tarfile

    with tarfile.open(path) as src:
        have = {m.name: src.extractfile(m).read() for m in src.getmembers() if m.isfile()}
    have.update(members)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for name, data in have.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def wheel() -> list[bytes]:
    """fuzz_wheel's inputs (archives: their first byte, 'P', is even)."""
    import io
    import zipfile
    from pathlib import Path

    out = []
    with _tmp() as tmp:
        tmp = Path(tmp)
        out.append(bombs.empty_members_wheel(tmp / "many", 560).read_bytes())  # the harness allows 512
        for i, lib in enumerate((bombs.needed_unterminated(2_000, 4 << 10), bombs.symbols_one_string(1_000, 16 << 10),
                                 bombs.verneed_product(60, 60), bombs.needed_times_runpath(200, 200),
                                 bombs.section_names_unterminated(200, 4 << 10), bombs.overlapping_containers(300))):
            out.append(bombs.wheel(tmp / f"w{i}", lib).read_bytes())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        info = "pkg-1.0.dist-info"
        zf.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: pkg{CONTROL}\nVersion: 1.²\n"
                                        f"Project-URL: Index, {SECRET_URL}\nRequires-Dist: torch==" + "9" * 4_400 + "\n\n")
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: py3-none-linux_x86_64\n")
        zf.writestr(f"{info}/RECORD", "pkg/a.so,sha256=x,9" + "9" * 4_400 + "\npkg/b.so,,²\n../up.so,,\n/abs.so,,\n")
        zf.writestr(f"pkg/{CONTROL}.so", b"\x7fELF")
        zf.writestr("pkg/" + "d/" * 300 + "x.so", b"")
    out.append(buf.getvalue())
    return _small(out)


def shell() -> list[bytes]:
    """fuzz_shell's inputs: RUN bodies."""
    run = [f"pip install --index-url {SECRET_URL} torch",
           f"uv pip install --system --extra-index-url={SECRET_URL} torch==2.11.0+cu130",
           f"export UV_INDEX_URL={SECRET_URL} && uv pip install torch && PIP_INDEX_URL={SECRET_URL} pip install x",
           f'pip install "torch @ {SECRET_URL.replace("/simple", "/torch.whl")}"',
           "pip install torch==" + "9" * 4_400 + " torch==2.1² 'torch>=²'",
           f"pip install --index-url https://x/{CONTROL} torch{CONTROL}",
           "echo " + "${A:-" * 300 + "x" + "}" * 300 + " && pip install torch",
           "echo " + "$(" * 500 + "pip install torch" + ")" * 500,
           "(" * 2_000 + "pip install torch" + ")" * 2_000,
           'bash -c "' + 'bash -c \\"' * 8 + "pip install torch" + '\\"' * 8 + '"',
           "true; " * 6_000 + "pip install torch",
           "cat <<EOF > /x\n" + "pip install torch\n" * 200,
           " ".join(f"<<H{i}" for i in range(2_000)) + "\npip install torch\n",
           "pip install '" + "y" * 20_000,
           "A1=xxxxxxxxxxxxxxxx " + " ".join(f"A{i + 1}=$A{i}$A{i}" for i in range(1, 30)) + " pip install $A30"]
    return _small([r.encode() for r in run])


def machine() -> list[bytes]:
    """fuzz_machine's inputs: byte 0 picks the loader cache (0), `ldconfig -p` text (1), /proc text (2)."""
    import struct

    new = b"glibc-ld.so.cache1.1"
    caches = [bombs.loader_cache(1_500), bombs.loader_cache(1_400, regions=2, sliding=True),
              struct.pack("<20sIIB3xI12x", new, 0xFFFFFFFF, 0, 2, 0),
              b"ld.so-1.7.0\0" + struct.pack("<I", 0xFFFFFFFF) + new,
              b"ld.so-1.7.0\0" + struct.pack("<I", 2) + bytes(24) + struct.pack("<20sIIB3xI12x", new, 1, 0, 2, 0)
              + struct.pack("<iIIIQ", 0x303, 0xFFFFFFF0, 0, 0, 0)]
    ldconfig = ["9" * 4_400 + " libs found in cache `/etc/ld.so.cache'\n\tlibcudart.so.12 (libc6,x86-64) => /x\n",
                "\tlibcudart.so.1² (libc6,x86-64) => /usr/lib/libcudart.so.1²\n" * 50,
                f"\tlibcuda.so.1{CONTROL} (libc6,x86-64, hwcap: 0x{'f' * 4_400}) => /{CONTROL}\n",
                "\tlibcublas.so.13 (libc6,x86-64) => /" + "d/" * 10_000 + "\n",
                "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/libcuda.so.1\n" * 1_000]
    proc = ["NVRM version: NVIDIA UNIX x86_64 Kernel Module  5²5.129.03  Thu Oct 19 18:56:32 UTC 2023\n",
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + "9" * 4_400 + ".1.2  Thu\n",
            f"NVRM version: NVIDIA UNIX x86_64 Kernel Module{CONTROL}  580.95.05{CONTROL}\n",
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05 " + "x" * 40_000 + "\n",
            "NVRM version: " * 3_000 + "Kernel Module  580.95.05\n"]
    return _small([b"\x00" + c for c in caches] + [b"\x01" + t.encode() for t in ldconfig]
                  + [b"\x02" + t.encode() for t in proc])


def _cuda(data: bytes, flags: int = 0x5A5A) -> bytes:
    """An ELF from elfgen with e_machine EM_CUDA (190) and `flags` as e_flags."""
    import struct

    buf = bytearray(data)
    struct.pack_into("<H", buf, 18, 190)
    struct.pack_into("<I", buf, 48, flags)
    return bytes(buf)


def _note(ntype: int, desc: bytes, name: bytes = b"NVIDIA Corp\0") -> bytes:
    import struct

    pad = lambda b: b + bytes(-len(b) % 4)  # noqa: E731
    return struct.pack("<III", len(name), len(desc), ntype) + pad(name) + pad(desc)


def cubin() -> list[bytes]:
    """fuzz_cubin's inputs: EM_CUDA ELFs with count and string bombs in their notes and compat list."""
    import struct

    S = eg.Sec
    compat_many = S(".nv.compat", 0x70000086, bytes([1, 9, 0, 0]) * 8_000)
    compat_long = S(".nv.compat", eg.SHT_PROGBITS, struct.pack("<BBH", 4, 9, 0xFFFF) + bytes(60))
    wrong_then_right = S(".note.nv.cuinfo", 7, _note(1, b"x" * 8) * 1_500 + _note(1000, struct.pack("<HHH", 1, 90, 65535)))
    tk = S(".note.nv.tkinfo", 7, _note(2000, struct.pack("<6I", 0, 0, 1, 1, 1, 1) + b"\0" + b"T" * (16 << 10)))
    huge = S(".note.nv.cuinfo", 7, struct.pack("<III", 0xFFFFFFFF, 0xFFFFFFFF, 1000) + bytes(16))
    same = [S(".nv.compat", eg.SHT_PROGBITS, bytes([2, 9, 1, 0])) for _ in range(400)]
    out = [_cuda(eg.elf([compat_many])), _cuda(eg.elf([compat_long])), _cuda(eg.elf([wrong_then_right, tk])),
           _cuda(eg.elf([huge])), _cuda(eg.elf(same)), _cuda(bombs.section_names_unterminated(200, 4 << 10)),
           _cuda(eg.elf([tk]), flags=0xFFFFFFFF)]
    return _small(out)


def payload() -> list[bytes]:
    """fuzz_payload's inputs: codec/kind byte, declared size (u64), stored payload."""
    import struct

    import lz4.block
    import zstandard

    def make(mode: int, want: int, data: bytes) -> bytes:
        return bytes([mode]) + struct.pack("<Q", want) + data

    zeros = bytes(8 << 20)
    lz = lz4.block.compress(zeros, store_size=False)  # 8 MB of zeros in 32 KB (LZ4's ratio tops out at 255)
    zs = zstandard.ZstdCompressor(level=19).compress(bytes(32 << 20))  # 32 MB in a few hundred bytes
    zs_nosize = zstandard.ZstdCompressor(level=3, write_content_size=False).compress(bytes(1 << 20))
    frames = zstandard.ZstdCompressor(level=1).compress(b"x") * 2_000  # 2,000 frames one after another
    skippable = struct.pack("<II", 0x184D2A50, 1 << 30) + zstandard.ZstdCompressor().compress(b"cubin")
    gib = 1 << 30
    out = [make(0, 8 << 20, lz), make(0, gib + 1, lz), make(2, (1 << 64) - 1, lz), make(0, 16, lz),
           make(1, 32 << 20, zs), make(1, 1024, zs), make(3, gib, zs_nosize), make(1, 2_000, frames),
           make(1, 5, skippable), make(0, 0, b""), make(1, 1 << 20, bytes(32 << 10)), make(0, 1 << 20, bytes(32 << 10))]
    return _small(out)
