"""Rebuild the shipped torch index from every torch wheel on the package index.

    uv run python scripts/torch_index/build_all.py RAW_DIR [--from 2.0.0] [--keep DIR]

For each release from --from to the newest, and for linux x86_64 and aarch64 (the CPython 3.11
wheel: torch's libraries do not depend on the Python version, only `_C`'s file name does), the
wheel named on https://pypi.org/simple/torch/ is downloaded and checked against the sha256 the
page gives (pip is not used: pip 23 cannot pick torch 2.15's wheel with --no-deps), read by
`wheeldoc.abi.index_build.extract` into RAW_DIR/torch-<version>-<arch>.json.gz, and deleted
(moved to --keep instead, if given). Existing raw entries are kept, so an interrupted run goes on
where it stopped. Then scripts/torch_index/pack.py packs RAW_DIR into wheeldoc/data/torch_index/.

A build from elsewhere (a `+cu130` wheel of the PyTorch index, a vendor build) is added the same
way with scripts/torch_index/extract.py WHEEL RAW_DIR/torch-<version>+<local>-<arch>.json.gz.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

from packaging.version import Version

SIMPLE = "https://pypi.org/simple/torch/"
# manylinux tags, newest first: the wheel with the highest one a release offers is taken
TAGS = {"x86_64": ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64.manylinux2014_x86_64", "manylinux2014_x86_64",
                   "manylinux1_x86_64"),
        "aarch64": ("manylinux_2_28_aarch64", "manylinux_2_17_aarch64.manylinux2014_aarch64", "manylinux2014_aarch64")}
LINK = re.compile(r'href="([^"#]+/(torch-([^-"#/]+)(?:-(\d+)[^-"#/]*)?-cp311-cp311-([^"#/]+)\.whl))#sha256=([0-9a-f]{64})')


def wheels(first: Version) -> dict[tuple[str, str], tuple[str, str, str]]:
    """(release, arch) -> (url, file name, sha256) of the CPython 3.11 wheel pip would take: the newest
    manylinux tag, then the highest build number (torch 2.10.0 was published again as build 3)."""
    req = urllib.request.Request(SIMPLE, headers={"Accept": "text/html"})
    html = urllib.request.urlopen(req, timeout=120).read().decode("utf-8", "replace")
    out: dict[tuple[str, str], tuple[tuple[int, int], tuple[str, str, str]]] = {}
    for url, name, version, build, platform, sha in LINK.findall(html):
        if "+" in version or Version(version) < first:
            continue
        for arch, tags in TAGS.items():
            if platform in tags:
                rank = (tags.index(platform), -int(build or 0))
                if (version, arch) not in out or rank < out[(version, arch)][0]:
                    out[(version, arch)] = (rank, (url, name, sha))
    return {k: v for k, (_, v) in out.items()}


def download(url: str, name: str, sha: str, folder: Path) -> Path:
    h = hashlib.sha256()
    part = folder / (name + ".part")
    with urllib.request.urlopen(url, timeout=600) as src, open(part, "wb") as dst:
        while block := src.read(1 << 20):
            h.update(block)
            dst.write(block)
    if h.hexdigest() != sha:
        raise SystemExit(f"{name}: sha256 {h.hexdigest()} differs from the index's {sha}")
    return part.rename(folder / name)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("raw_dir", type=Path)
    ap.add_argument("--from", dest="first", default="2.0.0")
    ap.add_argument("--keep", type=Path, default=None)
    args = ap.parse_args()
    args.raw_dir.mkdir(parents=True, exist_ok=True)
    from wheeldoc.abi.index_build import main as extract

    for (version, arch), (url, name, sha) in sorted(wheels(Version(args.first)).items(),
                                                     key=lambda kv: (kv[0][1], Version(kv[0][0]))):
        out = args.raw_dir / f"torch-{version}-{arch}.json.gz"
        if out.exists():
            continue
        with tempfile.TemporaryDirectory(dir=args.keep) as tmp:
            wheel = download(url, name, sha, Path(tmp))
            extract([str(wheel), str(out)])
            if args.keep is not None:
                wheel.replace(args.keep / wheel.name)
    pack = Path(__file__).with_name("pack.py")
    return subprocess.run([sys.executable, str(pack), str(args.raw_dir)]).returncode


if __name__ == "__main__":
    sys.exit(main())
