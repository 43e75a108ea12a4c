"""The base-image table (base_images.json, rebuilt by scripts/make_base_images.py) and the
torch-pin table (torch_pins.json.gz, scripts/make_torch_pins.py), loaded on first use.

`base_image(ref)` says what a well-known base brings: the torch it ships (version, a range of
versions when the tag names only the series, or only that it is a pre-release build), the other
packages it ships (when known), its CUDA, its Python (when known), whether nvcc is there, a pip
constraint file. NGC PyTorch tags with a per-release entry (`releases`) answer that release's torch
build, Python and CUDA from its release notes (or NVIDIA's Jetson table, or a public file about that tag);
other NGC tags keep the date bound. An image
no row matches is unknown (None), and the rules judge nothing from it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

_DIR = Path(__file__).parent


@dataclass(frozen=True)
class BaseTorch:
    version: str | None  # "2.5.1", None when only its kind is known
    prerelease: bool | None  # NGC builds: X.Ya0+git…
    via: str  # "vllm==0.7.3 pins torch==2.5.1" or the row's words
    lowest: str | None = None  # version unknown, but at least this ("2.4.0.dev0": series 2.4, nightlies included)
    highest_series: str | None = None  # … and of this series at most ("2.6": the last series on its CUDA index)


@dataclass(frozen=True)
class BaseImage:
    ref: str
    row: str
    cuda: tuple[int, int] | None
    nvcc: bool | None
    torch: BaseTorch | None  # None: the image ships no torch
    env: dict[str, str | None] = field(default_factory=dict)
    constraint: str | None = None  # a pip constraint file that pins the shipped torch
    source: str = ""
    torch_known: bool = True  # False: whether the image ships a torch is not known (torch None then says nothing)
    sources: dict[str, str] = field(default_factory=dict)  # fact -> "table" / "daemon" (`--pull-base`); empty: all table
    ships: frozenset[str] | None = frozenset()  # other Python packages the image installs; None: not known
    python: str | None = None  # "3.8": the Python of the image's default environment; None: not known
    pythons: tuple[str, ...] = ()  # where `python` is not known: the Pythons it lies between (read releases)
    ships_all: bool = True  # False: `ships` names some of the packages the image installs, not all (NGC vLLM)
    versions: dict[str, str] = field(default_factory=dict)  # a shipped package -> its version (public part), if read
    env_complete: bool = True  # False: `env` lists what is known of the image's ENV, not all of it (a row says)


@lru_cache(maxsize=1)
def _rows() -> list[dict]:
    data = json.loads((_DIR / "base_images.json").read_text())
    if data.get("schema") != 1:
        raise ValueError("base_images.json: unknown schema")
    for r in data["rows"]:
        r["_re"] = re.compile(r["pattern"])
    return data["rows"]


class _Pins(Mapping):
    """package -> its body, each decoded from its own JSON text on first use (schema 4), so a
    Dockerfile that names two packages of the table pays for two, not for every one."""

    def __init__(self, raw: dict) -> None:
        self._raw, self._done = raw, {}

    def add(self, name: str, body: dict) -> None:
        """A package the table does not hold, read for this run (`check --resolve`): `releases` as
        version -> row, and `origin`, where it was read."""
        if name not in self._raw:
            self._raw[name] = body
            self._done.pop(name, None)

    def drop_added(self) -> None:
        """Forget what `add` put in (the end of a `check --resolve` run)."""
        for name in [n for n, v in self._raw.items() if isinstance(v, dict) and "origin" in v]:
            del self._raw[name]
            self._done.pop(name, None)

    def __getitem__(self, name: str) -> dict:
        body = self._done.get(name)
        if body is None:
            text = self._raw[name]
            if isinstance(text, dict) and "releases" in text:
                self._done[name] = text
                return text
            body = json.loads(text) if isinstance(text, str) else text
            body["releases"] = {v: row for row, versions in body.pop("rows") for v in versions.split()}
            self._done[name] = body
        return body

    def __contains__(self, name: object) -> bool:
        return name in self._raw

    def __iter__(self):
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


@lru_cache(maxsize=1)
def _pins_file() -> dict:
    """torch_pins.json.gz; `packages` a mapping that decodes a package (its shared rows expanded to
    `releases`, version -> row) when it is first asked for."""
    import gzip

    data = json.loads(gzip.decompress((_DIR / "torch_pins.json.gz").read_bytes()))
    if data.get("schema") not in (3, 4):
        raise ValueError("torch_pins.json.gz: unknown schema")
    data["packages"] = _Pins(data["packages"])
    return data


def torch_pins() -> Mapping[str, dict]:
    """package -> {"releases": {version: {"python", "torch", "deps"}}, …} (scripts/make_torch_pins.py)."""
    return _pins_file()["packages"]


def torch_pythons() -> dict[str, list[str]]:
    """torch "X.Y.Z" -> the CPython versions ("3.9", …) its linux wheels on PyPI are built for."""
    return _pins_file()["torch_pythons"]


def torch_series_dates() -> dict[str, str]:
    """torch series "X.Y" -> the date its first X.Y.0 file reached PyPI ("2023-03-15")."""
    return _pins_file()["torch_series"]


def release_torch(rel: dict, python: str | None = None, machine: str | None = None) -> str | None:
    """The torch specifier one release row asks for on linux ("" none; None not known): its
    `Requires-Dist: torch` lines whose markers hold for `python` ("3.10") and `machine`
    ("x86_64"/"aarch64"), joined. A marker that depends on an unknown Python or machine makes it
    None unless every value gives the same answer."""
    lines = rel.get("torch")
    if lines is None:
        return None
    out = []
    for line in lines:
        spec, _, marker = line.partition(";")
        if marker.strip():
            hold = _marker_holds(marker.strip(), python, machine)
            if hold is None:
                return None
            if not hold:
                continue
        if spec.strip():
            out.append(spec.strip())
    return ",".join(out)


PYTHONS = ("3.7", "3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14")


def _marker_holds(marker: str, python: str | None, machine: str | None) -> bool | None:
    """A marker the table stores as "@N" (evaluated by scripts/make_torch_pins.py for linux on each
    machine x Python of `marker_axes`): does it hold for `python` and `machine`? None when the
    answer depends on what is not known (or the Python is outside the axes)."""
    axes = _pins_file().get("marker_axes") or {}
    machines, pys = axes.get("machines") or [], axes.get("pythons") or []
    if not marker.startswith("@") or not marker[1:].isdigit():
        return None
    bits = int(marker[1:])
    got = set()
    for py in (python,) if python else PYTHONS:
        for mach in (machine,) if machine else tuple(machines):
            if py not in pys or mach not in machines:
                return None
            got.add(bool(bits >> (machines.index(mach) * len(pys) + pys.index(py)) & 1))
    return got.pop() if len(got) == 1 else None


def _norm(v: str) -> str:
    return v.lstrip("v")


def torch_requirement(package: str, version: str | None) -> tuple[str | None, bool]:
    """(torch specifier of that release, whether the package pins an exact torch in every release
    the table lists). (None, …) when the release is not in the table."""
    pkg = torch_pins().get(package)
    if pkg is None:
        return None, False
    exact = bool(pkg.get("exact_in_every_release"))
    if version is None:
        return None, exact
    rel = pkg["releases"].get(_norm(version))
    if rel is None:
        return None, exact
    return release_torch(rel), exact


def last_series_on(variant: str) -> str | None:
    """The newest torch series the PyTorch index published for `variant` ("cu124" -> "2.6"), from
    wheeldoc/data/torch.json (the release matrix); None when the table does not list the variant."""
    import json as _json

    series = _json.loads((_DIR / "torch.json").read_text())["series"]

    def key(s: str) -> tuple[int, ...]:
        return tuple(int(x) for x in s.split("."))

    have = [s for s, row in series.items() if variant in (row.get("cuda") or [])]
    return max(have, key=key) if have else None


def dated_series_bound(yy: int, mm: int) -> str | None:
    """The newest torch series a pre-release build in an image dated 20YY-MM can be: torch's main
    branch carries X.Ya0 with X.Y at most two series past the newest release (it moves to the next
    series when a release branch is cut, before that release is out), so with S the newest series on
    PyPI a month after the image's date (a margin for a late upload), the build is at most series
    S+2. None when the table does not reach that far."""
    dates = torch_series_dates()
    year, month = 2000 + yy + (mm // 12), mm % 12 + 1  # the month after
    limit = f"{year:04d}-{month:02d}-31"
    order = sorted(dates, key=_series_key)
    out = [s for s in order if dates[s] <= limit]
    if not out:
        return None
    k = order.index(out[-1]) + 2
    return order[k] if k < len(order) else None


def _series_key(series: str) -> tuple[int, ...]:
    return tuple(int(x) for x in series.split(".")[:2])


# how an NGC release's torch was read (scripts/make_base_images.py NGC_HOW), as said in a finding
_READ_AS = {"release-notes": "its release notes", "release-notes-copy": "its release notes",
            "jetson-matrix": "NVIDIA's PyTorch for Jetson compatibility table",
            "tag-statement": "a public file about that tag",
            "ngc-pytorch": "the NGC PyTorch release its release notes name"}


def _cuda(text: str | None) -> tuple[int, int] | None:
    m = re.match(r"([0-9]{1,4})\.([0-9]{1,4})(?![0-9])", text or "")  # bounded: a tag is an input
    return (int(m[1]), int(m[2])) if m else None


def _python(text: str | None) -> str | None:
    m = re.match(r"(3)\.(\d{1,2})(?![0-9])", text or "")  # "3.11.7" -> "3.11"
    return f"{m[1]}.{m[2]}" if m else None


def _python_by(table: dict, groups: dict) -> tuple[str | None, str]:
    """The Python of an image whose tag names a release (pytorch/pytorch:<torch>-…): read for that
    release, or, for one not read, from the nearest read releases below and above it when both say
    the same Python (the image build did not change its Python between them). Else unknown."""
    key = groups.get(table["group"])
    rows = table["values"]
    if key in rows:
        r = rows[key]
        return _python(r["python"]), f"{table['group']} {key}: Python {r['python']} ({r['source']}: {r['quote']})"
    try:
        want = tuple(int(x) for x in (key or "").split("."))
    except ValueError:
        return None, ""
    ordered = sorted(rows, key=lambda v: tuple(int(x) for x in v.split(".")))
    below = [v for v in ordered if tuple(int(x) for x in v.split(".")) < want]
    above = [v for v in ordered if tuple(int(x) for x in v.split(".")) > want]
    if below and above and _python(rows[below[-1]]["python"]) == _python(rows[above[0]]["python"]):
        py = _python(rows[below[-1]]["python"])
        return py, (f"{table['group']} {key}: Python {py}, as for {below[-1]} and {above[0]} on either side "
                    f"({rows[below[-1]]['source']}; {rows[above[0]]['source']})")
    return None, ""


def newest_release(releases, within: str | None = None) -> str | None:
    """The newest final release among `releases` (versions as written: a torch-pin table's release
    keys) that `within` (a specifier) admits; None when none does or `within` is not a specifier."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        allowed = SpecifierSet(within) if within else None
    except InvalidSpecifier:
        return None
    best = None
    for v in releases:
        try:
            ver = Version(v)
        except InvalidVersion:
            continue
        if ver.is_prerelease or (allowed is not None and not allowed.contains(ver)):
            continue
        if best is None or ver > best[0]:
            best = (ver, v)
    return best[1] if best else None


