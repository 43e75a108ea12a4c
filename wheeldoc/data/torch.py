"""The torch table (`torch.json`): companion series, CUDA variants, CUDA package naming. Validated on load."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

_SERIES = re.compile(r"^\d+\.\d+$")
_VARIANT = re.compile(r"^cu\d{3}$")


@dataclass(frozen=True)
class TorchSeries:
    series: str  # "2.14"
    torchvision: str | None
    torchaudio: str | None
    triton: str | None
    cuda: tuple[str, ...]  # "cu128", "cu130", …
    pypi_cuda: tuple[tuple[str, int | None], ...] = ()
    """Per platform ("linux-x86_64"), the CUDA major of the CUDA packages PyPI's wheel of this
    series requires (None: it requires none, a CPU-only build); platforms not listed are unknown."""
    sources: tuple[tuple[str, str], ...] = ()
    experimental: tuple[str, ...] = ()  # those of `cuda` the release matrix lists as experimental CUDA

    def pypi_cuda_major(self, platform: str) -> tuple[bool, int | None]:
        """(known, major) for PyPI's wheel of this series on `platform`."""
        for p, m in self.pypi_cuda:
            if p == platform:
                return True, m
        return False, None


@dataclass(frozen=True)
class TorchTable:
    series: dict[str, TorchSeries]
    index: str
    first_cu13: dict[str, str]
    gpu_packages: frozenset[str]

    def index_url(self, variant: str) -> str:
        return self.index.format(variant=variant)


class TableError(ValueError):
    pass


@lru_cache(maxsize=1)
def torch_table() -> TorchTable:
    raw = json.loads(Path(__file__).with_name("torch.json").read_text("utf-8"))
    return validate(raw)


def validate(raw: dict) -> TorchTable:
    series: dict[str, TorchSeries] = {}
    for key, row in raw["series"].items():
        if not _SERIES.match(key):
            raise TableError(f"torch.json: bad series {key!r}")
        cuda = tuple(row.get("cuda", ()))
        bad = [v for v in cuda if not _VARIANT.match(v)]
        if bad:
            raise TableError(f"torch.json: series {key}: bad CUDA variants {bad}")
        for comp in ("torchvision", "torchaudio", "triton"):
            v = row.get(comp)
            if v is not None and not _SERIES.match(v):
                raise TableError(f"torch.json: series {key}: bad {comp} series {v!r}")
        sources = row.get("sources", {})
        for comp in ("torchvision", "torchaudio"):
            if row.get(comp) is not None and comp not in sources:
                raise TableError(f"torch.json: series {key}: {comp} {row[comp]} has no source wheel")
        pypi = row.get("pypi_cuda", {})
        for plat, major in pypi.items():
            if f"torch {plat}" not in sources:
                raise TableError(f"torch.json: series {key}: pypi_cuda for {plat} has no source wheel")
            if major is not None and not isinstance(major, int):
                raise TableError(f"torch.json: series {key}: bad CUDA major {major!r}")
        experimental = tuple(row.get("cuda_experimental", ()))
        if not set(experimental) <= set(cuda):
            raise TableError(f"torch.json: series {key}: experimental variants {experimental} not among {cuda}")
        series[key] = TorchSeries(key, row.get("torchvision"), row.get("torchaudio"), row.get("triton"), cuda,
                                  tuple(sorted(pypi.items())), tuple(sorted(sources.items())), experimental)
    if "{variant}" not in raw.get("index", ""):
        raise TableError("torch.json: index must contain {variant}")
    first = {k: v for k, v in raw["cuda_packages_first_cu13"].items() if not k.startswith("_")}
    return TorchTable(series, raw["index"], first, frozenset(raw["gpu_packages"]))


def series_of(version: str) -> str | None:
    m = re.match(r"^(\d+)\.(\d+)", version)
    return f"{m[1]}.{m[2]}" if m else None
