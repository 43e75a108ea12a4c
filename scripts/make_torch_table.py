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
(`"cuda": ["cu126", "cu130", "cu132"]`) cannot be read from here (only the package index is
reachable): they are PyTorch's release compatibility matrix (MATRIX below, stable and experimental
CUDA, each row quoted as its source); a fix's pin is chosen from them, and the Dockerfile rules take
from them which series a per-CUDA index serves. `--matrix-only` sets them alone, without network.
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


# The CUDA variants the PyTorch index publishes per torch series (stable and experimental), from
# pytorch/pytorch RELEASE.md's "Release Compatibility Matrix" as copied in a public translation of that
# file (search-index file id 66643764700; the upstream copy stored here predates 2.4). Each row is the
# matrix line as written; `variants` turns "CUDA 12.6", "CUDA 13.0" into cu126, cu130. Checked against real
# locks: held-out 8's dataeval-flow uv.lock holds torch 2.13.0+cu126 from download.pytorch.org/whl/cu126.
MATRIX_SOURCE = ("pytorch/pytorch RELEASE.md, Release Compatibility Matrix (Stable CUDA | Experimental CUDA), as "
                 "copied in a public translation of that file (search-index file id 66643764700)")
MATRIX = {
    "2.14": "| 2.14 | >=3.10, <=(3.15, 3.15t experimental) | C++20 | CUDA 12.6 (CUDNN 9.10.2.21) (NCCL 2.29.3), CUDA "
            "13.0 (CUDNN 9.24.0.43) (NCCL 2.30.7), CUDA 13.2 (CUDNN 9.24.0.43) (NCCL 2.30.7) | -- | ROCm 7.14 |",
    "2.13": "| 2.13 | >=3.10, <=(3.15, 3.15t experimental) | C++20 | CUDA 12.6 (CUDNN 9.10.2.21) (NCCL 2.29.3), CUDA "
            "13.0 (CUDNN 9.20.0.48) (NCCL 2.29.7) | CUDA 13.2 (CUDNN 9.20.0.48) (NCCL 2.29.7) | ROCm 7.2 |",
    "2.12": "| 2.12 | >=3.10, <=(3.14, 3.14t experimental) | C++17 | CUDA 12.6 (CUDNN 9.10.2.21) (NCCL 2.29.3), CUDA "
            "13.0 (CUDNN 9.20.0.48) (NCCL 2.29.7) | CUDA 13.2 (CUDNN 9.20.0.48) (NCCL 2.29.7) | ROCm 7.2 |",
    "2.11": "| 2.11 | >=3.10, <=(3.14, 3.14t experimental) | C++17 | CUDA 12.6 (CUDNN 9.10.2.21) (NCCL 2.28.9), CUDA "
            "12.8 (CUDNN 9.17.1.4) (NCCL 2.28.9), CUDA 13.0 (CUDNN 9.17.1.4) (NCCL 2.28.9) | -- | ROCm 7.2 |",
    "2.10": "| 2.10 | >=3.10, <=(3.14, 3.14t experimental) | C++17 | CUDA 12.6 (CUDNN 9.10.2.21) (NCCL 2.27.5), CUDA "
            "12.8 (CUDNN 9.10.2.21) (NCCL 2.27.5) | CUDA 13.0 (CUDNN 9.15.1.9) (NCCL 2.28.9) | ROCm 7.1 |",
    "2.9": "| 2.9 | >=3.10, <=(3.14, 3.14t experimental) | C++17 | CUDA 12.6 (CUDNN 9.10.2.21), CUDA 12.8 (CUDNN "
           "9.10.2.21) | CUDA 13.0 (CUDNN 9.13.0.50) | ROCm 6.4 |",
    "2.8": "| 2.8 | >=3.9, <=3.13, (3.13t experimental) | C++17 | CUDA 12.6 (CUDNN 9.10.2.21), CUDA 12.8 (CUDNN "
           "9.10.2.21) | CUDA 12.9 (CUDNN 9.10.2.21) | ROCm 6.4 |",
    "2.7": "| 2.7 | >=3.9, <=3.13, (3.13t experimental) | C++17 | CUDA 11.8 (CUDNN 9.1.0.70), CUDA 12.6 (CUDNN "
           "9.5.1.17) | CUDA 12.8 (CUDNN 9.7.1.26) | ROCm 6.3 |",
    "2.6": "| 2.6 | >=3.9, <=3.13, (3.13t experimental) | C++17 | CUDA 11.8, CUDA 12.4 (CUDNN 9.1.0.70) | CUDA 12.6 "
           "(CUDNN 9.5.1.17) | ROCm 6.2.4 |",
    "2.5": "| 2.5 | >=3.9, <=3.12, (3.13 experimental) | C++17 | CUDA 11.8, CUDA 12.1, CUDA 12.4, CUDNN 9.1.0.70  | "
           "None | ROCm 6.2 |",
    "2.4": "| 2.4 | >=3.8, <=3.12 | C++17 | CUDA 11.8, CUDA 12.1, CUDNN 9.1.0.70  | CUDA 12.4, CUDNN 9.1.0.70 | "
           "ROCm 6.1 |",
    "2.3": "| 2.3 | >=3.8, <=3.11, (3.12 experimental) | C++17 | CUDA 11.8, CUDNN 8.7.0.84 | CUDA 12.1, CUDNN "
           "8.9.2.26 | ROCm 6.0 |",
    "2.2": "| 2.2 | >=3.8, <=3.11, (3.12 experimental) | C++17 | CUDA 11.8, CUDNN 8.7.0.84 | CUDA 12.1, CUDNN "
           "8.9.2.26 | ROCm 5.7 |",
    "2.1": "| 2.1 | >=3.8, <=3.11 | C++17 | CUDA 11.8, CUDNN 8.7.0.84 | CUDA 12.1, CUDNN 8.9.2.26 | ROCm 5.6 |",
    "2.0": "| 2.0 | >=3.8, <=3.11 | C++14 | CUDA 11.7, CUDNN 8.5.0.96 | CUDA 11.8, CUDNN 8.7.0.84 | ROCm 5.4 |",
}


