"""Conflicts declared only within each pair of extras (`cu12`/`cu13`, `lib-cu12`/`lib-cu13`),
locked by the real `uv lock` over tiny local wheels (offline, a second or two): uv really
installs the cross combination `cu12 + lib-cu13` (the real `uv export` shows it), so wheeldoc's
warning that the project leaves it undeclared states a fact; the fix it prints, applied and
re-locked, makes uv refuse the combination and the warning goes. A defect that one extra has on
its own (`lib-cu12` beside the default CUDA 13 torch) stays an error that names that extra.

The project has the shape of NVIDIA/physicsnemo's (torch in the base dependencies, from a CUDA
index per `cu12`/`cu13` extra and from the default index otherwise), with made-up packages."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.lockfile.test_uv_environments import _exported, _uv
from tests.wheelfactory import build_wheel, write_simple_index
from wheeldoc.lockfile.resolve import uv_binary

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]
X86 = "manylinux_2_28_x86_64"


def _project(tmp: Path) -> Path:
    w = tmp / "wheels"
    base = [
        build_wheel(w / "base", "tinydep", "1.0"),
        build_wheel(w / "base", "demo-runtime-cu12", "12.8.1", platform=X86),  # CUDA libraries by their names
        build_wheel(w / "base", "demo-runtime-cu13", "13.0.2", platform=X86),
        build_wheel(w / "base", "cupy-cuda12x", "13.6.0", platform=X86),
        build_wheel(w / "base", "cupy-cuda13x", "13.6.0", platform=X86),
        # the default torch, like PyPI's 2.12: a CUDA 13 build without a local tag
        build_wheel(w / "base", "torch", "2.11.0", platform=X86, requires=["demo-runtime-cu13==13.0.2"]),
    ]
    cu128 = [build_wheel(w / "cu128", "torch", "2.11.0+cu128", platform=X86, requires=["demo-runtime-cu12==12.8.1"])]
    cu130 = [build_wheel(w / "cu130", "torch", "2.11.0+cu130", platform=X86, requires=["demo-runtime-cu13==13.0.2"])]
    urls = {name: write_simple_index(tmp / "whl" / name, wheels, simple_dir="")
            for name, wheels in (("base", base), ("cu128", cu128), ("cu130", cu130))}
    proj = tmp / "cross"
    proj.mkdir()
    (proj / "pyproject.toml").write_text(f"""\
[project]
name = "cross"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["torch==2.11.0", "tinydep"]

[project.optional-dependencies]
cu12 = ["torch==2.11.0"]
cu13 = ["torch==2.11.0"]
lib-cu12 = ["cupy-cuda12x"]
lib-cu13 = ["cupy-cuda13x"]

[tool.uv]
conflicts = [
    [{{ extra = "cu12" }}, {{ extra = "cu13" }}],
    [{{ extra = "lib-cu12" }}, {{ extra = "lib-cu13" }}],
]
environments = ["sys_platform == 'linux' and platform_machine == 'x86_64'"]
package = false

[tool.uv.sources]
torch = [{{ index = "torch-cu128", extra = "cu12" }}, {{ index = "torch-cu130", extra = "cu13" }}]

[[tool.uv.index]]
name = "base"
url = "{urls['base']}"
default = true

[[tool.uv.index]]
name = "torch-cu128"
url = "{urls['cu128']}"
explicit = true

[[tool.uv.index]]
name = "torch-cu130"
url = "{urls['cu130']}"
explicit = true
""")
    return proj


def _export_rc(proj: Path, *flags: str) -> tuple[int, str]:
    env = dict(os.environ, UV_OFFLINE="1", UV_PYTHON_DOWNLOADS="never", UV_CACHE_DIR=str(proj.parent / "uv-cache"))
    proc = subprocess.run([uv_binary(), "export", "--frozen", "--no-hashes", "--no-emit-project", *flags],
                          cwd=proj, capture_output=True, text=True, env=env, timeout=300)
    return proc.returncode, proc.stderr


def _check(lock: Path) -> list[dict]:
    proc = subprocess.run([sys.executable, "-m", "wheeldoc", "check", str(lock), "--platform", "linux-x86_64",
                           "--format", "json", "--fail-on", "never"], capture_output=True, text=True,
                          cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.returncode == 0, proc.stderr
    return [f for f in json.loads(proc.stdout)["findings"] if f["rule"] == "WD102"]


def test_cross_combination_is_one_warning_and_the_fix_really_works(tmp_path):
    proj = _project(tmp_path)
    _uv(proj, "lock")

    # what the real uv installs: each pair is exclusive, the cross combinations are not
    assert {"torch==2.11.0+cu128", "cupy-cuda13x==13.6.0"} <= _exported(proj, "--extra", "cu12", "--extra", "lib-cu13")
    assert {"torch==2.11.0+cu130", "cupy-cuda12x==13.6.0"} <= _exported(proj, "--extra", "cu13", "--extra", "lib-cu12")
    assert {"torch==2.11.0", "cupy-cuda12x==13.6.0"} <= _exported(proj, "--extra", "lib-cu12")  # the default torch
    assert {"torch==2.11.0", "cupy-cuda13x==13.6.0"} <= _exported(proj, "--extra", "lib-cu13")
    rc, err = _export_rc(proj, "--extra", "cu12", "--extra", "cu13")
    assert rc != 0 and "conflicts" in err

    found = _check(proj / "uv.lock")
    by_pkg = {f["data"]["packages"][0]: f for f in found}
    assert sorted(by_pkg) == ["cupy-cuda12x", "cupy-cuda13x"] and len(found) == 2

    # cupy-cuda13x beside the cu128 torch: only cu12 + lib-cu13 together -> one warning naming both
    cross = by_pkg["cupy-cuda13x"]
    assert cross["severity"] == "warning"
    assert cross["data"]["combinations"] == [["extra cu12", "extra lib-cu13"]]
    assert "extra cu12 + extra lib-cu13" in cross["message"] and "undeclared" in cross["message"]
    assert "uv sync --extra cu12 --extra lib-cu13" in cross["message"]
    assert '[{ extra = "cu12" }, { extra = "lib-cu13" }],' in cross["fix"]["text"]

    # cupy-cuda12x: lib-cu12 alone already sits beside the default CUDA 13 torch -> an error, naming it
    alone = by_pkg["cupy-cuda12x"]
    assert alone["severity"] == "error" and alone["data"]["alone_in"] == ["extra lib-cu12"]
    assert any(e.startswith("extra lib-cu12 alone has it (`uv sync --extra lib-cu12`): torch 2.11.0 is a CUDA 13")
               for e in alone["evidence"])

    # apply the printed fix, re-lock with the real uv: the combination is refused, the warning gone
    entry = re.search(r"^\s*(\[\{.*\}\]),$", cross["fix"]["text"], re.M).group(1)
    text = (proj / "pyproject.toml").read_text()
    (proj / "pyproject.toml").write_text(text.replace('    [{ extra = "lib-cu12" }, { extra = "lib-cu13" }],\n',
                                                      '    [{ extra = "lib-cu12" }, { extra = "lib-cu13" }],\n'
                                                      f"    {entry},\n"))
    _uv(proj, "lock")
    rc, err = _export_rc(proj, "--extra", "cu12", "--extra", "lib-cu13")
    assert rc != 0 and "conflicts" in err
    after = _check(proj / "uv.lock")
    assert [f["data"]["packages"][0] for f in after] == ["cupy-cuda12x"]
    assert after[0]["severity"] == "error"
