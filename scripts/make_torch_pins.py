"""Rebuild wheeldoc/data/torch_pins.json (and its provenance, torch_pins_sources.json): which torch
each release of the common torch-dependent packages requires, and which Python it supports, read
from the packages' own metadata on PyPI, never from their names or release notes.

For each package the PEP 691 JSON page of the simple index lists every file with its sha256,
`requires-python` and upload time. Per final, non-yanked release uploaded since torch 1.7 (2020-10),
one wheel is read (a pure-Python wheel, else the linux x86-64 wheel with the newest CPython tag):
its PEP 658 `.metadata` file when the index serves one, else the wheel's `*.dist-info/METADATA`
member through HTTP range requests (the zip directory at the end, then that one member): a few kB,
no wheel downloaded. A release with no wheel (sdist only: deepspeed) is listed with its
Requires-Python and an unknown torch requirement (`"torch": null`): what its setup.py asks is not
read (that would mean running it).

Per release the table keeps only what WD403 needs:
  "python": its Requires-Python ("" when none),
  "torch":  its `Requires-Dist: torch…` lines as "specifier" or "specifier;@N" where N encodes the
            marker, evaluated here for linux on each machine x Python of `marker_axes` (bit set where
            it holds; extras that do not count dropped; [] when the release does not require torch;
            null: not known),
  "deps":   requirements on other packages of the table (lightning -> pytorch-lightning), same form.
`torch_pins_sources.json` holds each row's provenance (wheel file name and sha256). The table also
records the CPython versions of each torch release's linux wheels (`torch_pythons`), so an image
holding a PyPI torch has a known set of possible Pythons, and when each torch series first reached PyPI (`torch_series`: X.Y -> upload date of its
earliest X.Y.0 file, with file name and sha256), so a pre-release torch in a dated image (NGC
YY.MM) can be bounded.

    uv run python scripts/make_torch_pins.py                      # every package
    uv run python scripts/make_torch_pins.py --packages lightning pytorch-lightning --jobs 16
    uv run python scripts/make_torch_pins.py --jobs 16 --cache /work/cache/pypi-meta   # METADATA kept by sha256
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from wheeldoc.data.pin_rows import MARKER_MACHINES, MARKER_PYTHONS, encode_marker, release_files, split

DATA = Path(__file__).resolve().parents[1] / "wheeldoc" / "data"
OUT, SOURCES = DATA / "torch_pins.json.gz", DATA / "torch_pins_sources.json.gz"
CANDIDATES = Path(__file__).resolve().parent / "torch_pins_candidates.txt"
INDEX = "https://pypi.org/simple"
CACHE: Path | None = None  # --cache: METADATA files kept by the wheel's sha256 (outside the repository)
SINCE = "2020-10-01"  # torch 1.7 (2020-10-27) on: older releases predate the images judged
PACKAGES = {  # package -> extras whose requirements count (sglang's torch pin is in `srt`)
    "vllm": (), "sglang": ("srt",), "xformers": (), "torchvision": (), "torchaudio": (),
    "sentence-transformers": (), "lightning": (), "pytorch-lightning": (), "accelerate": (), "peft": (),
    "timm": (), "bitsandbytes": (), "deepspeed": (), "torchmetrics": (), "ultralytics": (), "diffusers": (),
    "open-clip-torch": (), "einops": (), "kornia": (), "torch-geometric": (), "transformers": (),
}
CORE = frozenset(PACKAGES)  # kept even when no release requires torch (einops, transformers: that is a fact too)


def candidates() -> list[str]:
    """The ecosystem's torch dependents beyond the core list: scripts/torch_pins_candidates.txt (its
    header says how it was chosen)."""
    from packaging.utils import canonicalize_name

    out = []
    for line in CANDIDATES.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            out.append(str(canonicalize_name(line.split("\t")[-1].strip())))
    return out


for _c in candidates():
    PACKAGES.setdefault(_c, ())


def write_gz(path: Path, data: dict) -> None:
    """Deterministic gzip (no name, no time) of compact JSON."""
    import gzip

    raw = (json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n").encode()
    path.write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))


def read_gz(path: Path) -> dict:
    import gzip

    return json.loads(gzip.decompress(path.read_bytes()))


def write_table(data: dict) -> None:
    """torch_pins.json.gz, schema 4: each package's body is stored as its own compact JSON text (a
    string), so wheeldoc decodes only the packages a Dockerfile names (wheeldoc/data/base_images.py)."""
    out = dict(data, schema=4)
    out["packages"] = {k: json.dumps(v, sort_keys=True, separators=(",", ":")) for k, v in data["packages"].items()}
    write_gz(OUT, out)


def read_table() -> dict:
    """torch_pins.json.gz with every package's body decoded (schema 3 stored them as objects)."""
    data = read_gz(OUT)
    data["packages"] = {k: json.loads(v) if isinstance(v, str) else v for k, v in data["packages"].items()}
    return data


