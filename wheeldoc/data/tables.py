"""Validated domain tables: GPUs -> compute capability, CUDA -> PTX ISA / minimum driver,
driver branch -> CUDA.

The facts live in `cuda.json` and `gpus.json` beside this file (provenance in each row).
Loading checks every row and raises `TableError` naming the file, the row and the problem,
so a malformed edit fails at once rather than giving wrong answers later.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLATFORMS = (None, "aarch64", "x86_64")
_VERSION = re.compile(r"^\d+\.\d+$")
_DRIVER = re.compile(r"^(\d{3,4})(\.\d{1,3}){1,2}$")
_DRIVER_OR_BRANCH = re.compile(r"^(\d{3,4})(\.\d{1,3}){0,2}$")  # "580" is the R580 branch


class TableError(ValueError):
    """A data table that does not have the shape wheeldoc relies on."""

    def __init__(self, table: str, message: str, row: int | None = None) -> None:
        where = table if row is None else f"{table} row {row}"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Toolkit:
    cuda: tuple[int, int]
    ptx_isa: tuple[int, int]
    min_driver: str | None  # minimum Linux x86_64 driver; None where NVIDIA published none
    source: str

    @property
    def name(self) -> str:
        return f"{self.cuda[0]}.{self.cuda[1]}"


@dataclass(frozen=True)
class DriverBranch:
    branch: int  # 580 for 580.95.05
    cuda: tuple[int, int]  # newest CUDA version the branch supports


@dataclass(frozen=True)
class CudaTable:
    newest_toolkit: tuple[int, int]
    toolkits: tuple[Toolkit, ...]
    driver_branches: tuple[DriverBranch, ...]
    minor_version_compat: tuple[tuple[int, int], ...]  # (CUDA major, minimum driver branch)


@dataclass(frozen=True)
class Gpu:
    name: str
    cc: tuple[int, int]
    platform: str | None  # "aarch64" when the GPU only ships in aarch64 systems
    aliases: tuple[str, ...]
    description: str

    @property
    def sm(self) -> str:
        return f"sm_{self.cc[0]}{self.cc[1]}"


# -- version parsing ----------------------------------------------------------------------


def parse_version(text: str | int | tuple[int, int]) -> tuple[int, int]:
    """"13.0", "13.0.88", "13", 13000 (cuDriverGetVersion) or (13, 0) -> (13, 0)."""
    if isinstance(text, tuple):
        return (int(text[0]), int(text[1]))
    if isinstance(text, int):
        if text >= 1000:
            return (text // 1000, (text % 1000) // 10)
        return (text, 0)
    m = re.fullmatch(r"\s*(\d+)(?:\.(\d+))?(?:\.\d+)*\s*", str(text))
    if not m:
        raise ValueError(f"not a version: {text!r}")
    return (int(m.group(1)), int(m.group(2) or 0))


def driver_branch(driver: str) -> int:
    """"580.95.05" -> 580; a bare branch ("580") is its own branch."""
    m = _DRIVER_OR_BRANCH.match(driver.strip())
    if not m:
        raise ValueError(f"not a driver version: {driver!r} (expected e.g. 580.95.05)")
    return int(m.group(1))


# -- loading and validation ---------------------------------------------------------------


def _load_json(name: str) -> dict:
    try:
        data = json.loads((HERE / name).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise TableError(name, f"cannot load: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != 1:
        raise TableError(name, "expected a JSON object with \"schema\": 1")
    return data


def _rows(name: str, data: dict, key: str) -> list[dict]:
    rows = data.get(key)
    if not isinstance(rows, list) or not rows:
        raise TableError(name, f"{key!r} must be a non-empty list")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise TableError(name, f"{key} entries must be objects", i)
    return rows


def _ver(name: str, row: dict, key: str, i: int) -> tuple[int, int]:
    value = row.get(key)
    if not isinstance(value, str) or not _VERSION.match(value):
        raise TableError(name, f"{key} must be a \"X.Y\" string, got {value!r}", i)
    return parse_version(value)


def parse_cuda_table(data: dict, name: str = "cuda.json") -> CudaTable:
    toolkits: list[Toolkit] = []
    for i, row in enumerate(_rows(name, data, "toolkits")):
        cuda, isa = _ver(name, row, "cuda", i), _ver(name, row, "ptx_isa", i)
        driver = row.get("min_driver")
        if driver is not None and (not isinstance(driver, str) or not _DRIVER.match(driver)):
            raise TableError(name, f"min_driver must be a driver version or null, got {driver!r}", i)
        if not isinstance(row.get("source"), str) or not row["source"]:
            raise TableError(name, "every toolkit row needs a source", i)
        if toolkits and cuda <= toolkits[-1].cuda:
            raise TableError(name, f"toolkits must be sorted and unique ({cuda} after "
                             f"{toolkits[-1].cuda})", i)
        if toolkits and isa < toolkits[-1].ptx_isa:
            raise TableError(name, f"PTX ISA {isa} goes backwards", i)
        toolkits.append(Toolkit(cuda, isa, driver, row["source"]))
    known = {t.cuda for t in toolkits}
    branches: list[DriverBranch] = []
    for i, row in enumerate(_rows(name, data, "driver_branches")):
        branch = row.get("branch")
        if not isinstance(branch, int) or not 100 <= branch <= 9999:
            raise TableError(name, f"branch must be an integer like 580, got {branch!r}", i)
        cuda = _ver(name, row, "cuda", i)
        if cuda not in known:
            raise TableError(name, f"driver branch {branch} maps to unknown CUDA {cuda}", i)
        if branches and (branch <= branches[-1].branch or cuda < branches[-1].cuda):
            raise TableError(name, "driver_branches must be sorted by branch and CUDA", i)
        branches.append(DriverBranch(branch, cuda))
    compat: list[tuple[int, int]] = []
    for i, row in enumerate(_rows(name, data, "minor_version_compat")):
        if not isinstance(row.get("major"), int) or not isinstance(row.get("min_branch"), int):
            raise TableError(name, "minor_version_compat rows need integer major and min_branch", i)
        compat.append((row["major"], row["min_branch"]))
    newest = data.get("newest_toolkit")
    if not isinstance(newest, str) or not _VERSION.match(newest):
        raise TableError(name, f"newest_toolkit must be \"X.Y\", got {newest!r}")
    if parse_version(newest) != toolkits[-1].cuda:
        raise TableError(name, f"newest_toolkit {newest} is not the last toolkit row "
                         f"({toolkits[-1].name})")
    return CudaTable(parse_version(newest), tuple(toolkits), tuple(branches), tuple(compat))


def parse_gpu_table(data: dict, name: str = "gpus.json") -> tuple[Gpu, ...]:
    out: list[Gpu] = []
    seen: dict[str, int] = {}
    for i, row in enumerate(_rows(name, data, "gpus")):
        gname = row.get("name")
        if not isinstance(gname, str) or not gname:
            raise TableError(name, "every GPU needs a name", i)
        cc = _ver(name, row, "cc", i)
        platform = row.get("platform")
        if platform not in PLATFORMS:
            raise TableError(name, f"platform must be one of {PLATFORMS}, got {platform!r}", i)
        aliases = row.get("aliases")
        if not isinstance(aliases, list) or not all(isinstance(a, str) and a for a in aliases):
            raise TableError(name, "aliases must be a list of strings", i)
        for key in (gname, *aliases):
            norm = normalize_gpu_name(key)
            if seen.get(norm, i) != i:
                raise TableError(name, f"name {key!r} also belongs to row {seen[norm]}", i)
            seen[norm] = i
        out.append(Gpu(gname, cc, platform, tuple(aliases), str(row.get("description", ""))))
    return tuple(out)


@lru_cache(maxsize=None)
def cuda_table() -> CudaTable:
    return parse_cuda_table(_load_json("cuda.json"))


@lru_cache(maxsize=None)
def gpu_table() -> tuple[Gpu, ...]:
    return parse_gpu_table(_load_json("gpus.json"))


# -- lookups ------------------------------------------------------------------------------


def normalize_gpu_name(name: str) -> str:
    """"NVIDIA GeForce RTX 5090" -> "rtx5090"; "Jetson-Orin" -> "jetsonorin"."""
    s = name.lower()
    for word in ("nvidia", "geforce"):
        s = s.replace(word, "")
    return re.sub(r"[\s_\-]+", "", s)


@lru_cache(maxsize=None)
def _gpu_index() -> dict[str, Gpu]:
    index: dict[str, Gpu] = {}
    for gpu in gpu_table():
        for key in (gpu.name, *gpu.aliases):
            index[normalize_gpu_name(key)] = gpu
    return index


def lookup_gpu(name: str) -> Gpu | None:
    """A GPU by name or alias, case and punctuation ignored; None when unknown."""
    return _gpu_index().get(normalize_gpu_name(name))


def toolkit(cuda: str | int | tuple[int, int]) -> Toolkit | None:
    want = parse_version(cuda)
    return next((t for t in cuda_table().toolkits if t.cuda == want), None)


def ptx_isa_for_cuda(cuda: str | int | tuple[int, int]) -> tuple[int, int] | None:
    """The PTX ISA a toolkit emits, which is also the newest a driver of that CUDA version JITs."""
    t = toolkit(cuda)
    return t.ptx_isa if t else None


def min_driver_for_cuda(cuda: str | int | tuple[int, int]) -> str | None:
    t = toolkit(cuda)
    return t.min_driver if t else None


def driver_floor(cuda: str | int | tuple[int, int]) -> str | None:
    """The minimum driver for a CUDA version, else for its major's GA release (a CUDA 13.x build
    runs on any 13.0 driver through minor-version compatibility)."""
    want = parse_version(cuda)
    return min_driver_for_cuda(want) or min_driver_for_cuda((want[0], 0))


def cuda_for_driver(driver: str) -> tuple[int, int] | None:
    """The CUDA version a driver supports, from its branch ("580.95.05" -> (13, 0)).

    A branch between two known ones maps to the older; below the oldest known gives None.
    """
    branch = driver_branch(driver)
    best = None
    for row in cuda_table().driver_branches:
        if row.branch <= branch:
            best = row.cuda
    return best


def driver_ptx_isa(driver: str) -> tuple[int, int] | None:
    """Newest PTX ISA a driver can JIT ("580.95.05" -> (9, 0))."""
    cuda = cuda_for_driver(driver)
    return ptx_isa_for_cuda(cuda) if cuda else None


def min_cuda_for_ptx_isa(isa: str | tuple[int, int]) -> tuple[int, int] | None:
    """Oldest CUDA version whose driver JITs PTX of this ISA ((9, 3) -> (13, 3))."""
    want = parse_version(isa)
    return next((t.cuda for t in cuda_table().toolkits if t.ptx_isa >= want), None)
