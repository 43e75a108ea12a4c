"""Rebuild wheeldoc/data/torch_pins.json: which torch each release of the packages that pin
torch requires, read from the packages' own metadata on PyPI (the wheel's METADATA
`Requires-Dist`, fetched through pip's metadata-only path: `pip install --dry-run --report`,
PEP 658), never from their names or release notes. torchvision and torchaudio (many releases)
are read straight from the simple index (PEP 691 JSON) and each release's PEP 658 `.metadata`
file of its linux x86-64 wheel when the index serves one, else the wheel's `*.dist-info/METADATA`
member read with HTTP range requests (the zip directory at the end, then that one member): a few
kB each, no wheel downloaded.

    uv run python scripts/make_torch_pins.py            # every release of each package
    uv run python scripts/make_torch_pins.py --jobs 8
    uv run python scripts/make_torch_pins.py --packages torchvision torchaudio

The Dockerfile rules (WD403) use it to say whether `pip install vllm==0.9.1` admits the torch an
image already has (vllm 0.9.1: torch==2.7.0), and which packages pin an exact torch in every
release listed (`exact_in_every_release`).
"""

from __future__ import annotations

import argparse
import io
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
    "torchvision": (),
    "torchaudio": (),
}
SINCE = {"vllm": "0.2.0", "sglang": "0.3.0", "xformers": "0.0.20",  # older releases predate these images
         "torchvision": "0.8.0", "torchaudio": "0.7.0"}  # torch 1.7 (2020) on
VIA_SIMPLE = frozenset({"torchvision", "torchaudio"})  # read through PEP 658 .metadata files


class _RangeFile(io.RawIOBase):
    """A remote file read with HTTP range requests, enough for zipfile to read one member."""

    def __init__(self, url: str) -> None:
        import urllib.request

        self.url, self.pos = url, 0
        req = urllib.request.Request(url, method="HEAD")
        with urllib.request.urlopen(req, timeout=60) as r:
            self.size = int(r.headers["Content-Length"])

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, off: int, whence: int = 0) -> int:
        self.pos = off if whence == 0 else self.pos + off if whence == 1 else self.size + off
        return self.pos

    def read(self, n: int = -1) -> bytes:
        import urllib.request

        end = self.size if n is None or n < 0 else min(self.size, self.pos + n)
        if end <= self.pos:
            return b""
        req = urllib.request.Request(self.url, headers={"Range": f"bytes={self.pos}-{end - 1}"})
        with urllib.request.urlopen(req, timeout=60) as r:
            data = r.read()
        self.pos += len(data)
        return data


def range_metadata(url: str) -> str:
    """The METADATA member of a remote wheel, read through range requests."""
    import zipfile

    with zipfile.ZipFile(_RangeFile(url)) as z:
        name = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        return z.read(name).decode("utf-8", "replace")


def simple_metadata(pkg: str, jobs: int) -> dict[str, dict]:
    """version -> {"metadata": {"requires_dist": [...]}, "url": wheel URL}, one linux x86-64
    wheel per release (the newest CPython tag), from the PEP 691 JSON page and PEP 658 files."""
    import urllib.request
    from email.parser import Parser

    from packaging.utils import parse_wheel_filename
    from packaging.version import Version

    req = urllib.request.Request(f"{INDEX}/{pkg}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        page = json.load(r)
    best: dict[str, tuple[tuple, dict]] = {}
    for f in page.get("files", []):
        name = f["filename"]
        if not name.endswith(".whl"):
            continue
        if "x86_64" not in name or "linux" not in name or f.get("yanked"):
            continue
        _, ver, _, tags = parse_wheel_filename(name)
        if ver.is_prerelease or ver.local or ver < Version(SINCE.get(pkg, "0")):
            continue
        py = max((int(t.interpreter[2:]) for t in tags if t.interpreter.startswith("cp") and t.interpreter[2:].isdigit()),
                 default=0)
        key = (py, name)
        if str(ver) not in best or key > best[str(ver)][0]:
            best[str(ver)] = (key, f)

    def one(item):
        ver, (_, f) = item
        text = None
        if f.get("core-metadata") or f.get("dist-info-metadata"):
            with urllib.request.urlopen(f["url"] + ".metadata", timeout=60) as r:
                text = r.read().decode("utf-8", "replace")
        else:
            text = range_metadata(f["url"])
        msg = Parser().parsestr(text)
        return ver, {"metadata": {"requires_dist": msg.get_all("Requires-Dist") or []}, "url": f["url"]}

    with ThreadPoolExecutor(jobs) as ex:
        return dict(ex.map(one, sorted(best.items())))
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
                   "source": f"{INDEX} metadata (PEP 658) via pip --dry-run --report; torchvision, torchaudio: "
                             f"the PEP 658 .metadata file of each release's linux x86-64 wheel, listed by the "
                             f"PEP 691 JSON page", "packages": {}}
    if a.out.exists():
        table["packages"].update(json.loads(a.out.read_text()).get("packages", {}))
    for pkg in a.packages:
        extras = PACKAGES[pkg]
        if pkg in VIA_SIMPLE:
            metas = list(simple_metadata(pkg, a.jobs).items())
        else:
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