def group(releases: dict[str, dict]) -> list:
    """[[row, "v1 v2 …"], …]: the releases that share one row (Requires-Python, torch, deps) stored once."""
    by: dict[str, list[str]] = {}
    rows: dict[str, dict] = {}
    for ver, row in releases.items():
        key = json.dumps(row, sort_keys=True)
        rows[key] = row
        by.setdefault(key, []).append(ver)
    return [[rows[k], " ".join(vs)] for k, vs in sorted(by.items(), key=lambda kv: kv[1][0])]


def ungroup(rows: list) -> dict[str, dict]:
    return {v: row for row, vs in rows for v in vs.split()}


_LOCAL = threading.local()
_TLS = None


def http_get(url: str, headers: dict | None = None) -> bytes | None:
    """GET: the body (200, or 206 for a range), None on 404/410; retried on other answers and on
    network errors (a name-resolution hiccup). One kept-alive HTTPS connection per thread and host,
    one TLS context for all: a handshake, a DNS lookup and a CA-store load per request cost more
    than the request."""
    import http.client
    import ssl
    import time
    from urllib.parse import urljoin, urlsplit

    global _TLS
    if _TLS is None:
        _TLS = ssl.create_default_context()
    u = urlsplit(url)
    conns = _LOCAL.__dict__.setdefault("conns", {})
    err: Exception = OSError(url)
    for attempt in range(5):
        conn = conns.get(u.netloc)
        if conn is None:
            conn = conns[u.netloc] = http.client.HTTPSConnection(u.netloc, timeout=60, context=_TLS)
        try:
            conn.request("GET", u.path + (f"?{u.query}" if u.query else ""), headers=headers or {})
            r = conn.getresponse()
            body = r.read()
            if r.status in (404, 410):
                return None
            if r.status in (301, 302, 307, 308) and r.getheader("Location"):
                return http_get(urljoin(url, r.getheader("Location")), headers)
            if r.status in (200, 206):
                return body
            err = OSError(f"HTTP {r.status} for {url}")
        except (OSError, http.client.HTTPException) as e:
            err = e
        conn.close()
        conns.pop(u.netloc, None)
        time.sleep(1 + 2 * attempt)
    raise err


def range_metadata(url: str, size: int | None = None) -> str:
    """The METADATA member of a remote wheel, read through range requests (wheeldoc's own reader),
    retried as http_get retries; a page that gives no size is asked with HEAD."""
    import time
    import urllib.request

    from wheeldoc.binary.indexmeta import IndexReader, IndexReadError

    if size is None:
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=60) as r:
            size = int(r.headers["Content-Length"])
    err: Exception = OSError(url)
    for attempt in range(5):
        try:
            text = IndexReader(deadline_s=600).member_metadata(url, size)
        except IndexReadError as e:
            err = e
            time.sleep(1 + 2 * attempt)
            continue
        if text is None:
            raise OSError(f"{url}: no METADATA member read")
        return text
    raise OSError(str(err))


def page(pkg: str) -> dict:
    body = http_get(f"{INDEX}/{pkg}/", {"Accept": "application/vnd.pypi.simple.v1+json"})
    if body is None:
        raise OSError(f"{INDEX}/{pkg}/: not found")
    return json.loads(body)


