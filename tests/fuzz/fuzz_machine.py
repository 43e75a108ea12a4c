"""Fuzz the host readers `doctor` runs: the glibc loader cache (`/etc/ld.so.cache`, new and
compat formats), `ldconfig -p` output and `/proc/driver/nvidia/version`.

Byte 0 picks the reader (mod 3): 0 the loader cache, through `read_library_path` (a cache
that does not parse becomes a note, never an error) and `parse_ld_so_cache`; 1 `ldconfig -p`
text; 2 the `/proc` version text, through `read_driver` (NVML off). Seeds: caches that the
real `ldconfig -C` builds over the fixture libraries, and the driver lines the tests record.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

from _harness import REPO, contract, instrumented, main

with instrumented():
    from wheeldoc.environment.machine import (
        parse_ld_so_cache,
        parse_ldconfig_p,
        parse_proc_version,
        read_driver,
        read_library_path,
    )

_DIR = tempfile.mkdtemp(prefix="wheeldoc-fuzz-machine-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
FILE = os.path.join(_DIR, "input")
PROC = [b"NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n",
        b"NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
        b"(dvs-builder@U16-I3-B03-4-3)  Tue Sep 23 09:52:11 UTC 2025\nGCC version:  gcc version 12.2.0\n",
        b"NVRM version: NVIDIA UNIX x86_64 Kernel Module  390.157  Wed Oct 12 09:19:07 UTC 2022\n"]


def seeds() -> list[bytes]:
    import _hostile_seeds

    out = [b"\x02" + p for p in PROC] + _hostile_seeds.machine()  # the shapes tests/hostile/ proves bounded
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    if not os.path.exists(ldconfig):
        return out
    with tempfile.TemporaryDirectory() as tmp:
        libs = sorted({str(p.parent) for p in REPO.glob("fixtures/abi/lib/**/*.so*")})
        conf = os.path.join(tmp, "ld.so.conf")
        with open(conf, "w") as fh:
            fh.write("\n".join(libs) + "\n")
        for fmt in ("new", "compat"):
            cache = os.path.join(tmp, f"cache-{fmt}")
            subprocess.run([ldconfig, "-c", fmt, "-C", cache, "-f", conf], check=True, capture_output=True)
            with open(cache, "rb") as fh:
                out.append(b"\x00" + fh.read())
            text = subprocess.run([ldconfig, "-p", "-C", cache], capture_output=True, check=True).stdout
            out.append(b"\x01" + text)
    return out


@contract
def test_one_input(data: bytes) -> None:
    if not data:
        return
    mode, rest = data[0] % 3, data[1:]
    if mode == 0:
        with open(FILE, "wb") as fh:
            fh.write(rest)
        read_library_path({"LD_LIBRARY_PATH": ""}, cache=FILE, ldconfig=False)
        parse_ld_so_cache(rest, FILE)
    elif mode == 1:
        parse_ldconfig_p(rest.decode("utf-8", "replace"))
    else:
        parse_proc_version(rest.decode("utf-8", "replace"))
        with open(FILE, "wb") as fh:
            fh.write(rest)
        read_driver(proc_version=FILE, nvml=False)


if __name__ == "__main__":
    main(__file__, test_one_input, seeds)
