"""Generators of inputs that nest deeper than a recursive parser goes, or carry numbers Python's
int() refuses (over 4,300 digits; Unicode digits such as '²' that str.isdigit() accepts)."""

from __future__ import annotations

import json
from pathlib import Path

from tests import imagefactory as im
from tests.hostile import bombs

DEPTH = 100_000
BIG = "9" * 5_000  # past sys.get_int_max_str_digits() (4,300)
SUPER = "²"


def nested_array(depth: int = DEPTH) -> str:
    return "[" * depth + "]" * depth


def nested_object_json(depth: int = DEPTH) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def uv_lock(extra: str) -> str:
    return ('version = 1\nrequires-python = ">=3.10"\n\n[[package]]\nname = "torch"\n'
            f'version = "2.11.0"\nsource = {{ registry = "https://pypi.org/simple" }}\n{extra}\n')


def pylock(extra: str) -> str:
    return ('lock-version = "1.0"\ncreated-by = "x"\n\n[[packages]]\nname = "torch"\n'
            f'version = "2.11.0"\n{extra}\n')


def pyproject_config(extra: str) -> str:
    return f'[project]\nname = "x"\nversion = "1"\n\n[tool.wheeldoc]\nselect = {extra}\n'


def site(dest: Path, *, direct_url: str | None = None, version_py: str | None = None,
         record: str | None = None, version: str = "2.11.0+cu130") -> Path:
    info = dest / f"torch-{version[:40]}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
    (info / "RECORD").write_text(record if record is not None else "torch/__init__.py,,\ntorch/version.py,,\n")
    (info / "INSTALLER").write_text("pip\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(direct_url)
    (dest / "torch").mkdir(exist_ok=True)
    (dest / "torch/__init__.py").write_text("")
    (dest / "torch/version.py").write_text(version_py if version_py is not None
                                           else "__version__ = '2.11.0+cu130'\ncuda = '13.0'\n")
    return dest


def image_with(dest: Path, *, config: bytes | None = None, manifest: bytes | None = None,
               index: bytes | None = None, tag: str = "app:latest") -> Path:
    """A `docker save` tarball whose config, manifest.json or index.json is replaced as given."""
    import io
    import tarfile

    layer = im.layer([im.file_("usr/bin/true", b"", 0o755)])
    path = im.write_docker_save(dest, [layer], im.config(), tags=(tag,))
    if config is None and manifest is None and index is None:
        return path
    src = tarfile.open(path)
    members = {m.name: src.extractfile(m).read() for m in src.getmembers() if m.isfile()}
    src.close()
    cfg_name = json.loads(members["manifest.json"])[0]["Config"]
    if config is not None:
        members[cfg_name] = config
    if manifest is not None:
        members["manifest.json"] = manifest
    if index is not None:
        members["index.json"] = index
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, data in members.items():
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            tf.addfile(ti, io.BytesIO(data))
    path.write_bytes(buf.getvalue())
    return path


def dockerfiles() -> dict[str, str]:
    deep_sub = "${A:-" * 10_000 + "x" + "}" * 10_000
    return {
        "run-json-nested": f"FROM python:3.12\nRUN {nested_array(30_000)}\n",  # under 65,535 bytes a line
        "cmd-json-nested": f"FROM python:3.12\nCMD {nested_array(30_000)}\n",
        "nested-default": f"FROM python:3.12\nENV B={deep_sub}\nRUN echo $B\n",
        "onbuild-chain": "FROM python:3.12\n" + "ONBUILD " * 8_000 + "RUN echo hi\n",
        "big-tag": f"FROM nvidia/cuda:{BIG}.0-runtime-ubuntu24.04\nRUN pip install torch\n",
        "super-tag": f"FROM nvidia/cuda:1{SUPER}.0.1-runtime-ubuntu24.04\nRUN pip install torch\n",
        "copy-from-big": f"FROM python:3.12 AS a\nFROM python:3.12\nCOPY --from={BIG} /x /y\n",
        "copy-from-super": f"FROM python:3.12 AS a\nFROM python:3.12\nCOPY --from={SUPER} /x /y\n",
        "big-arch-list": f"FROM python:3.12\nENV TORCH_CUDA_ARCH_LIST={BIG}.0\nRUN pip install --no-binary :all: flash-attn\n",
        "big-torch-pin": f"FROM python:3.12\nRUN pip install torch=={BIG}+cu{BIG}\n",
    }