def _python_between(table: dict, groups: dict) -> tuple[str, ...]:
    """For a release not read whose nearest read releases below and above say different Pythons
    (pytorch/pytorch 2.3.0 between 2.2.2's 3.10 and 2.4.0's 3.11): the Pythons from the one to the
    other (the images' Python only moves up with the release). () when not bounded on both sides."""
    key = groups.get(table["group"])
    try:
        want = tuple(int(x) for x in (key or "").split("."))
    except ValueError:
        return ()
    ordered = sorted(table["values"], key=lambda v: tuple(int(x) for x in v.split(".")))
    below = [v for v in ordered if tuple(int(x) for x in v.split(".")) < want]
    above = [v for v in ordered if tuple(int(x) for x in v.split(".")) > want]
    if not below or not above:
        return ()
    lo, hi = (_python(table["values"][v]["python"]) for v in (below[-1], above[0]))
    if lo is None or hi is None or lo.split(".")[0] != hi.split(".")[0]:
        return ()
    major, a, b = lo.split(".")[0], int(lo.split(".")[1]), int(hi.split(".")[1])
    return tuple(f"{major}.{m}" for m in range(a, b + 1)) if a <= b else ()


def _read_torch_around(releases: dict, tag: str) -> tuple[tuple[str, str] | None, tuple[str, str] | None]:
    """(release, torch build) of the nearest releases before and after `tag` whose torch was read."""
    read = [t for t, rel in releases.items() if rel.get("torch")]  # YY.MM sorts as text
    below, above = [t for t in read if t < tag], [t for t in read if t > tag]
    return ((max(below), releases[max(below)]["torch"]) if below else None,
            (min(above), releases[min(above)]["torch"]) if above else None)


