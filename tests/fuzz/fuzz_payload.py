"""Fuzz the LZ4 / ZSTD payload decoder of fatbin entries, with any declared sizes.

Input layout (so seeds are real payloads): byte 0 picks the codec (bit 0: zstd, else lz4)
and the kind (bit 1: cubin, else PTX); bytes 1..8 are the decompressed size the header
declares (u64 LE, anything up to 2**64-1: a 4 GB claim included); the rest is the stored
payload. `entry_image` must return exactly the declared size, or raise `InputError`
(`LimitExceeded` past `MAX_IMAGE`); it never trusts the declared size beyond that bound.
"""

from __future__ import annotations

import struct

from _harness import REPO, contract, instrumented, main

with instrumented():
    from wheeldoc.kernels.fatbin import FLAG_LZ4, FLAG_ZSTD, FatbinEntry, entry_image, read_fatbin


def make(codec: str, kind: str, want: int, payload: bytes) -> bytes:
    return bytes([(codec == "zstd") | (kind == "cubin") << 1]) + struct.pack("<Q", want) + payload


def seeds() -> list[bytes]:
    out = []
    for p in sorted((REPO / "fixtures/kernels").glob("*.fatbin")):
        data = p.read_bytes()
        for e in read_fatbin(data).entries:
            if e.compression in ("lz4", "zstd") and e.parent is None and e.compressed_size < 64 << 10:
                stored = data[e.payload_offset:e.payload_offset + e.compressed_size]
                out.append(make(e.compression, e.kind, e.decompressed_size, stored))
    import _hostile_seeds

    return out + _hostile_seeds.payload()  # bombs, 2**64-1 claims, 2,000 frames, skippable frames


def entry_for(data: bytes) -> tuple[FatbinEntry, bytes]:
    mode = data[0]
    (want,) = struct.unpack_from("<Q", data, 1)
    payload = data[9:]
    zstd = bool(mode & 1)
    kind, code = ("cubin", 2) if mode & 2 else ("ptx", 1)
    entry = FatbinEntry(0, 0, 0, kind, code, 90, "", (1, 8), FLAG_ZSTD if zstd else FLAG_LZ4, 64, 0,
                        len(payload), len(payload) or 1, want, "zstd" if zstd else "lz4", None,
                        None, None)
    return entry, payload


@contract
def test_one_input(data: bytes) -> None:
    if len(data) < 9:
        return
    entry, payload = entry_for(data)
    out = entry_image(payload, entry, "fuzz.fatbin")
    if len(out) != entry.decompressed_size:
        raise AssertionError(f"entry_image returned {len(out)} bytes, header declares {entry.decompressed_size}")


if __name__ == "__main__":
    main(__file__, test_one_input, seeds)
