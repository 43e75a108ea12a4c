"""The base-image table (base_images.json, rebuilt by scripts/make_base_images.py) and the
torch-pin table (torch_pins.json, scripts/make_torch_pins.py), loaded on first use.

`base_image(ref)` says what a well-known base brings: the torch it ships (version, a range of
versions when the tag names only the series, or only that it is a pre-release build), the other
packages it ships (when known), its CUDA, whether nvcc is there, a pip constraint file. An image
no row matches is unknown (None), and the rules judge nothing from it.
"""

from __future__ import annotations

import json
import re
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


@lru_cache(maxsize=1)
def _rows() -> list[dict]:
    data = json.loads((_DIR / "base_images.json").read_text())
    if data.get("schema") != 1:
        raise ValueError("base_images.json: unknown schema")
    for r in data["rows"]:
        r["_re"] = re.compile(r["pattern"])
    return data["rows"]


@lru_cache(maxsize=1)
def torch_pins() -> dict:
    data = json.loads((_DIR / "torch_pins.json").read_text())
    if data.get("schema") != 1:
        raise ValueError("torch_pins.json: unknown schema")
    return data["packages"]


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
    return ",".join(rel["torch"]) or "", exact


def last_series_on(variant: str) -> str | None:
    """The newest torch series the PyTorch index published for `variant` ("cu124" -> "2.6"), from
    wheeldoc/data/torch.json (the release matrix); None when the table does not list the variant."""
    import json as _json

    series = _json.loads((_DIR / "torch.json").read_text())["series"]

    def key(s: str) -> tuple[int, ...]:
        return tuple(int(x) for x in s.split("."))

    have = [s for s, row in series.items() if variant in (row.get("cuda") or [])]
    return max(have, key=key) if have else None


def _series_key(series: str) -> tuple[int, ...]:
    return tuple(int(x) for x in series.split(".")[:2])


def _cuda(text: str | None) -> tuple[int, int] | None:
    m = re.match(r"([0-9]{1,4})\.([0-9]{1,4})(?![0-9])", text or "")  # bounded: a tag is an input
    return (int(m[1]), int(m[2])) if m else None


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
            if t.get("exact") is False and version:
                # the tag names the series; the build took that release or a later one from its index
                lowest = ".".join(version.split(".")[:2]) + ".0.dev0"
                highest = last_series_on(fill(t["index_variant"])) if t.get("index_variant") else None
                cap = t.get("highest_series")
                if cap and (highest is None or _series_key(cap) < _series_key(highest)):
                    highest = cap  # no build of the tag is later than this series (the row's source says why)
                series = ".".join(version.split(".")[:2])
                via = (f"{row['name']}: a torch of series {series}" if highest == series else
                       f"{row['name']}: a torch of series {series} or later" + (f", {highest} at most" if highest else ""))
                version = None
            torch = BaseTorch(version, t.get("prerelease"), via, lowest, highest)
        constraint = None
        pc = row.get("pip_constraint")
        if pc and "YY" in g and f"{g['YY']}.{g['MM']}" >= pc["from"] and pc.get("pins_torch"):
            constraint = pc["path"]
        env = {k: fill(v) if v else None for k, v in (row.get("env") or {}).items()}
        ships = row.get("ships", [])
        return BaseImage(ref, row["name"], _cuda(fill(row.get("cuda"))), nvcc, torch, env, constraint,
                         fill(row["source"]) if "YY" in g else row["source"],
                         ships=None if ships is None else frozenset(ships))
    return None
