#!/usr/bin/env python3
"""Rebuild the release facts of wheeldoc/data/torch.json from the package index.

    python scripts/make_torch_table.py [--index https://pypi.org] [--out wheeldoc/data/torch.json]

Every fact comes from a wheel published on the index, read through its METADATA (the zip's
central directory and one member, fetched with HTTP range requests; nothing is installed or
unpacked), and each row names the wheel and its sha256:

- per torch series X.Y (its first release X.Y.0): the triton series torch pins, and which CUDA
  major the CUDA packages it requires belong to, per platform (Linux x86_64 and aarch64), read
  from its Requires-Dist markers;
- per torchvision / torchaudio release series: the torch series its Requires-Dist asks for
  (`torch==2.9.0`, or the lower bound of `torch>=2.11`).

A torch series that no published companion release pins gets `null` for that companion: wheeldoc
then judges nothing about it. The CUDA variants published on the PyTorch index
(`"cuda": ["cu128", "cu130"]`) cannot be read from here (only the package index is reachable);
they are kept from the previous table with their provenance stated, and are only used to choose
the variant a fix pins, never to judge.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import struct
import sys
import urllib.parse
import urllib.request
import zlib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "wheeldoc" / "data" / "torch.json"
PLATFORMS = {"linux-x86_64": ("Linux", "x86_64", "linux"), "linux-aarch64": ("Linux", "aarch64", "linux")}


def http(url: str, rng: str | None = None) -> bytes:
    req = urllib.request.Request(url, headers={"User-Agent": "wheeldoc-make-torch-table"})
    if rng:
        req.add_header("Range", rng)
    with urllib.request.urlopen(req, timeout=120) as r:
        return r.read()


def project(index: str, name: str) -> dict:
    url = f"{index}/pypi/{name}/json"
    data = json.loads(http(url))
    for files in data["releases"].values():
        for f in files:
            f["url"] = urllib.parse.urljoin(url, f["url"])
    return data


def wheel_metadata(url: str, size: int) -> str:
    """The METADATA text of a remote wheel: read the end of the file (EOCD and central
    directory), then the one member."""
    tail = http(url, f"bytes={max(0, size - 262144)}-")
    base = size - len(tail)
    eocd = tail.rfind(b"PK\x05\x06")
    if eocd < 0:
        raise ValueError(f"{url}: no end of central directory in the last 256 KiB")
    cd_size, cd_off = struct.unpack("<II", tail[eocd + 12: eocd + 20])
    if cd_off == 0xFFFFFFFF:  # zip64
        loc = tail.rfind(b"PK\x06\x07")
        (z64,) = struct.unpack("<Q", tail[loc + 8: loc + 16])
        rec = tail[z64 - base:]
        cd_size, cd_off = struct.unpack("<QQ", rec[40:56])
    cd = tail[cd_off - base: cd_off - base + cd_size] if cd_off >= base else http(
        url, f"bytes={cd_off}-{cd_off + cd_size - 1}")
    pos = 0
    while pos < len(cd):
        (sig, _, _, _, method, _, _, _, csize, usize, nlen, elen, clen, _, _, _, off) = struct.unpack(
            "<IHHHHHHIIIHHHHHII", cd[pos: pos + 46])
        name = cd[pos + 46: pos + 46 + nlen].decode()
        extra = cd[pos + 46 + nlen: pos + 46 + nlen + elen]
        pos += 46 + nlen + elen + clen
        if not re.fullmatch(r"[^/]+\.dist-info/METADATA", name):
            continue
        if off == 0xFFFFFFFF or csize == 0xFFFFFFFF:
            vals, i = [], 0
            while i + 4 <= len(extra):
                hid, hlen = struct.unpack("<HH", extra[i: i + 4])
                if hid == 1:
                    vals = list(struct.unpack(f"<{hlen // 8}Q", extra[i + 4: i + 4 + hlen]))
                i += 4 + hlen
            if usize == 0xFFFFFFFF:
                vals.pop(0)
            if csize == 0xFFFFFFFF:
                csize = vals.pop(0)
            if off == 0xFFFFFFFF:
                off = vals.pop(0)
        head = http(url, f"bytes={off}-{off + 30 + 1024 + csize}")
        nl, el = struct.unpack("<HH", head[26:30])
        data = head[30 + nl + el: 30 + nl + el + csize]
        return (zlib.decompress(data, -15) if method == 8 else data).decode("utf-8")
    raise ValueError(f"{url}: no .dist-info/METADATA member")


def requires_dist(meta: str) -> list[str]:
    return [line.split(":", 1)[1].strip() for line in meta.splitlines() if line.startswith("Requires-Dist:")]


def vkey(v: str) -> tuple:
    return tuple(int(x) if x.isdigit() else -1 for x in re.split(r"[.+]", v))


def series(v: str) -> str:
    a, b = v.split(".")[:2]
    minor = int(re.match(r"\d+", b)[0])
    return f"{a}.{minor}"


def pick_wheel(files: list[dict], machine: str) -> dict | None:
    whl = [f for f in files if re.search(rf"linux\w*_{machine}\.whl$", f["filename"])
           and not f.get("yanked")]
    whl.sort(key=lambda f: ("cp312" not in f["filename"], "cp311" not in f["filename"], f["filename"]))
    return whl[0] if whl else None


def cuda_major_of(reqs: list[str], platform: str) -> tuple[int | None, list[str]]:
    from packaging.markers import default_environment
    from packaging.requirements import Requirement

    system, machine, sysplat = PLATFORMS[platform]
    env = dict(default_environment(), platform_system=system, platform_machine=machine, sys_platform=sysplat,
               python_version="3.12", python_full_version="3.12.8", extra="")
    majors, names = set(), []
    for line in reqs:
        r = Requirement(line)
        if r.marker and not r.marker.evaluate(env):
            continue
        m = re.search(r"-cu(\d\d)$", r.name)
        if m:
            majors.add(int(m[1]))
            names.append(str(r).split(";")[0])
        elif r.name == "cuda-toolkit":
            pin = re.search(r"==\s*(\d+)", str(r.specifier))
            if pin:
                majors.add(int(pin[1]))
            names.append(str(r).split(";")[0])
    return (majors.pop() if len(majors) == 1 else None), names


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", default="https://pypi.org")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--since", default="2.0", help="first torch series to include")
    args = ap.parse_args()

    old = json.loads(OUT.read_text())
    torch = project(args.index, "torch")
    rows: dict[str, dict] = {}
    firsts: dict[str, str] = {}
    for v, files in torch["releases"].items():
        if not files or not re.fullmatch(r"\d+\.\d+\.\d+", v) or vkey(v) < vkey(args.since + ".0"):
            continue
        s = series(v)
        if s not in firsts or vkey(v) < vkey(firsts[s]):
            firsts[s] = v
    for s, v in sorted(firsts.items(), key=lambda kv: vkey(kv[0])):
        files = torch["releases"][v]
        row: dict = {"release_read": v, "torchvision": None, "torchaudio": None, "triton": None,
                     "pypi_cuda": {}, "sources": {}}
        for platform in PLATFORMS:
            w = pick_wheel(files, PLATFORMS[platform][1])
            if w is None:
                row["pypi_cuda"][platform] = None
                continue
            reqs = requires_dist(wheel_metadata(w["url"], w["size"]))
            major, names = cuda_major_of(reqs, platform)
            row["pypi_cuda"][platform] = major
            row["sources"][f"torch {platform}"] = f"{w['filename']} sha256:{w['digests']['sha256']}"
            for line in reqs:
                m = re.match(r"(?:pytorch-)?triton\s*(?:\[[^]]*\])?\s*\(?\s*(?:==|~=)\s*(\d+\.\d+)", line)
                if m and row["triton"] is None:
                    row["triton"] = m[1]
            print(f"torch {v} {platform}: CUDA {major} ({', '.join(names[:3])}), triton {row['triton']}",
                  file=sys.stderr)
        prev = old["series"].get(s, {})
        row["cuda"] = prev.get("cuda", [])
        rows[s] = row

    for comp in ("torchvision", "torchaudio"):
        data = project(args.index, comp)
        by_series: dict[str, list[str]] = {}
        for v, files in data["releases"].items():
            if files and re.fullmatch(r"\d+\.\d+\.\d+", v):
                by_series.setdefault(series(v), []).append(v)
        for cs, versions in sorted(by_series.items(), key=lambda kv: vkey(kv[0])):
            # the first release of the series whose x86_64 wheel states a torch requirement
            found = None
            for v in sorted(versions, key=vkey):
                w = pick_wheel(data["releases"][v], "x86_64")
                if w is None:
                    continue
                reqs = requires_dist(wheel_metadata(w["url"], w["size"]))
                req = next((r for r in reqs if re.match(r"torch\b(?!\w|-)", r)), None)
                pin = re.search(r"(?:==|>=)\s*(\d+\.\d+)", req or "")
                if pin:
                    found = (v, w, req, pin)
                    break
                print(f"{comp} {v}: no torch requirement in {w['filename']}", file=sys.stderr)
            if found is None:
                continue
            v, w, req, pin = found
            ts = series(pin[1])
            if ts in rows:
                rows[ts][comp] = cs
                rows[ts]["sources"][comp] = f"{w['filename']} sha256:{w['digests']['sha256']} requires {req}"
            print(f"{comp} {v}: torch {ts}", file=sys.stderr)

    out = dict(old)
    out["_comment"] = ("torch release series -> the companion series whose published wheels require it, the triton "
                       "series and the CUDA major of the CUDA packages its PyPI wheels require per platform (null: "
                       "none). Rebuilt by scripts/make_torch_table.py from the wheels' METADATA on the package index; "
                       "'sources' names each wheel read. 'cuda' (variants on the PyTorch index) is not read from an "
                       "index here: kept from the PyTorch release matrix, used only to choose a fix's pin.")
    out["series"] = rows
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
