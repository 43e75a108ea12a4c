"""Rewrite scripts/torch_pins_candidates.txt: the torch dependents among PyPI's most downloaded
packages, chosen from each package's own metadata, never from its name or summary.

Input: a public download ranking, hugovk/top-pypi-packages' `top-pypi-packages-30-days.min.json`
(the 15,000 most downloaded projects of 30 days, from the public PyPI BigQuery/ClickHouse data),
read at one commit of that repository; its repo, commit and sha256 are written into the header.

For every ranked project, the PEP 691 JSON page of PyPI's simple index gives its files; the newest
final (no pre-, dev- or local-version), non-yanked release is taken, and one of its wheels read (a
pure-Python wheel, else the linux x86-64 wheel with the newest CPython tag, else any wheel): its
PEP 658 `.metadata` file when the index serves one, else the wheel's METADATA member through HTTP
range requests (scripts/make_torch_pins.py's helpers). The project is selected when one of its
`Requires-Dist` lines names torch outside an extra: the line's marker does not mention `extra`, and
holds on linux for some machine x Python of make_torch_pins' marker axes (a torch needed only on
Windows or macOS is not a Dockerfile's concern). Left out: names containing "nightly" (nightly
builds), torch itself, and the triton / nvidia-* runtime packages. A release with no wheel
(sdist only) is not read (its setup.py would have to run) and is counted in the header as unknown.

Responses are cached on disk, outside the repository (`--cache`): index pages by project name,
METADATA files by the wheel's sha256, so a rerun is cheap and reads the same pages (`--refresh`
reads the index pages again).

    uv run python scripts/select_torch_dependents.py --ranking top-pypi-packages-30-days.min.json \
        --ranking-source hugovk/top-pypi-packages@<commit> --cache /work/cache/pypi-meta --jobs 16
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "torch_pins_candidates.txt"
INDEX = "https://pypi.org/simple"
RUNTIME = ("torch", "triton", "pytorch-triton")  # torch and its runtime packages (with nvidia-*)


def _get(url: str, headers: dict | None = None) -> bytes | None:
    from make_torch_pins import http_get

    return http_get(url, headers)


class Cache:
    def __init__(self, root: Path, refresh: bool) -> None:
        self.root, self.refresh = root, refresh
        (root / "simple").mkdir(parents=True, exist_ok=True)
        (root / "metadata").mkdir(parents=True, exist_ok=True)

    def page(self, name: str) -> dict | None:
        """The PEP 691 JSON page of a project (None: not on PyPI)."""
        path = self.root / "simple" / f"{name}.json.gz"
        if path.exists() and not self.refresh:
            data = json.loads(gzip.decompress(path.read_bytes()))
        else:
            body = _get(f"{INDEX}/{name}/", {"Accept": "application/vnd.pypi.simple.v1+json"})
            data = {"read": time.strftime("%Y-%m-%d"), "page": json.loads(body) if body is not None else None}
            tmp = path.with_suffix(f".{id(data)}.tmp")
            tmp.write_bytes(gzip.compress(json.dumps(data).encode(), compresslevel=1, mtime=0))
            tmp.replace(path)
        return data["page"]

    def metadata(self, f: dict) -> str:
        """The METADATA of one wheel file entry of a PEP 691 page (cached by its sha256)."""
        sha = f["hashes"]["sha256"]
        path = self.root / "metadata" / f"{sha}.txt"
        if path.exists():
            return path.read_text()
        text = None
        body = _get(f["url"] + ".metadata")  # PEP 658, served for most wheels whether the page says so or not
        if body is not None:
            text = body.decode("utf-8", "replace")
        if text is None:
            from make_torch_pins import range_metadata

            text = range_metadata(f["url"], f.get("size"))
        tmp = path.with_suffix(f".{id(text)}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
        return text


def _newest_files(page: dict) -> list[dict]:
    """The non-yanked files of the page's newest final version (PEP 700 `versions`), told by the
    version field of their names, parsed in full afterwards; a page can list thousands of files. All
    non-yanked files when the page has no `versions`."""
    from packaging.version import InvalidVersion, Version

    files = [f for f in page.get("files", []) if not f.get("yanked")]

    def ver(v: str) -> Version | None:
        try:
            return Version(v)
        except InvalidVersion:
            return None

    final = [v for v in map(ver, page.get("versions") or []) if v is not None
             and not (v.is_prerelease or v.is_devrelease or v.local)]
    if not final:
        return files
    keep = set()
    for top in sorted(set(final), reverse=True):  # the newest version that still has a file
        for f in files:
            name = f["filename"]
            if name.endswith(".whl"):
                field = name.split("-")[1] if name.count("-") >= 4 else ""
            else:
                field = name.rsplit("-", 1)[-1]
                for ext in (".tar.gz", ".zip", ".tar.bz2", ".tgz"):
                    field = field.removesuffix(ext)
            if ver(field) == top:
                keep.add(f["filename"])
        if keep:
            return [f for f in files if f["filename"] in keep]
    return files


def newest_wheel(page: dict) -> tuple[str | None, dict | None]:
    """(newest final non-yanked version, the wheel of it to read or None when it has no wheel)."""
    from wheeldoc.data.pin_rows import final_file, wheel_rank

    best: dict = {}
    for f in _newest_files(page):
        name = f["filename"]
        if f.get("yanked"):
            continue
        got = final_file(name, (".tar.gz", ".zip", ".tar.bz2", ".tgz"))
        if got is None:
            continue
        ver, tags = got
        slot = best.setdefault(ver, [None, None])
        if tags is None:
            continue
        key = wheel_rank(name, tags) or (0, 0, name)  # any wheel's METADATA will do here
        if slot[0] is None or key > slot[0]:
            slot[:] = [key, f]
    if not best:
        return None, None
    ver = max(best)
    return str(ver), best[ver][1]


def torch_outside_extra(meta_text: str) -> list[str]:
    """The `Requires-Dist` lines of a METADATA text that name torch outside an extra and hold on
    linux for some machine x Python of the marker axes."""
    from email.parser import Parser

    from wheeldoc.data.pin_rows import encode_marker
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    out = []
    for line in Parser().parsestr(meta_text).get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
            name, marker = canonicalize_name(req.name), str(req.marker) if req.marker else ""
        except InvalidRequirement:  # `torch (>=1.9.*)`: still names torch
            head, _, marker = line.partition(";")
            name = canonicalize_name(head.split("(")[0].split(">")[0].split("=")[0].split("<")[0]
                                     .split("[")[0].split("~")[0].split("!")[0].strip() or "-")
        if name != "torch" or "extra" in marker:
            continue
        try:
            if marker and not encode_marker(marker):
                continue
        except Exception:  # an invalid marker: the line is kept (installers differ on it)
            pass
        out.append(line.strip())
    return out


def excluded(name: str) -> bool:
    return "nightly" in name or name in RUNTIME or name.startswith(("nvidia-", "pytorch-triton"))


def main() -> None:
    sys.path.insert(0, str(HERE))
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranking", required=True, type=Path, help="top-pypi-packages-30-days.min.json")
    ap.add_argument("--ranking-source", required=True, help="hugovk/top-pypi-packages@<commit>")
    ap.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "wheeldoc-pypi-meta")
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--refresh", action="store_true", help="read the index pages again")
    ap.add_argument("--out", type=Path, default=OUT, help="the list to write (default: %(default)s)")
    ap.add_argument("--report", type=Path, help="write each project's decision here (JSON)")
    a = ap.parse_args()
    from packaging.utils import canonicalize_name

    raw = a.ranking.read_bytes()
    ranking = json.loads(raw)
    names = [str(canonicalize_name(r["project"])) for r in ranking["rows"]]
    cache = Cache(a.cache, a.refresh)

    def one(item: tuple[int, str]) -> dict:
        rank, name = item
        if excluded(name):
            return {"rank": rank, "name": name, "status": "excluded"}
        try:
            page = cache.page(name)
            if page is None:
                return {"rank": rank, "name": name, "status": "not on PyPI"}
            ver, f = newest_wheel(page)
            if ver is None:
                return {"rank": rank, "name": name, "status": "no final release"}
            if f is None:
                return {"rank": rank, "name": name, "version": ver, "status": "no wheel (sdist only)"}
            lines = torch_outside_extra(cache.metadata(f))
        except Exception as e:  # noqa: BLE001 - one project's failure is reported, the run goes on
            return {"rank": rank, "name": name, "status": f"not read: {type(e).__name__}: {e}"}
        return {"rank": rank, "name": name, "version": ver, "wheel": f["filename"],
                "sha256": f["hashes"]["sha256"], "torch": lines,
                "status": "selected" if lines else "no torch requirement"}

    got: list[dict] = []
    with ThreadPoolExecutor(a.jobs) as ex:
        for i, r in enumerate(ex.map(one, enumerate(names, 1))):
            got.append(r)
            if i % 1000 == 999:
                print(f"{i + 1}/{len(names)}", file=sys.stderr, flush=True)
    failed = [r for r in got if r["status"].startswith("not read")]
    for r in failed:
        print(f"{r['name']}: {r['status']}", file=sys.stderr)
    sel = [r for r in got if r["status"] == "selected"]
    count = lambda s: sum(r["status"] == s for r in got)  # noqa: E731
    import textwrap

    text = (f"Candidate torch dependents for wheeldoc/data/torch_pins.json beyond the core list (PACKAGES in "
            f"scripts/make_torch_pins.py), written by scripts/select_torch_dependents.py (its docstring has the "
            f"rule). Ranking: {a.ranking_source}:{a.ranking.name} (sha256 {hashlib.sha256(raw).hexdigest()}, "
            f"last_update {ranking.get('last_update')}, {len(names)} projects). Selected: every ranked project "
            f"whose newest final non-yanked release on PyPI has a wheel whose METADATA has a `Requires-Dist: "
            f"torch...` line outside an extra that holds on linux (PEP 691 index pages; the wheel's PEP 658 "
            f".metadata file, else its METADATA member by HTTP range requests; read {time.strftime('%Y-%m')}). Left out: names containing \"nightly\", torch, triton and nvidia-* "
            f"({count('excluded')}). Not judged: {count('no wheel (sdist only)')} whose newest release is sdist "
            f"only, {count('no final release')} with no final release, {count('not on PyPI')} not on PyPI, "
            f"{len(failed)} not read. make_torch_pins.py reads every release since 2020-10 of each.")
    header = "".join(f"# {line}\n" for line in textwrap.wrap(text, 98)) + "# rank\tname\n"
    a.out.write_text(header + "".join(f"{r['rank']}\t{r['name']}\n" for r in sel))
    if a.report:
        a.report.write_text(json.dumps(got, indent=0))
    print(f"{len(sel)} selected of {len(names)}", file=sys.stderr)


if __name__ == "__main__":
    main()
