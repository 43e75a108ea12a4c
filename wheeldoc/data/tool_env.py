"""Which tool reads which environment variable, and the other facts the Dockerfile rules need.

The data lives in `tool_env.json` beside this file, each row naming its source. Loading
validates every row and raises `TableError` naming the row and the problem, so a malformed
edit fails at once (the test-suite loads it), never as a wrong answer later.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal, Mapping

from wheeldoc.data.tables import TableError

HERE = Path(__file__).resolve().parent
TOOLS = ("uv", "pip", "build")
WHEN = ("install", "pip-install", "sync", "source-build")
SEVERITIES = ("error", "warning", "info")
_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_FLAG = re.compile(r"^--[a-z][a-z0-9-]*$")
_PKG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_ARCH_ITEM = re.compile(r"^\d+\.\d+(?:\+PTX)?$")
_NGC = re.compile(r"^\d{2}\.\d{2}$")
_CUDA = re.compile(r"^\d+\.\d+$")

Tool = Literal["uv", "pip", "build"]
When = Literal["install", "pip-install", "sync", "source-build"]


@dataclass(frozen=True)
class ToolVar:
    """One environment variable a tool reads. `when` says which commands read it (see the
    JSON's comment), `network` that only installs reaching an index do; `flags` replace it
    on one command line; `same_as` are other names for the same setting."""

    name: str
    tool: Tool
    when: When
    network: bool
    severity: str
    flags: tuple[str, ...]
    same_as: tuple[str, ...]
    what: str
    source: str
    torch_only: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.same_as)


@dataclass(frozen=True)
class ToolEnv:
    variables: Mapping[str, ToolVar]
    sources: Mapping[str, str]
    torch_dependents: frozenset[str]
    cuda_extensions: frozenset[str]
    torch_arch_names: tuple[tuple[str, str], ...]  # in torch's replacement order
    ngc_pytorch: Mapping[str, tuple[int, int]]

    def for_tool(self, tool: str) -> tuple[ToolVar, ...]:
        return tuple(v for v in self.variables.values() if v.tool == tool)


def _fail(message: str, row: int | None = None) -> TableError:
    return TableError("tool_env.json", message, row)


def _str_list(row: dict, key: str, pattern: re.Pattern[str], i: int) -> tuple[str, ...]:
    value = row.get(key)
    if not isinstance(value, list) or not all(isinstance(v, str) and pattern.match(v) for v in value):
        raise _fail(f"{key} must be a list of strings matching {pattern.pattern}, got {value!r}", i)
    return tuple(value)


def parse_tool_env(data: dict) -> ToolEnv:
    if not isinstance(data, dict) or data.get("schema") != 1:
        raise _fail('expected a JSON object with "schema": 1')
    sources = data.get("sources")
    if not isinstance(sources, dict) or not all(isinstance(v, str) and v for v in sources.values()):
        raise _fail("sources must map keys to descriptions")
    rows = data.get("variables")
    if not isinstance(rows, list) or not rows:
        raise _fail("variables must be a non-empty list")
    out: dict[str, ToolVar] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            raise _fail("variables entries must be objects", i)
        name = row.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise _fail(f"bad variable name {name!r}", i)
        if name in out:
            raise _fail(f"{name} listed twice", i)
        for key, allowed in (("tool", TOOLS), ("when", WHEN), ("severity", SEVERITIES)):
            if row.get(key) not in allowed:
                raise _fail(f"{name}: {key} must be one of {allowed}, got {row.get(key)!r}", i)
        if row.get("source") not in sources:
            raise _fail(f"{name}: source {row.get('source')!r} is not a key of sources", i)
        if not isinstance(row.get("what"), str) or not row["what"]:
            raise _fail(f"{name}: 'what' must say what the variable does", i)
        if not isinstance(row.get("network"), bool):
            raise _fail(f"{name}: network must be true or false", i)
        flags = _str_list(row, "flags", _FLAG, i)
        same = _str_list(row, "same_as", _NAME, i)
        if name in same:
            raise _fail(f"{name}: same_as names itself", i)
        torch_only = row.get("torch_only", False)
        if not isinstance(torch_only, bool):
            raise _fail(f"{name}: torch_only must be true or false", i)
        out[name] = ToolVar(name, row["tool"], row["when"], row["network"], row["severity"], flags, same, row["what"],
                            row["source"], torch_only)
    for v in out.values():  # same_as must be symmetric between listed rows
        for other in v.same_as:
            if other in out and v.name not in out[other].same_as:
                raise _fail(f"{v.name} lists {other} in same_as but not the other way round")

    def names(key: str) -> frozenset[str]:
        block = data.get(key)
        if not isinstance(block, dict) or block.get("source") not in sources:
            raise _fail(f"{key} needs a source and names")
        return frozenset(_str_list(block, "names", _PKG, 0))

    arch = data.get("torch_arch_names")
    if not isinstance(arch, dict) or arch.get("source") not in sources or not isinstance(arch.get("names"), dict):
        raise _fail("torch_arch_names needs a source and a names object")
    arch_names = []
    for k, v in arch["names"].items():
        if not isinstance(v, str) or not all(_ARCH_ITEM.match(x) for x in v.split(";")):
            raise _fail(f"torch_arch_names: {k} maps to {v!r}, not an arch list")
        arch_names.append((k, v))
    ngc = data.get("ngc_pytorch")
    if not isinstance(ngc, dict) or ngc.get("source") not in sources or not isinstance(ngc.get("releases"), dict):
        raise _fail("ngc_pytorch needs a source and releases")
    releases = {}
    for k, v in ngc["releases"].items():
        if not _NGC.match(k) or not isinstance(v, str) or not _CUDA.match(v):
            raise _fail(f"ngc_pytorch: {k!r} -> {v!r} is not YY.MM -> X.Y")
        major, minor = v.split(".")
        releases[k] = (int(major), int(minor))
    return ToolEnv(out, dict(sources), names("torch_dependents"), names("cuda_extensions"),
                   tuple(arch_names), releases)


@lru_cache(maxsize=1)
def tool_env() -> ToolEnv:
    try:
        data = json.loads((HERE / "tool_env.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise _fail(f"cannot load: {exc}") from None
    return parse_tool_env(data)
