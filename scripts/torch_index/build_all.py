"""Rebuild the shipped torch index from every torch wheel on the package index.

    uv run python scripts/torch_index/build_all.py RAW_DIR [--from 2.0.0] [--keep DIR]

For each release from --from to the newest, and for linux x86_64 and aarch64 (the CPython 3.11
wheel: torch's libraries do not depend on the Python version, only `_C`'s file name does), the
wheel is downloaded with `pip download --no-deps` from https://pypi.org/simple (pip's own config
and constraints ignored, so nothing local stands in for it), read by
`wheeldoc.abi.index_build.extract` into RAW_DIR/torch-<version>-<arch>.json.gz, and deleted
(moved to --keep instead, if given). Existing raw entries are kept, so an interrupted run goes on
where it stopped. Then scripts/torch_index/pack.py packs RAW_DIR into wheeldoc/data/torch_index/.

A build from elsewhere (a `+cu130` wheel of the PyTorch index, a vendor build) is added the same
way with scripts/torch_index/extract.py WHEEL RAW_DIR/torch-<version>+<local>-<arch>.json.gz.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from packaging.version import Version

PLATFORMS = {
    "x86_64": ["manylinux1_x86_64", "manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64"],
    "aarch64": ["manylinux2014_aarch64", "manylinux_2_17_aarch64", "manylinux_2_28_aarch64"],
}
PIP = [sys.executable, "-m", "pip", "--isolated", "--cert", "/etc/ssl/certs/ca-certificates.crt"]


def platform_args(arch: str) -> list[str]:
    return [a for p in PLATFORMS[arch] for a in ("--platform", p)]


def releases(arch: str, first: Version) -> list[str]:
    out = subprocess.run([*PIP, "index", "versions", "torch", "--index-url", "https://pypi.org/simple",
                          "--only-binary=:all:", "--python-version", "3.11", *platform_args(arch)],
                         capture_output=True, text=True, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("Available versions:"))
    found = [v.strip() for v in line.split(":", 1)[1].split(",")]
    return sorted((v for v in found if "+" not in v and Version(v) >= first), key=Version)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("raw_dir", type=Path)
    ap.add_argument("--from", dest="first", default="2.0.0")
    ap.add_argument("--keep", type=Path, default=None)
    args = ap.parse_args()
    args.raw_dir.mkdir(parents=True, exist_ok=True)
    from wheeldoc.abi.index_build import main as extract

    for arch in PLATFORMS:
        for version in releases(arch, Version(args.first)):
            out = args.raw_dir / f"torch-{version}-{arch}.json.gz"
            if out.exists():
                continue
            with tempfile.TemporaryDirectory(dir=args.keep) as tmp:
                subprocess.run([*PIP, "download", "-q", "--no-deps", "--only-binary=:all:", "--python-version", "3.11",
                                *platform_args(arch), "--index-url", "https://pypi.org/simple", f"torch=={version}",
                                "-d", tmp], check=True)
                wheel = next(Path(tmp).glob("torch-*.whl"))
                extract([str(wheel), str(out)])
                if args.keep is not None:
                    wheel.replace(args.keep / wheel.name)
    pack = Path(__file__).with_name("pack.py")
    return subprocess.run([sys.executable, str(pack), str(args.raw_dir)]).returncode


if __name__ == "__main__":
    sys.exit(main())
