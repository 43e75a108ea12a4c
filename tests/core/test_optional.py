"""Optional dependencies (wheeldoc/core/optional.py): the base install works without uv, lz4,
zstandard and pyelftools; a feature that needs one says which extra installs it.

"Not installed" is simulated the way Python itself reports it: `sys.modules[name] = None`
makes `import name` raise ImportError (in-process), and a fresh interpreter started with the
same blocks runs the real CLI (subprocess). tests/verbs/test_install.py checks the same on a
real install of the built wheel.
"""

from __future__ import annotations

import ast
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from wheeldoc.core.errors import InputError
from wheeldoc.core.optional import MissingDependency, require
from wheeldoc.kernels import fatbin as F
from wheeldoc.lockfile.resolve import uv_binary

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "fixtures" / "kernels"
OPTIONAL = ("uv", "lz4", "zstandard", "elftools")


def _pyproject() -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _block(monkeypatch, *names: str) -> None:
    for name in names:
        for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            monkeypatch.delitem(sys.modules, mod)
        monkeypatch.setitem(sys.modules, name, None)


def test_base_dependencies_leave_the_heavy_packages_to_extras():
    project = _pyproject()["project"]
    base = {d.split(">")[0].split("=")[0].split(";")[0].strip().lower() for d in project["dependencies"]}
    assert base == {"packaging", "tomli", "cxxfilt"}, (
        "a runtime dependency changed: measure the footprint (scripts/measure_footprint.py, "
        "tests/verbs/test_install.py) and update docs/install.md")
    extras = project["optional-dependencies"]
    assert [d.split(">")[0] for d in extras["resolve"]] == ["uv"]
    assert sorted(d.split(">")[0] for d in extras["kernels"]) == ["lz4", "zstandard"]
    assert [d.split(">")[0] for d in extras["image"]] == ["zstandard"]
    dev = {d.split(">")[0].split(";")[0] for d in _pyproject()["dependency-groups"]["dev"]}
    assert {"uv", "lz4", "zstandard", "pyelftools"} <= dev  # the tests still use all four


def test_runtime_code_imports_optional_packages_only_lazily():
    """A module-level import of uv, lz4, zstandard or elftools would break the base install at
    import time; pyelftools is imported nowhere at all (it is the tests' oracle)."""
    for path in sorted((ROOT / "wheeldoc").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top != "elftools", f"{path}:{node.lineno} imports pyelftools"
                if top in OPTIONAL:
                    assert node.col_offset > 0, f"{path}:{node.lineno}: module-level import of {name}"


def test_require_imports_or_names_the_extra(monkeypatch):
    assert require("zlib", "testing", path="x").decompress  # a module that is there
    _block(monkeypatch, "zstandard")
    with pytest.raises(MissingDependency) as e:
        require("zstandard", "reading a zstd-compressed image layer", path="img.tar", extra="image")
    assert isinstance(e.value, InputError) and e.value.extra == "image"
    msg = e.value.one_line()
    assert msg.startswith("img.tar: reading a zstd-compressed image layer needs the `zstandard` package")
    assert "'wheeldoc[image]'" in msg


# -- uv: PATH first, then the `uv` package, else the `resolve` extra --------------------


def _fake_uv(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    exe = folder / "uv"
    exe.write_text("#!/bin/sh\necho 'uv 0.0.0-fake'\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_uv_on_path_comes_first(tmp_path, monkeypatch):
    exe = _fake_uv(tmp_path / "bin")
    monkeypatch.setenv("PATH", str(exe.parent))
    assert uv_binary() == str(exe)


def test_uv_package_is_the_fallback(tmp_path, monkeypatch):
    pytest.importorskip("uv")
    from uv import find_uv_bin

    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no uv on PATH
    assert uv_binary() == find_uv_bin()
    assert subprocess.run([uv_binary(), "--version"], capture_output=True, text=True).stdout.startswith("uv ")


def test_no_uv_names_the_resolve_extra(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    _block(monkeypatch, "uv")
    with pytest.raises(MissingDependency) as e:
        uv_binary()
    msg = e.value.one_line()
    assert "`--resolve` runs uv" in msg and "wheeldoc[resolve]" in msg and "docs.astral.sh/uv" in msg
    from wheeldoc.abi.fetch import uv_binary as abi_uv

    with pytest.raises(MissingDependency, match=r"resolving a torch requirement runs uv.*wheeldoc\[resolve\]"):
        abi_uv()


def test_check_resolve_without_uv_is_an_input_error(tmp_path, monkeypatch, cli):
    monkeypatch.setenv("PATH", str(tmp_path))
    _block(monkeypatch, "uv")
    res = cli("check", "--resolve", "fixtures/story/requirements.in")
    assert res.code == 2, res.out + res.err
    assert "wheeldoc[resolve]" in res.out + res.err
    assert "Traceback" not in res.out + res.err


# -- codecs: listing never needs them, decompressing names the `kernels` extra ----------


@pytest.mark.parametrize("name,codec", [("abi7-lz4.fatbin", "lz4"), ("comp-all.fatbin", "zstd")])
def test_missing_codec_only_stops_decompression(monkeypatch, name, codec):
    path = KERNELS / name
    fb = F.open_fatbin(path)
    compressed = [e for e in fb.entries if e.compression == codec]
    assert compressed, f"{name} holds no {codec} entry"
    _block(monkeypatch, "lz4", "zstandard")
    assert F.open_fatbin(path) == fb  # the headers read the same without any codec
    with pytest.raises(MissingDependency) as e:
        F.entry_image(path, compressed[0])
    msg = e.value.one_line()
    assert f"decompressing a {codec}-compressed {compressed[0].kind} entry" in msg
    assert "wheeldoc[kernels]" in msg and f"offset {compressed[0].payload_offset:#x}" in msg


def test_zstd_image_layer_without_zstandard_names_the_image_extra(tmp_path, monkeypatch):
    from tests import imagefactory as im
    from wheeldoc.image.reader import open_image

    lay = im.layer([im.file_("etc/hostname", b"box\n")])
    d = im.write_oci_layout(tmp_path / "oci", [lay], im.config([lay]), compression="zstd")
    _block(monkeypatch, "zstandard")
    with pytest.raises(MissingDependency, match=r"zstd-compressed image layer.*wheeldoc\[image\]"):
        open_image(d)


BLOCKER = ("import sys\n"
           "for n in %r: sys.modules[n] = None\n"
           "from wheeldoc.cli import main\n"
           "raise SystemExit(main(sys.argv[1:]))\n") % (OPTIONAL,)


def _base_install_cli(*argv: str, path: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": path}
    return subprocess.run([sys.executable, "-c", BLOCKER, *argv], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env=env)


@pytest.mark.parametrize("argv", [
    ("check", "fixtures/story"),
    ("kernels", "--list", "fixtures/kernels/comp-all.fatbin", "fixtures/kernels/abi7-lz4.fatbin",
     "fixtures/kernels/concat-mixed.fatbin"),
    ("kernels", "fixtures/kernels/comp-all.fatbin", "fixtures/kernels/abi7-lz4.fatbin", "--gpu", "h200",
     "--driver", "580.95.05", "--fail-on", "never"),
])
def test_the_base_install_runs_the_offline_verbs(tmp_path, argv):
    """The verbs that read local files never need an optional package (a fresh interpreter with
    uv, lz4, zstandard and elftools blocked, and no uv on PATH)."""
    res = _base_install_cli(*argv, path=str(tmp_path))
    assert res.returncode in (0, 1), res.stdout + res.stderr
    assert "Traceback" not in res.stderr and "wheeldoc[" not in res.stdout + res.stderr
