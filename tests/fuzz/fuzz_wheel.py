"""Fuzz wheel (zip) reading: central directory, member classification, stored and deflated
reads, streams, RECORD, METADATA, WHEEL and the ELF facts of `.so` members.

Two input shapes. An input whose first byte is even (every zip starts with `P`, 0x50) is the
archive itself. An odd first byte switches to a structured wheel: the rest of the input
(`atheris.FuzzedDataProvider`) picks member names (hostile ones included: `../`, absolute,
drive letters, NUL, duplicates), contents, compression and Unix modes (symlinks, devices),
written by `zipfile`, so the name and entry checks see far more than byte flips reach.

Besides returning or raising `InputError`, a member that is listed must have a safe name
(nothing absolute, no `..` part), and a rejected member must never open.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
import zipfile

from _harness import Provider, contract, instrumented, main, read_seed_files

with instrumented():
    from wheeldoc.core.errors import InputError
    from wheeldoc.binary.elf import read_elf_member
    from wheeldoc.binary.members import Limits, open_source

# Small limits so the size and ratio checks are reached by small inputs.
LIMITS = Limits(max_member_size=1 << 20, max_ratio=50, ratio_floor=4096, max_members=512,
                max_text=1 << 20)
_DIR = tempfile.mkdtemp(prefix="wheeldoc-fuzz-wheel-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
WHEEL = os.path.join(_DIR, "fuzz-1.0-cp311-cp311-linux_x86_64.whl")
NAMES = ["fuzz-1.0.dist-info/METADATA", "fuzz-1.0.dist-info/RECORD", "fuzz-1.0.dist-info/WHEEL",
         "fuzz/_C.so", "fuzz/lib/libx.so.1", "../evil.so", "/abs/libx.so", "C:/win.so",
         "fuzz/../../up.so", "a\\..\\b.so", "fuzz/", "", "x\0y.so", "fuzz/./a.so", "fuzz//b.so"]
MODES = [0, 0o100644, 0o120777, 0o040755, 0o020644, 0o010644, 0o140644]


def seeds() -> list[bytes]:
    import _hostile_seeds

    return (read_seed_files(["fixtures/abi/wheels/*.whl", "fixtures/abi/hostile/*.whl"], max_size=32 << 10)
            + _hostile_seeds.wheel())  # the shapes tests/hostile/ proves bounded


def structured(data: bytes) -> bytes:
    fdp = Provider(data)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for _ in range(fdp.ConsumeIntInRange(0, 8)):
            name = (fdp.PickValueInList(NAMES) if fdp.ConsumeBool()
                    else fdp.ConsumeUnicodeNoSurrogates(fdp.ConsumeIntInRange(0, 40)))
            info = zipfile.ZipInfo(name or "x")
            info.filename = name  # keep even an empty name (ZipInfo would refuse it)
            info.compress_type = zipfile.ZIP_DEFLATED if fdp.ConsumeBool() else zipfile.ZIP_STORED
            info.external_attr = fdp.PickValueInList(MODES) << 16
            body = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 512))
            if fdp.ConsumeBool():
                body *= fdp.ConsumeIntInRange(1, 4000)  # highly compressible: ratio checks
            try:
                zf.writestr(info, body)
            except (ValueError, UnicodeEncodeError):
                continue
    return buf.getvalue()


def _safe(name: str) -> bool:
    parts = name.replace("\\", "/").split("/")
    return (bool(name) and "\0" not in name and not name.startswith(("/", "\\")) and ".." not in parts
            and not re.match(r"[A-Za-z]:", name))


@contract
def test_one_input(data: bytes) -> None:
    if data and data[0] & 1:
        data = structured(data[1:])
    with open(WHEEL, "wb") as f:
        f.write(data)
    with open_source(WHEEL, LIMITS) as src:
        for r in src.rejected:
            try:
                src.open(r.name).close()
            except InputError:
                continue
            if src.member(r.name) is None:
                raise AssertionError(f"rejected member {r.name!r} ({r.reason}) opened")
        for m in src.members[:64]:
            if not _safe(m.name):
                raise AssertionError(f"unsafe member name listed: {m.name!r}")
            try:
                if m.name.endswith(".so") or ".so." in m.name:
                    read_elf_member(src, m.name)
                    with src.stream(m.name) as pieces:
                        for _ in pieces:
                            pass
                else:
                    src.read_bytes(m.name, 1 << 20)
            except InputError:
                continue
        for call in (src.metadata, src.wheel_info, src.shared_objects):
            try:
                call()
            except InputError:
                continue


if __name__ == "__main__":
    main(__file__, test_one_input, seeds)
