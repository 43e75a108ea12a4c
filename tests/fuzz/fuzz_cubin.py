"""Fuzz the cubin reader: EM_CUDA ELF header, e_flags, `.nv.compat`, `.note.nv.cuinfo` and
`.note.nv.tkinfo` notes (`read_cubin`), and the compat record parser on its own."""

from __future__ import annotations

from _harness import contract, instrumented, main, read_seed_files

with instrumented():
    from wheeldoc.kernels.cubin import compat_accelerator, parse_compat, read_cubin


def seeds() -> list[bytes]:
    import _hostile_seeds

    return (read_seed_files(["fixtures/kernels/*.cubin", "fixtures/kernels/broken/truncated.cubin"])
            + _hostile_seeds.cubin())  # the shapes tests/hostile/ proves bounded


@contract
def test_one_input(data: bytes) -> None:
    read_cubin(data, "fuzz.cubin", offset=0x40)
    try:
        compat_accelerator(parse_compat(data[:4096]))
    except ValueError:  # parse_compat's documented error; read_cubin turns it into InputError
        pass


if __name__ == "__main__":
    main(__file__, test_one_input, seeds)