COMMENT = ("torch release series -> the companion series whose published wheels require it, the triton "
                       "series and the CUDA major of the CUDA packages its PyPI wheels require per platform (null: "
                       "none). Rebuilt by scripts/make_torch_table.py from the wheels' METADATA on the package index; "
                       "'sources' names each wheel read. 'cuda' (the variants the PyTorch index publishes) is not read "
                       "from an index here: it is PyTorch's release compatibility matrix (stable and experimental "
                       "CUDA), its row quoted in sources['cuda'].")


def variants(row: str) -> list[str]:
    """cuNNN for every CUDA version in the Stable and Experimental CUDA cells of a matrix row."""
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    cuda = " ".join(cells[3:5])  # Stable CUDA, Experimental CUDA
    return sorted({f"cu{m[1]}{m[2]}" for m in re.finditer(r"CUDA (\d+)\.(\d+)", cuda)},
                  key=lambda v: int(v[2:]))


def experimental(row: str) -> list[str]:
    """cuNNN for the CUDA versions of the Experimental CUDA cell alone."""
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    return sorted({f"cu{m[1]}{m[2]}" for m in re.finditer(r"CUDA (\d+)\.(\d+)", cells[4])}, key=lambda v: int(v[2:]))


def apply_matrix(rows: dict) -> None:
    """Each series the matrix lists gets its variants (and which are experimental), the matrix row as their source."""
    for s, line in MATRIX.items():
        assert line.startswith(f"| {s} |"), s
        if s in rows:
            rows[s]["cuda"] = variants(line)
            rows[s]["cuda_experimental"] = experimental(line)
            rows[s].setdefault("sources", {})["cuda"] = f"{MATRIX_SOURCE}: '{line}'"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", default="https://pypi.org")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--since", default="2.0", help="first torch series to include")
    ap.add_argument("--matrix-only", action="store_true",
                    help="only set each series' CUDA variants from MATRIX (no network)")
    args = ap.parse_args()

    old = json.loads(OUT.read_text())
    if args.matrix_only:
        apply_matrix(old["series"])
        old["_comment"] = COMMENT
        args.out.write_text(json.dumps(old, indent=1) + "\n")
        return 0
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
        if "cuda" in prev.get("sources", {}):
            row["sources"]["cuda"] = prev["sources"]["cuda"]
        rows[s] = row
    apply_matrix(rows)

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
    out["_comment"] = COMMENT
    out["series"] = rows
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
