"""Build REAL virtual environments from the real wheels on this machine, once, and reuse them.

    site = real_env(cache_root, "cuda", [TORCH_CUDA, TORCHVISION_0_29_1, ...])

`uv venv` + `uv pip install --offline --no-deps` of the given wheel files (read in place from
/opt/pypi-more/files and /opt/wheels). The venv lands in `cache_root/<label>-<hash of the wheel
names>`; a second call (or a second pytest process) finds it ready. Concurrent builders are
serialised with a file lock and the venv is built under a temporary name, then renamed.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

PYPI_MORE = Path("/opt/pypi-more/files")
WHEELS = Path("/opt/wheels")

TORCH_CUDA = PYPI_MORE / "torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl"
TORCH_CPU = WHEELS / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"
TORCHVISION_0_28_0 = PYPI_MORE / "torchvision-0.28.0-cp311-cp311-manylinux_2_28_x86_64.whl"
TORCHVISION_0_29_1 = PYPI_MORE / "torchvision-0.29.1-cp311-cp311-manylinux_2_28_x86_64.whl"
CUDA_TOOLKIT = PYPI_MORE / "cuda_toolkit-13.0.3.0-py2.py3-none-any.whl"
NVIDIA_NVTX = PYPI_MORE / "nvidia_nvtx-13.0.85-py3-none-manylinux1_x86_64.manylinux_2_5_x86_64.whl"
NVIDIA_CUPTI = PYPI_MORE / "nvidia_cuda_cupti-13.0.85-py3-none-manylinux_2_25_x86_64.whl"


def missing(wheels: list[Path]) -> list[Path]:
    return [w for w in wheels if not w.is_file()]


def real_env(cache_root: Path, label: str, wheels: list[Path]) -> Path:
    """The venv prefix holding exactly `wheels` (installed without dependencies)."""
    key = hashlib.sha256("\n".join(sorted(w.name for w in wheels)).encode()).hexdigest()[:12]
    cache_root.mkdir(parents=True, exist_ok=True)
    final = cache_root / f"{label}-{key}"
    if (final / ".complete").is_file():
        return final
    with open(cache_root / f".{label}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / ".complete").is_file():
            return final
        building = cache_root / f".{label}-{key}.building"
        shutil.rmtree(building, ignore_errors=True)
        shutil.rmtree(final, ignore_errors=True)
        uv = shutil.which("uv") or "uv"
        subprocess.run([uv, "venv", "-q", "-p", sys.executable, str(building)], check=True,
                       capture_output=True, timeout=300)
        py = building / "bin" / "python"
        subprocess.run([uv, "pip", "install", "-q", "--offline", "--no-deps",
                        "-p", str(py), *map(str, wheels)], check=True, capture_output=True, timeout=1200,
                       env={**os.environ, "UV_NO_CONFIG": "1"})
        os.rename(building, final)
        (final / ".complete").write_text("\n".join(w.name for w in wheels))
    return final


def site_packages(prefix: Path) -> Path:
    found = sorted(prefix.glob("lib/python3*/site-packages"))
    assert len(found) == 1, found
    return found[0]
