"""Seeds of the hostile shapes tests/hostile/ proves bounded, small enough for a fuzzer (at most
64 KiB each), so the campaigns mutate around them: names that share one string, version chains
that share entries, DT_NEEDED x RUNPATH, overlapping containers, zero padding, deep nesting,
4,300-digit and Unicode digits, doubling variables, ONBUILD chains, credentials."""

from __future__ import annotations

from tests.hostile import bombs as b
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