def releases(pkg: str) -> dict[str, dict]:
    """version -> {"python": Requires-Python, "wheel": the file to read or None (sdist only)}."""
    return {str(v): row for v, row in release_files(page(pkg).get("files", []), SINCE).items()}


def build(pkg: str, extras: tuple[str, ...], jobs: int) -> tuple[dict, dict]:
    names = set(PACKAGES) - {pkg}
    rels = releases(pkg)

    def one(item):
        ver, row = item
        f = row["wheel"]
        if f is None:
            return ver, {"python": row["python"], "torch": None, "deps": {}}, "no wheel on PyPI (sdist only)"
        text = None
        cached = CACHE / "metadata" / f"{f['hashes']['sha256']}.txt" if CACHE else None
        if cached is not None and cached.exists():  # by the wheel's sha256: what it holds never changes
            text = cached.read_text()
        if text is None:
            body = http_get(f["url"] + ".metadata")  # PEP 658: served beside most wheels, advertised or not
            text = body.decode("utf-8", "replace") if body is not None else range_metadata(f["url"], f.get("size"))
            if cached is not None:
                cached.parent.mkdir(parents=True, exist_ok=True)
                tmp = cached.with_suffix(f".{id(text)}.tmp")
                tmp.write_text(text)
                tmp.replace(cached)
        torch, deps = split(text, extras, names)
        return ver, {"python": row["python"], "torch": torch, "deps": deps}, \
            f"{f['filename']} sha256:{f['hashes']['sha256']}"

    with ThreadPoolExecutor(jobs) as ex:
        got = list(ex.map(one, sorted(rels.items())))
    table = {v: r for v, r, _ in got}
    sources = {v: s for v, _, s in got}
    return table, sources


def torch_series() -> dict[str, dict]:
    """X.Y -> the earliest upload of a torch X.Y.0 file on PyPI (date, file name, sha256)."""
    from packaging.utils import parse_wheel_filename

    out: dict[str, dict] = {}
    for f in page("torch").get("files", []):
        if not f["filename"].endswith(".whl"):
            continue
        ver = parse_wheel_filename(f["filename"])[1]
        if ver.is_prerelease or ver.local or ver.micro != 0 or not f.get("upload-time"):
            continue
        s = f"{ver.major}.{ver.minor}"
        if s not in out or f["upload-time"] < out[s]["date"]:
            out[s] = {"date": f["upload-time"][:10], "file": f"{f['filename']} sha256:{f['hashes']['sha256']}"}
    return out


