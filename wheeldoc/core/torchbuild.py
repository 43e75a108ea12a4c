"""What build of a torch-family package, or which CUDA major of a CUDA library package, a name and
version stand for. Shared by the lockfile rules and the environment doctor.

- torch-style local tags: `+cu130` (CUDA 13.0), `+cpu` / `+cpu.cxx11.abi`, `+rocm6.4`, `+xpu`.
  Other local tags (PyG's `+pt24cu121`) are not torch variants and are left alone.
- a torch from PyPI (no local tag) is a CUDA build on Linux x86_64; elsewhere it is a CPU build
  unless its resolved dependencies carry CUDA runtime packages for that platform.
- CUDA library packages: `-cu12` / `-cu13` suffixes, `cupy-cuda12x`, `jax-cuda13-plugin`, and the
  unsuffixed CUDA 13 names (`nvidia-cublas 13.x`, `cuda-toolkit 13.0.3`) through `torch.json`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from wheeldoc.data.torch import torch_table

Kind = Literal["cuda", "cpu", "rocm", "xpu", "unknown"]

_CU = re.compile(r"^cu(\d{2,3})$")
_INDEX_VARIANT = re.compile(r"/whl/(?:nightly/|test/)?(cpu|cu\d{2,3}|rocm[\d.]+|xpu)(?:/|$)")
_SUFFIX = re.compile(r"-cu(\d{2})$|^cupy-cuda(\d{2})x$|^jax-cuda(\d{2})-|^jaxlib-cuda(\d{2})")


@dataclass(frozen=True)
class Build:
    kind: Kind
    cuda: tuple[int, int] | None = None  # (13, 0) for cu130; major only known -> (13, -1)
    reason: str = ""

    @property
    def label(self) -> str:
        if self.kind == "cuda" and self.cuda:
            return f"CUDA {self.cuda[0]}" + (f".{self.cuda[1]}" if self.cuda[1] >= 0 else "")
        return {"cuda": "CUDA", "cpu": "CPU-only", "rocm": "ROCm", "xpu": "XPU", "unknown": "unknown"}[self.kind]


def variant_cuda(variant: str) -> tuple[int, int] | None:
    m = _CU.match(variant)
    if not m:
        return None
    digits = m[1]
    return (int(digits[:-1]), int(digits[-1]))


def cuda_variant(cuda: tuple[int, int]) -> str:
    return f"cu{cuda[0]}{cuda[1]}"


def classify_local(local: str | None) -> Build | None:
    """The build a torch-style local tag names; None for no tag or a non-torch tag."""
    if not local:
        return None
    tag = local.lower()
    if c := variant_cuda(tag):
        return Build("cuda", c, f"local version tag +{local}")
    if tag == "cpu" or tag.startswith("cpu."):
        return Build("cpu", None, f"local version tag +{local}")
    if re.match(r"^rocm[\d.]+$", tag):
        return Build("rocm", None, f"local version tag +{local}")
    if tag == "xpu":
        return Build("xpu", None, f"local version tag +{local}")
    return None


def classify_index(url: str | None) -> Build | None:
    if not url:
        return None
    m = _INDEX_VARIANT.search(url.rstrip("/") + "/")
    if not m:
        return None
    v = m[1]
    if c := variant_cuda(v):
        return Build("cuda", c, f"index {url}")
    kind: Kind = "cpu" if v == "cpu" else "xpu" if v == "xpu" else "rocm"
    return Build(kind, None, f"index {url}")


def library_cuda_major(name: str, version: str) -> int | None:
    """The CUDA major a CUDA library package belongs to, or None if it is not one."""
    m = _SUFFIX.search(name)
    if m:
        return int(next(g for g in m.groups() if g))
    first = torch_table().first_cu13.get(name)
    if first is None:
        return None
    return 13 if _vtuple(version) >= _vtuple(first) else 12


def is_cuda_library(name: str) -> bool:
    return (name.startswith("nvidia-") and name not in ("nvidia-ml-py",)) or name in torch_table().first_cu13 \
        or bool(_SUFFIX.search(name))


def _vtuple(v: str) -> tuple[int, ...]:
    out = []
    for part in v.split("+")[0].split("."):
        m = re.match(r"\d+", part)
        if not m:
            break
        out.append(int(m[0]))
    return tuple(out)
