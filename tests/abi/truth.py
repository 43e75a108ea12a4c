"""The truth table's ground truth: really load each (torchvision, torch) pair.

One throwaway venv per pair (tests/envfactory.real_env: `uv venv` + `uv pip install --offline
--no-deps` of the real wheel files, cached between runs), then, in that venv's interpreter,
`import torch` followed by `ctypes.CDLL` of every torchvision extension module: the dynamic
loader's own answer (RTLD_NOW, as Python's import uses), error text included.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests import envfactory as ef

PYPI = Path("/opt/pypi/files")
TORCH = {"2.14.1": ef.TORCH_CUDA, "2.13.0+cpu": ef.TORCH_CPU}
VISION = {v: ef.PYPI_MORE / f"torchvision-{v}-cp311-cp311-manylinux_2_28_x86_64.whl"
          for v in ("0.28.0", "0.29.0", "0.29.1")}
# What torch 2.14.1's Requires-Dist pulls in at runtime (cuda-toolkit[...] 13.0.3 and the cu13
# libraries), as the local indexes hold them; cuda-bindings and triton load no library torch links.
CUDA_WHEELS = sorted(p for p in ef.PYPI_MORE.glob("nvidia_*.whl")) + sorted(PYPI.glob("nvidia_cuda_runtime-*.whl"))
# torch's pure-Python requirements (and theirs), so that `import torch` runs.
PURE = ("typing_extensions", "filelock", "sympy", "networkx", "jinja2", "fsspec", "setuptools", "mpmath",
        "markupsafe")


def _newest(name: str) -> Path | None:
    from packaging.utils import parse_wheel_filename

    found = [p for d in (PYPI, ef.PYPI_MORE) for p in d.glob(f"{name}-*.whl")]
    return max(found, key=lambda p: parse_wheel_filename(p.name)[1], default=None)


PURE_WHEELS = [w for w in map(_newest, PURE) if w is not None]

PROBE = r"""
import ctypes, glob, json, os, sys
out = {}
try:
    import torch
    out["torch"] = torch.__version__
except Exception as e:
    out["torch_error"] = f"{type(e).__name__}: {e}"
site = sys.argv[1]
for so in sorted(glob.glob(os.path.join(site, "torchvision", "*.so"))):
    try:
        ctypes.CDLL(so)
        out[os.path.relpath(so, site)] = None
    except OSError as e:
        out[os.path.relpath(so, site)] = str(e)
print(json.dumps(out))
"""


def wheels_for(torch: str, vision: str) -> list[Path]:
    cuda = CUDA_WHEELS if torch == "2.14.1" else []
    return [TORCH[torch], VISION[vision], *cuda, *PURE_WHEELS]


def load_pair(cache_root: Path, torch: str, vision: str) -> dict:
    """{"torch": version or "torch_error": ..., "torchvision/_C.so": None | "dlopen error"}."""
    prefix = ef.real_env(cache_root, f"abi-{torch}-{vision}", wheels_for(torch, vision))
    site = ef.site_packages(prefix)
    proc = subprocess.run([str(prefix / "bin" / "python"), "-c", PROBE, str(site)], capture_output=True,
                          text=True, timeout=600, env={"PATH": "/usr/bin:/bin", "HOME": "/tmp"})
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])
