"""The real environments the doctor is proven on, built from real wheels (tests/envfactory.py).

- healthy: CUDA torch 2.14.1 + torchvision 0.29.1 + every CUDA 13 wheel torch's Requires-Dist
  names (through cuda-toolkit's extras), triton and torch's pure-Python requirements.
- broken: torch 2.13.0+cpu + the CUDA build of torchvision 0.28.0 (the story's trap 1).

Wheels are read in place from pip's local indexes (/opt/pypi/files, /opt/pypi-more/files,
/opt/wheels); one that is not there is fetched once with `pip download --no-deps` into the
pytest cache. When a wheel cannot be found the caller skips.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests import envfactory as ef

INDEXES = (Path("/opt/pypi/files"), ef.PYPI_MORE, ef.WHEELS)

CUDA_STACK = [
    ("torch", "2.14.1"), ("torchvision", "0.29.1"), ("cuda-toolkit", "13.0.3.0"),
    ("nvidia-cublas", "13.1.1.3"), ("nvidia-cuda-cupti", "13.0.85"), ("nvidia-cuda-nvrtc", "13.0.88"),
    ("nvidia-cuda-runtime", "13.0.96"), ("nvidia-cufft", "12.0.0.61"), ("nvidia-cufile", "1.15.1.6"),
    ("nvidia-curand", "10.4.0.35"), ("nvidia-cusolver", "12.0.4.66"), ("nvidia-cusparse", "12.6.3.3"),
    ("nvidia-nvjitlink", "13.4.92"), ("nvidia-nvtx", "13.0.85"), ("nvidia-cudnn-cu13", "9.24.0.43"),
    ("nvidia-cusparselt-cu13", "0.8.1"), ("nvidia-nccl-cu13", "2.30.7"), ("nvidia-nvshmem-cu13", "3.4.5"),
    ("triton", "3.8.0"), ("cuda-bindings", "13.5.0"), ("cuda-pathfinder", "1.8.3"),
]
PURE = [("filelock", "4.0.8"), ("typing-extensions", "4.16.0"), ("setuptools", "84.0.0"),
        ("sympy", "1.14.0"), ("mpmath", "1.3.0"), ("networkx", "3.6.1"), ("jinja2", "3.1.6"),
        ("markupsafe", "3.0.3"), ("fsspec", "2026.9.0"), ("numpy", "2.4.6"), ("pillow", "12.3.0")]
BROKEN = [("torch", "2.13.0+cpu"), ("torchvision", "0.28.0")]


def _matches(path: Path, name: str, version: str) -> bool:
    stem = name.replace("-", "_").lower()
    n, _, rest = path.name.lower().partition("-")
    return n == stem and rest.split("-", 1)[0] == version.lower() and path.suffix == ".whl"


def find_wheel(name: str, version: str, download_dir: Path | None = None) -> Path | None:
    """A cp311 / py3 manylinux x86_64 wheel of NAME==VERSION, local first, then fetched once."""
    dirs = [*INDEXES, *([download_dir] if download_dir else [])]
    for d in dirs:
        if not d.is_dir():
            continue
        found = sorted(p for p in d.glob(f"{name.replace('-', '_')}-*.whl") if _matches(p, name, version))
        found = [p for p in found if "cp311" in p.name or "py3" in p.name or "py2" in p.name]
        if found:
            return found[0]
    if download_dir is None:
        return None
    download_dir.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                           f"{name}=={version}", "-d", str(download_dir)],
                          capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode != 0:
        return None
    return find_wheel(name, version, None) or next(
        (p for p in download_dir.glob("*.whl") if _matches(p, name, version)), None)


def wheels(spec: list[tuple[str, str]], cache: Path) -> list[Path] | None:
    out = []
    for name, version in spec:
        w = find_wheel(name, version, cache / "downloaded-wheels")
        if w is None:
            return None
        out.append(w)
    return out


def healthy_env(cache: Path) -> Path | None:
    found = wheels(CUDA_STACK + PURE, cache)
    return None if found is None else ef.real_env(cache, "doctor-healthy", found)


def broken_env(cache: Path) -> Path | None:
    found = wheels(BROKEN, cache)
    return None if found is None else ef.real_env(cache, "cpu", found)
