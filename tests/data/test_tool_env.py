"""tool_env.json: loads, every name is what the real tools read, malformed copies are refused."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from wheeldoc.data.tables import TableError
from wheeldoc.data.tool_env import parse_tool_env, tool_env

DATA = Path(__file__).resolve().parents[2] / "wheeldoc" / "data" / "tool_env.json"
TORCH_WHEEL = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")


def raw() -> dict:
    return json.loads(DATA.read_text())


def _uv() -> str:
    exe = Path(sys.executable).parent / "uv"
    return str(exe) if exe.exists() else (shutil.which("uv") or pytest.skip("uv not installed"))


def test_table_loads_and_covers_the_issue_list():
    t = tool_env()
    for name in ("UV_HTTP_TIMEOUT", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_EXTRA_INDEX_URL",
                 "UV_INDEX_STRATEGY", "UV_TORCH_BACKEND", "UV_LINK_MODE", "UV_HTTP_RETRIES",
                 "UV_CONCURRENT_DOWNLOADS", "UV_FIND_LINKS", "UV_COMPILE_BYTECODE", "UV_SYSTEM_PYTHON",
                 "UV_PYTHON", "UV_CACHE_DIR", "UV_NO_CACHE", "UV_PROJECT_ENVIRONMENT", "UV_OVERRIDE",
                 "UV_CONSTRAINT", "UV_NATIVE_TLS", "UV_INSECURE_HOST", "UV_KEYRING_PROVIDER", "UV_PRERELEASE",
                 "UV_NO_BUILD_ISOLATION", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_DEFAULT_TIMEOUT",
                 "PIP_TIMEOUT", "PIP_RETRIES", "PIP_FIND_LINKS", "PIP_CONSTRAINT", "PIP_NO_CACHE_DIR",
                 "PIP_TRUSTED_HOST", "PIP_PREFER_BINARY", "PIP_NO_BUILD_ISOLATION", "PIP_BREAK_SYSTEM_PACKAGES",
                 "TORCH_CUDA_ARCH_LIST", "CUDA_HOME", "CUDA_PATH", "MAX_JOBS", "NVCC_THREADS", "CMAKE_ARGS",
                 "CMAKE_CUDA_ARCHITECTURES", "FLASHINFER_CUDA_ARCH_LIST", "FLASH_ATTENTION_FORCE_BUILD",
                 "VLLM_TARGET_DEVICE"):
        assert name in t.variables, name
    assert t.variables["UV_HTTP_TIMEOUT"].network
    assert t.variables["UV_TORCH_BACKEND"].when == "pip-install" and t.variables["UV_TORCH_BACKEND"].torch_only
    assert set(t.variables["UV_INDEX_URL"].names) == {"UV_INDEX_URL", "UV_DEFAULT_INDEX"}
    assert {"torch", "vllm", "flashinfer-python", "flash-attn", "xformers"} <= t.torch_dependents
    assert dict(t.torch_arch_names)["Blackwell"] == "10.0;10.3;12.0;12.1+PTX"


def test_uv_names_are_read_by_the_real_uv():
    """Rows sourced from `uv help` carry that [env: NAME] annotation; every UV_* name is in the binary."""
    uv = _uv()
    helps = subprocess.run([uv, "help", "pip", "install"], capture_output=True, text=True).stdout + \
        subprocess.run([uv, "help", "sync"], capture_output=True, text=True).stdout
    annotated = set(re.findall(r"env:\s*`?(UV_[A-Z_]+)", helps))
    assert len(annotated) > 20
    binary = Path(uv).read_bytes()
    for v in tool_env().for_tool("uv"):
        if v.source == "uv-help":
            assert v.name in annotated, f"{v.name} has no [env: ...] annotation in `uv help`"
        assert v.name.encode() in binary, f"{v.name} is not in the uv binary"
        for flag in v.flags:
            if v.source == "uv-help" and flag not in ("--pre", "--native-tls", "--dev", "--only-dev"):
                assert flag in helps, f"{v.name}: flag {flag} not in `uv help`"


@pytest.mark.slow
def test_pip_names_map_to_real_pip_options():
    """pip reads PIP_<NAME> for the option --<name> (configuration.py); each must exist in pip."""
    from pip._internal.commands import create_command

    parser = create_command("install").parser
    for v in tool_env().for_tool("pip"):
        opt = "--" + v.name[4:].lower().replace("_", "-")
        assert parser.get_option(opt) is not None or parser.has_option(opt), f"{v.name}: pip has no {opt}"


def test_pip_timeout_alias_is_real():
    from pip._internal.commands import create_command

    parser = create_command("install").parser
    assert parser.get_option("--default-timeout").dest == parser.get_option("--timeout").dest


def test_torch_names_are_read_by_cpp_extension():
    if not TORCH_WHEEL.exists():
        pytest.skip("torch wheel not available")
    src = zipfile.ZipFile(TORCH_WHEEL).read("torch/utils/cpp_extension.py").decode()
    reads = set(re.findall(r"environ(?:\.get)?\(?\[?'([A-Z_]+)'", src))
    for v in tool_env().variables.values():
        if v.source == "torch-cpp-extension":
            assert v.name in reads, v.name
    for name, arches in tool_env().torch_arch_names:
        assert f"('{name}', '{arches}')" in src, name


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.update(schema=2), "schema"),
    (lambda d: d["variables"][0].update(tool="conda"), "tool must be one of"),
    (lambda d: d["variables"][0].update(when="always"), "when must be one of"),
    (lambda d: d["variables"][0].update(severity="fatal"), "severity"),
    (lambda d: d["variables"][0].update(source="nowhere"), "not a key of sources"),
    (lambda d: d["variables"][0].update(name="uv_http_timeout"), "bad variable name"),
    (lambda d: d["variables"][0].update(flags=["timeout"]), "flags must be"),
    (lambda d: d["variables"][0].update(network="yes"), "network must be"),
    (lambda d: d["variables"].append(copy.deepcopy(d["variables"][0])), "listed twice"),
    (lambda d: d["variables"][3].update(same_as=[]), "same_as"),
    (lambda d: d["torch_arch_names"]["names"].update(Rubin="13"), "not an arch list"),
    (lambda d: d["ngc_pytorch"]["releases"].update({"2512": "13.1"}), "YY.MM"),
    (lambda d: d["torch_dependents"].update(names=["Torch"]), "names must be"),
])
def test_malformed_copies_are_refused(mutate, message):
    d = raw()
    mutate(d)
    with pytest.raises(TableError, match=message):
        parse_tool_env(d)