def _series(version: str) -> str:
    return ".".join(version.split(".")[:2])


def _release_pythons(row: dict) -> dict:
    """A per-release row's read Pythons as a `python_by` table keyed by release (YY.MM)."""
    values = {tag: {"python": rel["python"], "source": f"release {tag}: {rel['source']}", "quote": rel["quote"]}
              for tag, rel in row["releases"].items() if rel.get("python")}
    return {"group": "release", "values": values}


def base_image(ref: str) -> BaseImage | None:
    ref = ref.strip()
    for row in _rows():
        m = row["_re"].search(ref)
        if not m:
            continue
        g = m.groupdict()

        def fill(v):
            return v.format(**g) if isinstance(v, str) else v

        nvcc = row.get("nvcc")
        if isinstance(nvcc, str):
            left, _, right = fill(nvcc).partition("==")
            nvcc = left == right
        # a tag's own release entry (NGC vLLM `26.05.post1` is a release of its own, not 26.05)
        rel = (row.get("releases") or {}).get(f"{g['YY']}.{g['MM']}{g.get('post') or ''}") if "YY" in g else None
        torch = None
        t = row.get("torch")
        if t is not None:
            version, via = fill(t.get("version")), row["name"]
            if version and version.startswith("pin-of:"):
                pkg, _, ver = version[len("pin-of:"):].partition("==")
                spec, _ = torch_requirement(pkg, ver)
                version = spec[2:] if spec and spec.startswith("==") and "," not in spec else None
                via = f"{pkg}=={ver} pins torch{spec}" if spec else f"{pkg} {ver} (its torch pin is not in the table)"
            lowest = highest = None
            if version and version.startswith("newest-pin-of:"):
                # a moving tag (`latest`): the newest release at build time, so at least the newest in the
                # table, whose exact torch pin is then a floor (a later release does not pin an older torch)
                pkg = version[len("newest-pin-of:"):]
                newest = newest_release((torch_pins().get(pkg) or {}).get("releases", {}))
                spec, _ = torch_requirement(pkg, newest) if newest else (None, False)
                version = None
                if spec and spec.startswith("==") and "," not in spec:
                    lowest = spec[2:]
                    via = (f"{row['name']}: at least the newest {pkg} in the table, {newest}, which pins "
                           f"torch{spec}")
                else:
                    via = f"{row['name']}: the newest {pkg} (its torch pin is not in the table)"
            if t.get("exact") is False and version:
                # the tag names the series; the build took that release or a later one from its index
                lowest = _series(version) + ".0.dev0"
                highest = last_series_on(fill(t["index_variant"])) if t.get("index_variant") else None
                cap = fill(t.get("highest_series"))  # a series, or the tag's own ("{tmaj}.{tmin}")
                if cap and (highest is None or _series_key(cap) < _series_key(highest)):
                    highest = cap  # no build of the tag is later than this series (the row's source says why)
                series = _series(version)
                via = (f"{row['name']}: a torch of series {series}" if highest == series else
                       f"{row['name']}: a torch of series {series} or later" + (f", {highest} at most" if highest else ""))
                version = None
            if version is None and rel and rel.get("torch"):
                version = rel["torch"]  # this release's own build, from its release notes or NVIDIA's Jetson table
                read = _READ_AS.get((rel.get("how") or {}).get("torch"), "its release notes")
                via = f"{row['name']} {g['YY']}.{g['MM']}: torch {version} ({read})"
            elif version is None and t.get("prerelease") and "YY" in g:
                highest = dated_series_bound(int(g["YY"]), int(g["MM"]))
                via = f"{row['name']}: a pre-release build"
                if highest:
                    via = (f"{via} of series {highest} at most (the image is dated 20{g['YY']}-{g['MM']}; "
                           "torch_pins.json dates each torch series on PyPI)")
                # NGC's builds only move up from release to release: the read neighbours bound this one
                below, above = _read_torch_around(row.get("releases") or {}, f"{g['YY']}.{g['MM']}")
                if below:
                    lowest = below[1]
                    via = f"{via}; at least {below[1]}, the build of release {below[0]}"
                if above and (highest is None or _series_key(_series(above[1])) < _series_key(highest)):
                    highest = _series(above[1])
                    via = f"{via}; of series {highest} at most, as release {above[0]} ships {above[1]}"
            torch = BaseTorch(version, t.get("prerelease"), via, lowest, highest)
        constraint = None
        pc = row.get("pip_constraint")
        if pc and "YY" in g and f"{g['YY']}.{g['MM']}" >= pc["from"] and pc.get("pins_torch"):
            constraint = pc["path"]
        env = {k: fill(v) if v else None for k, v in (row.get("env") or {}).items()}
        ships = row.get("ships", [])
        versions = {k: rel[k] for k in ships or () if rel and rel.get(k)}  # NGC vLLM: the vllm its release ships
        # the tag's groups named in the text ({torch}, {cuda}) are filled; any other brace stays as written
        source = re.sub(r"\{(\w{1,20})\}", lambda m: g.get(m[1]) or m[0], row["source"])
        cuda = _cuda(fill(row.get("cuda")))
        python = _python(fill(row.get("python")))
        between: tuple[str, ...] = ()
        if python is None and row.get("python_by"):
            python, said = _python_by(row["python_by"], g)
            if said:
                source = f"{source}; {said}"
            elif python is None:
                between = _python_between(row["python_by"], g)
        if rel:
            cuda = cuda or _cuda(rel.get("cuda"))
            python = python or _python(rel.get("python"))
            source = f"{source}; release {g['YY']}.{g['MM']}: {rel['source']}: {rel['quote']}"
        if python is None and row.get("releases") and "YY" in g:
            # a release whose Python was not read: its read neighbours (the images' Python only moves up)
            table = _release_pythons(row)
            python, said = _python_by(table, {"release": f"{g['YY']}.{g['MM']}"})
            if said:
                source = f"{source}; {said}"
            else:
                between = _python_between(table, {"release": f"{g['YY']}.{g['MM']}"})
        return BaseImage(ref, row["name"], cuda, nvcc, torch, env, constraint, source,
                         ships=None if ships is None else frozenset(ships), python=python, pythons=between,
                         ships_all=row.get("ships_complete", True), versions=versions,
                         env_complete=row.get("env_complete", True))
    return None
