#!/usr/bin/env python3
"""The streamed read of large wheel members (wheeldoc.kernels.stream) against reading each
member whole, member by member, on real wheels.

    uv run python bench/kernels_stream_parity.py WHEEL...

For every deflated `*.so*` member of at least STREAM_MIN_MEMBER bytes: the fatbin headers and
the containers found in the data sections, once from the bytes the stream kept and once from
the member inflated whole (`WheelArchive.open`, the reader a file gets). Prints one line per
member (entries, embedded containers, bytes kept, whether the stream had to give up) and exits
1 when any result differs. A member where the stream gave up (`Missing`) is read whole by
`kernels`, so it costs time, not correctness; it is counted.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wheeldoc.binary.members import WheelArchive  # noqa: E402
from wheeldoc.core.errors import InputError  # noqa: E402
from wheeldoc.kernels import stream as streaming  # noqa: E402
from wheeldoc.kernels.embedded import scan  # noqa: E402
from wheeldoc.kernels.facts import STREAM_MIN_MEMBER, is_library_name  # noqa: E402
from wheeldoc.kernels.fatbin import read_fatbin  # noqa: E402


def whole(archive: WheelArchive, name: str):
    with archive.open(name) as data:
        fd = data.fileno
        try:
            fb = read_fatbin(data.buf, archive.path, member=name, fd=fd)
        except InputError as e:
            return ("error", e.message, e.offset), None
        try:
            found = scan(data.buf, archive.path, name, fd=fd) if fb.format == "elf" else ()
        except InputError as e:
            found = ("error", e.message, e.offset)
    return fb, found


def streamed(archive: WheelArchive, name: str):
    kept = {}
    real = streaming.Collector

    class Counting(real):  # how many bytes the stream kept, for the report
        def finish(self):
            super().finish()
            kept["bytes"] = self.kept_bytes
            kept["hits"] = len(self.hits)

    streaming.Collector = Counting
    try:
        got = streaming.read_member(archive, name)
    except streaming.Missing:
        return "missing", None, kept
    except InputError as e:
        return ("error", e.message, e.offset), None, kept
    finally:
        streaming.Collector = real
    if got is None:
        return None, None, kept
    try:
        found = got.scan() if got.fatbin.format == "elf" else ()
    except streaming.Missing:
        found = "missing"
    except InputError as e:
        found = ("error", e.message, e.offset)
    return got.fatbin, found, kept


def main(argv: list[str]) -> int:
    bad = gave_up = members = 0
    for wheel in argv:
        with WheelArchive(wheel) as archive:
            for m in archive.members:
                if not (m.compression == "deflated" and m.size >= STREAM_MIN_MEMBER
                        and is_library_name(m.name)):
                    continue
                members += 1
                t0 = time.perf_counter()
                fb_s, found_s, kept = streamed(archive, m.name)
                t1 = time.perf_counter()
                fb_w, found_w = whole(archive, m.name)
                t2 = time.perf_counter()
                if fb_s == "missing" or found_s == "missing":
                    gave_up += 1
                same_fb = fb_s == "missing" or fb_s is None or fb_s == fb_w
                same_found = found_s in ("missing", None) or found_s == found_w
                ok = same_fb and same_found
                bad += not ok
                n = len(fb_w.entries) if hasattr(fb_w, "entries") else fb_w
                e = len(found_w) if isinstance(found_w, tuple) and found_w[:1] != ("error",) else found_w
                print(f"{'ok ' if ok else 'DIFF'} {Path(wheel).name}!{m.name}: {m.size >> 20} MiB, "
                      f"entries {n}, embedded {e}, kept {kept.get('bytes', 0):,} bytes, "
                      f"{kept.get('hits', 0)} magic offsets; "
                      f"stream {'gave up' if 'missing' in (fb_s, found_s) else 'answered'}; "
                      f"{t1 - t0:.1f} s streamed, {t2 - t1:.1f} s whole", flush=True)
    print(f"\n{members} members: {bad} differ, {gave_up} read whole after the stream gave up")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
