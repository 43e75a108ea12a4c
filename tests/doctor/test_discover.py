"""`wheeldoc doctor` reads the environment the user means, on real uv venvs, and says which on the
first line: --python, --site-packages (a folder or a venv root), the active VIRTUAL_ENV, ./.venv,
the running interpreter; never wheeldoc's own tool environment; an empty one is an input error."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, Result
from tests.wheelfactory import build_wheel

UV = shutil.which("uv") or "uv"


def _venv(prefix: Path, wheels: list[Path]) -> Path:
    subprocess.run([UV, "venv", "-q", "-p", sys.executable, str(prefix)], check=True, capture_output=True,
                   timeout=300)
    if wheels:
        subprocess.run([UV, "pip", "install", "-q", "--offline", "--no-deps", "-p", str(prefix / "bin" / "python"),
                        *map(str, wheels)], check=True, capture_output=True, timeout=300,
                       env={**os.environ, "UV_NO_CONFIG": "1"})
    return prefix


@pytest.fixture(scope="module")
def envs(tmp_path_factory):
    """proj/.venv holds `demo 1.0`; other/ holds `other-pkg 2.0`; bare/ holds nothing."""
    root = tmp_path_factory.mktemp("discover")
    dist = root / "dist"
    demo = build_wheel(dist, "demo", "1.0")
    other = build_wheel(dist, "other-pkg", "2.0")
    proj = root / "proj"
    proj.mkdir()
    _venv(proj / ".venv", [demo])
    _venv(root / "other", [other])
    _venv(root / "bare", [])
    (root / "elsewhere").mkdir()
    return root


def wheeldoc(*argv: str, cwd: Path, virtual_env: str | None = None, exe: list[str] | None = None) -> Result:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "WHEELDOC_DEBUG")}
    env["PYTHONPATH"] = str(ROOT) if exe is None else ""
    if virtual_env is not None:
        env["VIRTUAL_ENV"] = virtual_env
    proc = subprocess.run([*(exe or [sys.executable, "-m", "wheeldoc"]), *argv], cwd=cwd, capture_output=True,
                          text=True, timeout=300, env=env)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def site_packages(prefix: Path) -> str:
    (found,) = prefix.glob("lib/python*/site-packages")
    return str(found)


def first_line_and_json(*argv: str, **kw) -> tuple[str, dict]:
    text = wheeldoc("doctor", *argv, "--driver", "none", **kw)
    doc = json.loads(wheeldoc("doctor", *argv, "--driver", "none", "--format", "json", **kw).out)
    assert text.code == 0, text.err
    return text.out.splitlines()[0], doc["environment"]


def test_dot_venv_in_the_working_directory(envs):
    line, env = first_line_and_json(cwd=envs / "proj")
    assert site_packages(envs / "proj" / ".venv") in line and "read because: ./.venv" in line
    assert env["chosen_by"] == "./.venv" and env["distributions"] == 1
    assert env["prefix"] == str(envs / "proj" / ".venv")


def test_the_active_virtual_env_wins_over_dot_venv(envs):
    line, env = first_line_and_json(cwd=envs / "proj", virtual_env=str(envs / "other"))
    assert site_packages(envs / "other") in line and "read because: the active VIRTUAL_ENV" in line
    assert env["chosen_by"] == "the active VIRTUAL_ENV" and env["site_packages"] == [site_packages(envs / "other")]


def test_python_flag_wins_over_everything(envs):
    line, env = first_line_and_json("--python", str(envs / "other" / "bin" / "python"), cwd=envs / "proj",
                                    virtual_env=str(envs / "proj" / ".venv"))
    assert site_packages(envs / "other") in line and env["chosen_by"] == "--python"


def test_a_venv_root_given_as_site_packages_is_resolved(envs):
    line, env = first_line_and_json("--site-packages", str(envs / "proj" / ".venv"), cwd=envs / "elsewhere")
    assert site_packages(envs / "proj" / ".venv") in line
    assert env["site_packages"] == [site_packages(envs / "proj" / ".venv")] and env["distributions"] == 1
    assert env["chosen_by"].startswith("--site-packages (a prefix")


@pytest.mark.parametrize("how", ["empty folder", "bare venv root", "bare venv active"])
def test_no_distributions_is_an_input_error(envs, how):
    argv, kw = {
        "empty folder": (("--site-packages", str(envs / "elsewhere")), {}),
        "bare venv root": (("--site-packages", str(envs / "bare")), {}),
        "bare venv active": ((), {"virtual_env": str(envs / "bare")}),
    }[how]
    res = wheeldoc("doctor", *argv, "--driver", "none", cwd=envs / "elsewhere", **kw)
    assert res.code == 2 and "HEALTHY" not in res.out and "Traceback" not in res.err
    assert "no distributions (*.dist-info) found" in res.err


def test_a_stale_virtual_env_is_an_input_error(envs):
    res = wheeldoc("doctor", "--driver", "none", cwd=envs / "elsewhere", virtual_env=str(envs / "gone"))
    assert res.code == 2 and "VIRTUAL_ENV names no folder" in res.err


@pytest.mark.slow
def test_installed_as_a_uv_tool_it_reads_the_users_environment(envs, tmp_path):
    """`uv tool install` of this tree: the tool's own venv is never the answer."""
    tools, bin_dir = tmp_path / "tools", tmp_path / "bin"
    subprocess.run([UV, "tool", "install", "-q", str(ROOT)], check=True, capture_output=True, timeout=600,
                   env={**os.environ, "UV_TOOL_DIR": str(tools), "UV_TOOL_BIN_DIR": str(bin_dir)})
    tool = [str(bin_dir / "wheeldoc")]
    assert (tools / "wheeldoc" / "uv-receipt.toml").is_file()
    line, env = first_line_and_json(cwd=envs / "elsewhere", virtual_env=str(envs / "other"), exe=tool)
    assert env["chosen_by"] == "the active VIRTUAL_ENV" and site_packages(envs / "other") in line
    line, env = first_line_and_json(cwd=envs / "proj", exe=tool)
    assert env["chosen_by"] == "./.venv" and env["distributions"] == 1
    res = wheeldoc("doctor", "--driver", "none", cwd=envs / "elsewhere", exe=tool)
    assert res.code == 2 and "wheeldoc's own uv tool environment" in res.err and "HEALTHY" not in res.out
