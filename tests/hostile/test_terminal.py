"""Terminal injection: control characters planted in a file name, a Dockerfile ENV value, a
lockfile package name, a wheel's METADATA, a library's file name, an image's tag and ENV never reach stdout or
stderr raw in a text format (full, concise, github, full in colour, the kernels listing);
they arrive as visible escapes (`\\x1b`). JSON and SARIF keep them exact.

The inputs are built at test time from committed fixtures (tests/hostile/ holds no data).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from urllib.parse import unquote

import pytest

from tests.conftest import ROOT
from tests.render.test_render import sarif_validator

# OSC "set window title", BEL, "clear screen", C1 CSI, a right-to-left override, DEL
PAYLOAD = "\x1b]0;owned\x07\x1b[2J\x9b\u202e\x7f"
VISIBLE = "\\x1b]0;owned\\x07"  # what the payload's start must print as
# Every control character wheeldoc promises to escape (TAB and LF are the layout's own).
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
SGR = re.compile("\x1b\\[[0-9;]*m")  # our own colour codes (the payload holds none)

TEXT_FORMATS = [("--output-format", "full", "--color", "never"),
                ("--output-format", "full", "--color", "always"),
                ("--output-format", "concise"), ("--output-format", "github"),
                ("--output-format", "full", "--statistics"), ("--output-format", "concise", "-q")]


def _planted(tmp: Path) -> dict[str, tuple[str, ...]]:
    """Each case: the argv (after the verb's name) that meets the payload."""
    story = (ROOT / "fixtures/dockerfiles/rules/wd401-story.Dockerfile").read_text()
    named = tmp / f"Dockerfile.{PAYLOAD}name"
    named.write_text(story)
    env = tmp / "env-value" / "Dockerfile"
    env.parent.mkdir()
    env.write_text(story.replace("UV_HTTP_TIMEOUT=600", f"UV_HTTP_TIMEOUT=600{PAYLOAD}"))
    assert PAYLOAD in env.read_text()
    lock = tmp / "lock" / "uv.lock"
    lock.parent.mkdir()
    escaped = "".join(f"\\u{ord(c):04x}" if not c.isprintable() or c == "\u202e" else c for c in PAYLOAD)
    lock.write_text((ROOT / "fixtures/locks/cpu-torch/hit-uv-project-cpu-index/uv.lock").read_text()
                    .replace('"flashinfer-python"', f'"flashinfer-python{escaped}"'))
    req = tmp / "req" / "requirements.txt"
    req.parent.mkdir()
    req.write_text(f"evil{PAYLOAD}pkg==1.0\n")
    site = tmp / "env"
    shutil.copytree(ROOT / "fixtures/envs/mismatch", site, symlinks=True)
    sp = site / "lib/python3.12/site-packages"
    meta = sp / "vllm-0.11.0.dist-info/METADATA"
    meta.write_text(meta.read_text().replace("Name: vllm", f"Name: vllm{PAYLOAD}"))
    lib = tmp / "libs" / f"lib{PAYLOAD}.so"
    lib.parent.mkdir()
    shutil.copy(ROOT / "fixtures/kernels/libconcat.so", lib)
    from tests.imagefactory import config, layer, torch_files, write_docker_save

    image = write_docker_save(
        tmp / "image.tar", [layer(torch_files("opt/venv/lib/python3.12/site-packages", "2.13.0+cpu", None))],
        config(env=["PATH=/usr/bin", f"CUDA_HOME=/usr/local/cuda{PAYLOAD}"]), tags=(f"app:v1{PAYLOAD}",))
    return {
        "image tag and ENV": ("image", str(image)),
        "file name": ("check", str(named)),
        "ENV value": ("check", str(env)),
        "lockfile package name": ("check", str(lock)),
        "requirement line": ("check", str(req)),
        "missing file": ("check", str(tmp / f"no-such-{PAYLOAD}.lock")),
        "wheel METADATA": ("doctor", "--site-packages", str(sp), "--gpu", "h200", "--driver", "580.95.05"),
        "library file name": ("kernels", str(lib), "--gpu", "h200", "--driver", "580.95.05"),
        "library listing": ("kernels", str(lib), "--list"),
    }


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> dict[str, tuple[str, ...]]:
    return _planted(tmp_path_factory.mktemp("hostile"))


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    for name in ("NO_COLOR", "FORCE_COLOR", "COLUMNS"):
        monkeypatch.delenv(name, raising=False)


CASES = ["image tag and ENV", "file name", "ENV value", "lockfile package name", "requirement line", "missing file",
         "wheel METADATA", "library file name", "library listing"]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("fmt", TEXT_FORMATS, ids=lambda f: "-".join(a.strip("-") for a in f))
def test_no_raw_control_character_reaches_the_terminal(cli, planted, case, fmt):
    if case in ("library listing", "image tag and ENV") and "full" not in fmt:
        pytest.skip("tables and headers, not findings: only the full report prints them")
    res = cli(*planted[case], *fmt)
    assert res.code in (0, 1, 2)
    both = res.out + res.err
    leaks = sorted({f"{ord(c):#x}" for c in RAW.findall(SGR.sub("", both))})
    assert not leaks, f"raw control characters {leaks} in the output of {case}"
    if "--quiet" in fmt or "-q" in fmt or "--statistics" in fmt:
        return  # the planted text may not be printed at all
    assert VISIBLE.lower() in both.lower(), f"the payload of {case} never reached the output"


def _strings(doc) -> list[str]:
    if isinstance(doc, dict):
        return [s for k, v in doc.items() for s in [k, *_strings(v)]]
    if isinstance(doc, list):
        return [s for v in doc for s in _strings(v)]
    return [doc] if isinstance(doc, str) else []


@pytest.mark.parametrize("case", ["file name", "ENV value", "lockfile package name", "wheel METADATA",
                                  "image tag and ENV"])
def test_json_and_sarif_stay_exact(cli, planted, case):
    """The payload comes back from JSON and SARIF unchanged (the metadata name lower-cased, as
    every package name is; a SARIF URI percent-encoded, as URIs are), and the text on the wire
    holds no raw control character."""
    want = PAYLOAD.split("\x7f")[0]
    for fmt in ("json",) if case == "image tag and ENV" else ("json", "sarif"):  # no finding: SARIF says nothing
        res = cli(*planted[case], "--output-format", fmt)
        assert not RAW.search(res.out)  # json.dumps escaped them (\u001b)
        doc = json.loads(res.out)
        if fmt == "sarif":
            sarif_validator().validate(doc)
        texts = _strings(doc) + [unquote(t) for t in _strings(doc)]  # SARIF URIs are percent-encoded
        assert any(want in t or want.lower() in t for t in texts), (case, fmt)


def test_escape_controls_unit():
    from wheeldoc.core.terminal import escape_controls

    assert escape_controls("a\x1b[2Jb\tc\nd\x07\x9b\u202e\x7f") == "a\\x1b[2Jb\tc\nd\\x07\\x9b\\u202e\\x7f"
    assert escape_controls("path\twith\nbreaks", single_line=True) == "path\\x09with\\x0abreaks"
    plain = "nothing to do: é ü 中 ✓"
    assert escape_controls(plain) is plain


@pytest.mark.parametrize("fmt", ["full", "concise", "github"])
def test_a_file_name_that_is_not_utf8(cli, tmp_path, fmt):
    """Bytes 0x9b (an 8-bit CSI) and 0xff in a file name: printed as `\\x9b`, `\\xff`, never raw,
    on stdout and into an -o file (which used to fail to encode)."""
    import os

    name = tmp_path / os.fsdecode(b"Dockerfile.\x9b[2J\xff")
    name.write_text((ROOT / "fixtures/dockerfiles/rules/wd401-story.Dockerfile").read_text())
    res = cli("check", str(name), "--output-format", fmt)
    assert res.code == 1 and not RAW.search(res.out + res.err)
    assert "Dockerfile.\\x9b[2J\\xff" in res.out
    out = tmp_path / "report.txt"
    assert cli("check", str(name), "--output-format", fmt, "-o", str(out)).code == 1
    data = out.read_bytes()
    assert b"\x9b" not in data and b"Dockerfile.\\x9b[2J\\xff" in data
    assert json.loads(cli("check", str(name), "--output-format", "json").out)["findings"][0]["path"] == str(name)