def torch_pythons() -> dict[str, list[str]]:
    """torch X.Y.Z -> the CPython versions its linux wheels on PyPI are built for ("3.9", …): an image
    holding that torch from PyPI runs one of them."""
    from packaging.utils import parse_wheel_filename

    out: dict[str, set[str]] = {}
    for f in page("torch").get("files", []):
        if not f["filename"].endswith(".whl") or "linux" not in f["filename"] or (f.get("upload-time") or "") < SINCE:
            continue
        _, ver, _, tags = parse_wheel_filename(f["filename"])
        if ver.is_prerelease or ver.local:
            continue
        for t in tags:
            if t.interpreter.startswith("cp") and t.interpreter[2:].isdigit() and not t.interpreter.endswith("t"):
                out.setdefault(str(ver), set()).add(f"3.{t.interpreter[3:]}")
    return {v: sorted(p, key=lambda x: int(x.split(".")[1])) for v, p in out.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--packages", nargs="*", default=list(PACKAGES), help="rebuild only these (others kept)")
    ap.add_argument("--recode", action="store_true", help="only re-encode markers still written as text (no network)")
    ap.add_argument("--cache", type=Path, help="keep each METADATA read here, by the wheel's sha256 "
                    "(scripts/select_torch_dependents.py fills the same folder)")
    a = ap.parse_args()
    global CACHE
    CACHE = a.cache
    if a.recode:
        data = read_table()
        for body in data["packages"].values():
            for row, _ in body["rows"]:
                def enc(line: str) -> str:
                    spec, _, marker = line.partition(";")
                    marker = marker.strip()
                    return line if not marker or marker.startswith("@") else f"{spec.strip()};@{encode_marker(marker)}"
                if row["torch"] is not None:
                    row["torch"] = [enc(x) for x in row["torch"]]
                row["deps"] = {k: " | ".join(enc(x) for x in v.split(" | ")) for k, v in row["deps"].items()}
        data["marker_axes"] = {"machines": list(MARKER_MACHINES), "pythons": list(MARKER_PYTHONS)}
        write_table(data)
        return
    old = read_table() if OUT.exists() else {}
    old_src = read_gz(SOURCES) if SOURCES.exists() else {}
    table = {"schema": 4,
             "_comment": "per package, as one JSON text decoded on use, rows shared by releases: [{Requires-Python, torch requirement (null: not "
                         "known), requirements on other packages of the table}, \"versions\"]; from the wheel "
                         "METADATA on PyPI; provenance in torch_pins_sources.json.gz; rebuilt by "
                         "scripts/make_torch_pins.py",
             "packages": old.get("packages", {}) if old.get("schema") in (3, 4) else {},
             "torch_series": {k: v["date"] for k, v in torch_series().items()},
             "torch_pythons": torch_pythons(),
             "marker_axes": {"machines": list(MARKER_MACHINES), "pythons": list(MARKER_PYTHONS)}}
    sources = {"schema": 3, "source": f"{INDEX} (PEP 691 JSON; METADATA read by HTTP range requests)",
               "packages": old_src.get("packages", {}) if old_src.get("schema") == 3 else {},
               "dropped": old_src.get("dropped", {}) if old_src.get("schema") == 3 else {},
               "candidates": "scripts/torch_pins_candidates.txt",
               "torch_series": {k: v["file"] for k, v in torch_series().items()}}
    for gone in set(table["packages"]) - set(PACKAGES):  # no longer a candidate (the list's header says why)
        table["packages"].pop(gone)
        sources["packages"].pop(gone, None)
    for gone in set(sources["dropped"]) - set(PACKAGES):
        sources["dropped"].pop(gone)
    for pkg in a.packages:
        extras = PACKAGES[pkg]
        try:
            rels, src = build(pkg, extras, a.jobs)
        except OSError as e:  # not on PyPI any more, or the index refused: say so, keep going
            sources["dropped"][pkg] = f"not read from the index: {e}"
            print(f"{pkg}: not read ({e})", file=sys.stderr, flush=True)
            continue
        known = [r for r in rels.values() if r["torch"] is not None]
        if pkg not in CORE and not any(r["torch"] for r in known):
            table["packages"].pop(pkg, None)
            sources["packages"].pop(pkg, None)
            sources["dropped"][pkg] = (f"no torch requirement in the METADATA of any of its {len(rels)} releases "
                                       f"since {SINCE}" if rels else f"no final release since {SINCE}")
            print(f"{pkg}: dropped ({sources['dropped'][pkg]})", file=sys.stderr, flush=True)
        else:
            exact = bool(known) and all(any(s.startswith("==") for s in r["torch"]) for r in known)
            table["packages"][pkg] = {"extras": list(extras), "exact_in_every_release": exact, "rows": group(rels)}
            sources["packages"][pkg] = src
            sources["dropped"].pop(pkg, None)
            print(f"{pkg}: {len(rels)} releases ({len(rels) - len(known)} without a wheel), exact torch pin in every "
                  f"one: {exact}", file=sys.stderr, flush=True)
        write_table(table)
        write_gz(SOURCES, sources)
    kept = set(table["packages"])
    for body in table["packages"].values():  # requirements on packages the table does not hold are not needed
        rels = ungroup(body["rows"])
        for row in rels.values():
            row["deps"] = {k: v for k, v in row["deps"].items() if k in kept}
        body["rows"] = group(rels)
    write_table(table)


if __name__ == "__main__":
    main()
