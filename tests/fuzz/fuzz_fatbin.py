"""Fuzz the fatbin reader: containers, entry headers, options, concatenated entries, payloads.

`read_fatbin` detects the format (host ELF with `.nv_fatbin`, bare fatbin, cubin, PTX text)
and lists every header; then each entry's image is decompressed with `entry_image` (bounded
by the declared size) and cubin entries are read with `entry_cubin_info`, as `wheeldoc
kernels` does. Everything must return or raise `InputError`.
"""

from __future__ import annotations

from _harness import contract, instrumented, main, read_seed_files

with instrumented():
    from wheeldoc.core.errors import InputError
    from wheeldoc.kernels.fatbin import entry_cubin_info, entry_image, listing, read_fatbin

MAX_DECODED = 64  # entries decompressed per input (cuBLAS-sized inputs are not the point)


def _fixture_seeds() -> list[bytes]:
    return read_seed_files(["fixtures/kernels/*.fatbin", "fixtures/kernels/*.ptx",
                            "fixtures/kernels/sm_90*.cubin", "fixtures/kernels/sm_121a.cubin",
                            "fixtures/kernels/broken/*", "fixtures/kernels/libconcat.so",
                            "fixtures/kernels/libabi7-lz4.so", "fixtures/kernels/libhostonly.so"],
                           max_size=64 << 10)


def seeds() -> list[bytes]:
    import _hostile_seeds

    return _fixture_seeds() + _hostile_seeds.fatbin()  # the shapes tests/hostile/ proves bounded


@contract
def test_one_input(data: bytes) -> None:
    fb = read_fatbin(data, "fuzz.so")
    listing(fb)
    for e in fb.entries[:MAX_DECODED]:
        e.arch, e.virtual_arch, e.ptx_isa, e.size
        try:
            if e.kind == "cubin":
                entry_cubin_info(data, e, "fuzz.so")
            else:
                entry_image(data, e, "fuzz.so")
        except InputError:
            continue


if __name__ == "__main__":
    main(__file__, test_one_input, seeds)
