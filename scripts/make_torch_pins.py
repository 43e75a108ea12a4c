"""Rebuild wheeldoc/data/torch_pins.json: which torch each release of the packages that pin
torch requires, read from the packages' own metadata on PyPI (the wheel's METADATA
`Requires-Dist`, fetched through pip's metadata-only path: `pip install --dry-run --report`,
PEP 658), never from their names or release notes.

    uv run python scripts/make_torch_pins.py            # every release of each package
    uv run python scripts/make_torch_pins.py --jobs 8

The Dockerfile rules (WD403) use it to say whether `pip install vllm==0.9.1` admits the torch an
image already has (vllm 0.9.1: torch==2.7.0), and which packages pin an exact torch in every
release listed (`exact_in_every_release`).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "wheeldoc" / "data" / "torch_pins.json"
INDEX = "https://pypi.org/simple"
PACKAGES = {  # package -> extras whose requirements count (sglang's torch pin is in `srt`)
    "vllm": (),
    "sglang": ("srt",),
    "xformers": (),
}
SINCE = {"vllm": "0.2.0", "sglang": "0.3.0", "xformers": "0.0.20"}  # older releases predate these images
PLATFORM = ("--platform", "manylinux_2_28_x86_64", "--platform", "manylinux2014_x86_64",
            "--platform", "manylinux1_x86_64", "--platform", "any")


def versions(pkg: str) -> list[str]:
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", pkg, "--index-url", INDEX],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"Available versions: (.*)", out)
    from packaging.version import Version

    vs = [v.strip() for v in m[1].split(",")] if m else []
    return [v for v in vs if Version(v) >= Version(SINCE.get(pkg, "0"))]


def metadata(pkg: str, version: str) -> dict | None:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "r.json"
        for py in ("3.12", "3.10", "3.9"):
            r = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps",
                                "--quiet", "--report", str(report), "--index-url", INDEX, "--only-binary=:all:",
                                *PLATFORM, "--python-version", py, "--target", str(Path(tmp) / "t"),
                                f"{pkg}=={version}"], capture_output=True, text=True)
            if r.returncode == 0 and report.exists():
                got = json.loads(report.read_text())["install"][0]
                return {"metadata": got["metadata"], "url": got["download_info"]["url"]}
    return None


def torch_requirements(meta: dict, extras: tuple[str, ...]) -> list[str]:
    from packaging.requirements import Requirement

    out = []
    for line in meta.get("requires_dist") or []:
        req = Requirement(line)
        if req.name.lower() != "torch":
            continue
        marker = str(req.marker) if req.marker else ""
        extra = re.findall(r'extra == "([^"]+)"', marker)
        if extra and not set(extra) & set(extras):
            continue
        out.append(str(req.specifier))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--packages", nargs="*", default=list(PACKAGES), help="rebuild only these (others kept)")
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args()
    table: dict = {"schema": 1,
                   "_comment": "torch requirement of each release, from the wheel METADATA on PyPI (x86-64 "
                               "manylinux wheel); rebuilt by scripts/make_torch_pins.py",
                   "source": f"{INDEX} metadata (PEP 658) via pip --dry-run --report", "packages": {}}
    if a.out.exists():
        table["packages"].update(json.loads(a.out.read_text()).get("packages", {}))
    for pkg in a.packages:
        extras = PACKAGES[pkg]
        vs = versions(pkg)
        with ThreadPoolExecutor(a.jobs) as ex:
            metas = list(ex.map(lambda v: (v, metadata(pkg, v)), vs))
        releases = {}
        for v, m in metas:
            if m is None:
                continue
            releases[v] = {"torch": torch_requirements(m["metadata"], extras), "wheel": m["url"].rsplit("/", 1)[-1]}
        exact = bool(releases) and all(any(s.startswith("==") for s in r["torch"]) for r in releases.values())
        table["packages"][pkg] = {"extras": list(extras), "exact_in_every_release": exact, "releases": releases}
        print(f"{pkg}: {len(releases)} releases, exact torch pin in every one: {exact}", file=sys.stderr, flush=True)
        a.out.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    a.out.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
