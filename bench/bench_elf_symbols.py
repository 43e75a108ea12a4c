"""Exported dynamic symbols of a big library: wheeldoc's reader against `nm -D --defined-only`.

    uv run python bench/bench_elf_symbols.py                     # torch 2.14.1's libtorch_cpu.so
    uv run python bench/bench_elf_symbols.py --file some/lib.so  # any file on disk
    uv run python bench/bench_elf_symbols.py --pyelftools        # also time pyelftools' iterator

The member is inflated once (through wheeldoc.binary.members) into a temporary file, so both
tools read the same bytes from the page cache. Each side runs --repeat times; the table shows
the best and the median wall time, the ratio nm / wheeldoc, and whether the two symbol sets
are identical. Also reported: what opening the member from the wheel costs against inflating
it with zipfile alone (the floor for a cold run).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from wheeldoc.binary.elf import read_elf_member, read_elf_path
from wheeldoc.binary.members import WheelArchive

TORCH = "/opt/pypi-more/files/torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl"


def timed(fn, repeat: int) -> tuple[list[float], object]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return times, result


def nm_exported(path: str) -> frozenset[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    return frozenset(line.rsplit(" ", 1)[-1].split("@")[0] for line in out.splitlines() if line)


def ours_exported(path: str) -> frozenset[str]:
    return read_elf_path(path).symbols.exported_names()


def pyelftools_exported(path: str) -> frozenset[str]:
    from elftools.elf.elffile import ELFFile

    with open(path, "rb") as f:
        dynsym = ELFFile(f).get_section_by_name(".dynsym")
        return frozenset(s.name for s in dynsym.iter_symbols()
                         if s["st_shndx"] != "SHN_UNDEF" and s.name and s["st_info"]["bind"] != "STB_LOCAL")


def inflate_only(wheel: str, member: str) -> None:
    with zipfile.ZipFile(wheel) as zf, zf.open(member) as f:
        while f.read(8 << 20):
            pass


def row(label: str, times: list[float]) -> str:
    return f"  {label:<34} best {min(times):7.3f} s   median {statistics.median(times):7.3f} s"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wheel", default=TORCH)
    ap.add_argument("--member", default="torch/lib/libtorch_cpu.so")
    ap.add_argument("--file", help="a library on disk (skips the wheel)")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--pyelftools", action="store_true", help="also time pyelftools' symbol iterator (once)")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="wheeldoc-bench-") as tmp:
        if args.file:
            path = args.file
            print(f"file: {path}")
        else:
            path = str(Path(tmp) / "member.so")  # our own name, never one from the archive
            print(f"wheel: {args.wheel}\nmember: {args.member}")
            floor, _ = timed(lambda: inflate_only(args.wheel, args.member), 3)
            with WheelArchive(args.wheel) as wheel:
                opened, _ = timed(lambda: wheel.open(args.member).close(), 3)
                streamed, _ = timed(lambda: read_elf_member(wheel, args.member), 3)
                with wheel.open(args.member) as data, open(path, "wb") as out:
                    out.write(data.buf)
            print("cold path (from the wheel, CRC + RECORD sha256 checked where the member is read whole):")
            print(row("zipfile inflate only (the floor)", floor))
            print(row("WheelArchive.open (whole member)", opened))
            print(row("read_elf_member (while inflating)", streamed))
            print(f"  ratio open / floor (best): {min(opened) / min(floor):.2f}; "
                  f"read_elf_member / floor: {min(streamed) / min(floor):.2f}")

        nm_times, nm_set = timed(lambda: nm_exported(path), args.repeat)
        our_times, our_set = timed(lambda: ours_exported(path), args.repeat)
        print(f"exported symbols: wheeldoc {len(our_set)}, nm {len(nm_set)}, "
              f"identical: {our_set == nm_set}")
        print(row("nm -D --defined-only", nm_times))
        print(row("wheeldoc read_elf_path + exported", our_times))
        if args.pyelftools:
            pt_times, pt_set = timed(lambda: pyelftools_exported(path), 1)
            print(row("pyelftools iter_symbols (1 run)", pt_times) + f"   same set: {pt_set == our_set}")
        print(f"  ratio nm / wheeldoc (best): {min(nm_times) / min(our_times):.2f}x  "
              f"(median: {statistics.median(nm_times) / statistics.median(our_times):.2f}x)")
        return 0 if our_set == nm_set else 1


if __name__ == "__main__":
    sys.exit(main())
