"""A universal uv.lock made by the real `uv lock`, with conflicting `cpu` / `cu130` extras over
tiny local wheels served as local indexes: each extra is judged on its own, findings name it,
and the environment wheeldoc evaluates is the one the real `uv export --extra X` installs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.wheelfactory import build_wheel, write_simple_index
from wheeldoc.core.target import marker_environment
from wheeldoc.lockfile.environments import environments
from wheeldoc.lockfile.resolve import uv_binary
from wheeldoc.lockfile.source import load_lockfile

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
X86 = "manylinux_2_28_x86_64"


def _project(tmp: Path) -> Path:
    w = tmp / "wheels"
    base = [
        build_wheel(w / "base", "tinydep", "1.0"),
        build_wheel(w / "base", "demo-runtime-cu13", "13.0.2", platform=X86),  # a CUDA 13 library by its name
        build_wheel(w / "base", "cupy-cuda12x", "13.6.0", platform=X86),
        build_wheel(w / "base", "raylike", "2.48.0", requires=["cupy-cuda12x>=13"]),
    ]
    cpu = [
        build_wheel(w / "cpu", "torch", "2.11.0+cpu", platform=X86, requires=["tinydep"]),
        build_wheel(w / "cpu", "torchvision", "0.26.0+cpu", platform=X86, requires=["torch==2.11.0"]),
    ]
    cu = [
        build_wheel(w / "cu130", "torch", "2.11.0+cu130", platform=X86,
                    requires=["tinydep", 'demo-runtime-cu13==13.0.2; sys_platform == "linux"']),
        build_wheel(w / "cu130", "torchvision", "0.26.0+cu130", platform=X86, requires=["torch==2.11.0"]),
    ]
    # laid out like the PyTorch index (…/whl/cpu, …/whl/cu130)
    urls = {name: write_simple_index(tmp / "whl" / name, wheels, simple_dir="")
            for name, wheels in (("base", base), ("cpu", cpu), ("cu130", cu))}
    proj = tmp / "demo"
    proj.mkdir()
    (proj / "pyproject.toml").write_text(f"""\
[project]
name = "demo"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["tinydep"]

[project.optional-dependencies]
cpu = ["torch==2.11.0", "torchvision==0.26.0"]
cu130 = ["torch==2.11.0", "torchvision==0.26.0", "raylike"]

[tool.uv]
conflicts = [[{{ extra = "cpu" }}, {{ extra = "cu130" }}]]
environments = ["sys_platform == 'linux' and platform_machine == 'x86_64'"]
package = false

[tool.uv.sources]
torch = [{{ index = "torch-cpu", extra = "cpu" }}, {{ index = "torch-cu130", extra = "cu130" }}]
torchvision = [{{ index = "torch-cpu", extra = "cpu" }}, {{ index = "torch-cu130", extra = "cu130" }}]

[[tool.uv.index]]
name = "base"
url = "{urls['base']}"
default = true

[[tool.uv.index]]
name = "torch-cpu"
url = "{urls['cpu']}"
explicit = true

[[tool.uv.index]]
name = "torch-cu130"
url = "{urls['cu130']}"
explicit = true
""")
    return proj


def _uv(proj: Path, *args: str) -> str:
    env = dict(os.environ, UV_OFFLINE="1", UV_PYTHON_DOWNLOADS="never",
               UV_CACHE_DIR=str(proj.parent / "uv-cache"))
    proc = subprocess.run([uv_binary(), *args], cwd=proj, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _exported(proj: Path, *flags: str) -> set[str]:
    """`uv export` for these flags, evaluated for Linux x86_64, as name==version."""
    from packaging.requirements import Requirement

    text = _uv(proj, "export", "--frozen", "--no-hashes", "--no-emit-project", "--no-header",
               "--format", "requirements-txt", *flags)
    env = marker_environment("linux-x86_64", "3.12")
    out = set()
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "-")):
            continue
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate(env):
            out.add(f"{req.name}=={str(req.specifier)[2:]}")
    return out


def test_real_uv_lock_per_extra(tmp_path):
    proj = _project(tmp_path)
    _uv(proj, "lock")
    lock_path = proj / "uv.lock"
    lock = load_lockfile(lock_path)
    assert lock.conflicts == ((("demo", "extra", "cpu"), ("demo", "extra", "cu130")),)

    envs = {e.name: e for e in environments(lock, marker_environment("linux-x86_64", "3.12"))}
    assert set(envs) == {"default", "extra cpu", "extra cu130"}
    for name, flags in (("default", ()), ("extra cpu", ("--extra", "cpu")), ("extra cu130", ("--extra", "cu130"))):
        mine = {f"{p.name}=={p.version}" for p in envs[name].packages if p.name != "demo"}
        assert mine == _exported(proj, *flags), name
    assert "torch==2.11.0+cpu" in {f"{p.name}=={p.version}" for p in envs["extra cpu"].packages}

    def check(*flags):
        proc = subprocess.run([sys.executable, "-m", "wheeldoc", "check", str(lock_path), "--platform", "linux-x86_64",
                               *flags, "--format", "json", "--fail-on", "never"], capture_output=True, text=True,
                              cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)))
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    report = check()
    by = {(f["rule"], f["severity"]): f for f in report["findings"]}
    # the CUDA 12 cupy that raylike pulls in sits beside the cu130 torch only in extra cu130
    mix = by[("WD102", "error")]
    assert mix["data"]["environments"] == ["extra cu130"] and "cupy-cuda12x" in mix["data"]["packages"]
    assert "extra cu130" in mix["message"]
    assert not any(f["rule"] == "WD101" for f in report["findings"])  # nothing in extra cpu asks for CUDA
    names = [e["name"] for e in report["environments"][0]["environments"]]
    assert names == ["default", "extra cpu", "extra cu130"]

    # With a GPU target, the CPU build is still the project's own extra: info naming it, never an error.
    report = check("--gpu", "h200")
    cpu = [f for f in report["findings"] if f["rule"] == "WD101"]
    assert cpu and all(f["severity"] == "info" and f["data"]["environments"] == ["extra cpu"]
                       and f["data"]["deliberate"] for f in cpu)
    assert "extra `cpu`" in cpu[0]["message"]
