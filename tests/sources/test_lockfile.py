"""Tests for wheeldoc.sources.lockfile (uv.lock, pylock.toml, requirements files)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from wheeldoc.errors import InputError, LimitExceeded
from wheeldoc.sources.lockfile import find_lockfiles, load_lockfile

SMALL_UV_LOCK = textwrap.dedent(
    '''\
    version = 1
    revision = 3
    requires-python = ">=3.10"

    [[package]]
    name = "flashinfer-python"
    version = "0.5.0"
    source = { registry = "https://pypi.org/simple" }
    dependencies = [
        { name = "torch" },
    ]
    wheels = [
        { url = "https://example/flashinfer_python-0.5.0-py3-none-any.whl", hash = "sha256:00" },
    ]

    [[package]]
    name = "torch"
    version = "2.10.0+cpu"
    source = { registry = "https://download.pytorch.org/whl/cpu" }
    wheels = [
        { url = "https://download.pytorch.org/whl/cpu/torch-2.10.0%2Bcpu-cp311-cp311-manylinux_2_28_x86_64.whl", hash = "sha256:11" },
    ]
    '''
)


def test_uv_lock_small(tmp_path: Path) -> None:
    f = tmp_path / "uv.lock"
    f.write_text(SMALL_UV_LOCK)
    lf = load_lockfile(f)
    assert lf.format == "uv.lock"
    assert lf.requires_python == ">=3.10"
    (torch,) = lf.get("Torch")
    assert torch.version == "2.10.0+cpu" and torch.local == "cpu"
    assert torch.line == 16
    assert torch.index == "https://download.pytorch.org/whl/cpu"
    assert torch.pulled_in_by == ("flashinfer-python",)
    assert torch.hashes == 1
    (fi,) = lf.get("flashinfer_python")
    assert fi.line == 5 and [d.name for d in fi.dependencies] == ["torch"]


def test_truncated_toml_is_input_error(tmp_path: Path) -> None:
    f = tmp_path / "uv.lock"
    f.write_text(SMALL_UV_LOCK[: SMALL_UV_LOCK.index("wheels = [") + 14])
    with pytest.raises(InputError) as e:
        load_lockfile(f)
    assert e.value.line is not None and "invalid TOML" in e.value.message


def test_binary_garbage_is_input_error(tmp_path: Path) -> None:
    f = tmp_path / "uv.lock"
    f.write_bytes(b"version = 1\n\x00\xff\xfe garbage")
    with pytest.raises(InputError) as e:
        load_lockfile(f)
    assert e.value.line == 2


def test_oversized_lock_is_refused(tmp_path: Path) -> None:
    f = tmp_path / "uv.lock"
    f.write_text(SMALL_UV_LOCK)
    with pytest.raises(LimitExceeded):
        load_lockfile(f, max_bytes=100)


def test_find_lockfiles(tmp_path: Path) -> None:
    for n in ("uv.lock", "pylock.toml", "pylock.dev.toml", "requirements-gpu.txt", "README.txt", "x.py"):
        (tmp_path / n).write_text("")
    assert [p.name for p in find_lockfiles(tmp_path)] == [
        "pylock.dev.toml", "pylock.toml", "requirements-gpu.txt", "uv.lock",
    ]
