"""Fuzz the ELF reader: header, sections, segments, dynamic tables, symbols, versions.

Entry points: `read_elf` (whole buffer) and `read_elf_stream` (the same file seen once in
pieces, as a deflated wheel member inflates). Both must return or raise `InputError`.
"""

from __future__ import annotations

import sys

from _harness import contract, instrumented, main, read_seed_files

with instrumented():
    from wheeldoc.binary.elf import ElfInfo, read_elf, read_elf_stream
    from wheeldoc.binary.elffile import ElfFile


def _fixture_seeds() -> list[bytes]:
    return read_seed_files(["fixtures/abi/lib/**/*.so*", "fixtures/abi/ext/*.so", "fixtures/abi/stripped/*",
                            "fixtures/abi/broken/*", "fixtures/kernels/libhostonly.so",
                            "fixtures/kernels/sm_90.cubin"])


def seeds() -> list[bytes]:
    import _hostile_seeds

    return _fixture_seeds() + _hostile_seeds.elf()  # the shapes tests/hostile/ proves bounded


def _use(info: ElfInfo) -> None:
    syms = info.symbols
    syms.exports()
    syms.undefined()
    for s in syms.defined():
        str(s)
    info.defined_versions
    ElfInfo.from_json(info.to_json())


@contract
def test_one_input(data: bytes) -> None:
    ElfFile(data).segments()
    _use(read_elf(data, "fuzz.so"))
    if data:
        step = 512 + data[-1] * 64  # pieces of 512 B..16.8 KB (inflating streams hand 8 MB ones)
        pieces = ((i, data[i:i + step]) for i in range(0, len(data), step))
        info = read_elf_stream(pieces, len(data), "fuzz.so")
        if info is not None:
            _use(info)


if __name__ == "__main__":
    main(__file__, test_one_input, seeds)
    sys.exit(0)
