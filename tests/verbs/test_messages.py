"""Every verb over every fixture folder, in every format, for several targets: no message is built
from a missing value (no `None`, no double space where a value was left out, no `==+cu130`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

F = ROOT / "fixtures"
A = "fixtures/abi"
TARGETS = {
    "none": (),
    "gb10": ("--gpu", "gb10", "--driver", "580.95.05"),
    "h200-old-driver": ("--gpu", "h200", "--driver", "575"),
    "cuda-only-driver": ("--gpu", "rtx5090", "--driver", "12.8", "--platform", "linux-aarch64"),
}


def _dirs(*globs: str) -> list[str]:
    out = []
    for g in globs:
        out += sorted(p.relative_to(ROOT).as_posix() for p in ROOT.glob(g) if p.is_dir())
    return out


CHECK_INPUTS = _dirs("fixtures/locks/*/*", "fixtures/story", "fixtures/broken", "fixtures/broken/*",
                     "fixtures/dockerfiles", "fixtures/dockerfiles/*", "fixtures/fuzz-crashes/*") + [
    "dockerfiles", "fixtures/story/requirements.in"]
INVOCATIONS = (
    [("check", d) for d in CHECK_INPUTS]
    + [("kernels", "fixtures/kernels"), ("kernels", "fixtures/kernels", "--coverage"),
       ("kernels", "fixtures/kernels/broken"), ("kernels", f"{A}/wheels")]
    + [("abi", f"{A}/ext/{so}", f"{A}/wheels/fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl",
        "--no-index", "--find-links", f"{A}/wheels")
       for so in ("ext_cudart12.so", "ext_missing.so", "ext_oldabi.so", "_C.so")]
    + [("abi", f"{A}/wheels/ext-1.0-cp311-cp311-linux_x86_64.whl",
        f"{A}/wheels/fake_torch-2.11.0+cpu-cp311-cp311-linux_x86_64.whl", "--no-index", "--find-links", f"{A}/wheels")]
    + [("doctor", "--site-packages", f"{d}/lib/python3.12/site-packages") for d in _dirs("fixtures/envs/*")
       if (ROOT / d / "lib").is_dir()]
    + [("image", d) for d in _dirs("fixtures/images/*")]
)
# A Python value quoted as such is a fact, not a missing value.
QUOTED_NONE = re.compile(r"(cuda\s*(=|is)\s*None|version\.cuda\s*(=|is)\s*None|= None\b)")
MISSING = [
    (re.compile(r"\bNone\b"), "the word None"),
    (re.compile(r"\S  +\S"), "a double space inside a line"),
    (re.compile(r"==\+|[a-z]==(\s|$|,)|\bfor torch \.|torch  "), "a version left out"),
]


def _problems(text: str, where: str) -> list[str]:
    out = []
    for line in text.splitlines():
        probe = QUOTED_NONE.sub("", line.strip())
        for regex, what in MISSING:
            if regex.search(probe):
                out.append(f"{where}: {what}: {line.strip()[:200]}")
    return out


def _messages(doc: dict, fmt: str) -> list[str]:
    if fmt == "json":
        texts = []
        for f in doc.get("findings", []):
            texts += [f.get("message") or "", f.get("title") or "", *(f.get("evidence") or [])]
            fix = f.get("fix") or {}
            texts.append(fix.get("title") or "")
        return texts
    texts = []
    for run in doc.get("runs", []):
        for r in run.get("results", []):
            texts.append(r.get("message", {}).get("text", ""))
    return texts


@pytest.mark.parametrize("target", [t if t == "gb10" else pytest.param(t, marks=pytest.mark.slow)
                                    for t in TARGETS])  # one target on the fast path (every Python in .ci/run)
@pytest.mark.parametrize("argv", INVOCATIONS, ids=[" ".join(a)[:80] for a in INVOCATIONS])
def test_no_message_is_built_from_a_missing_value(cli, argv, target):
    problems = []
    for fmt in ("text", "json", "sarif"):
        res = cli(*argv, *TARGETS[target], "--format", fmt, "--fail-on", "never")
        assert res.code in (0, 2), (argv, fmt, res.err[-500:])
        assert "internal error" not in res.err
        if fmt == "text":  # the whole report (tables align with spaces: only the word None)
            problems += [p for p in _problems(res.out, fmt) if "the word None" in p]
        else:  # every message, title, evidence line and fix title, as the text report prints them
            for text in _messages(json.loads(res.out), fmt):
                problems += _problems(text, fmt)
    assert problems == [], "\n".join(dict.fromkeys(problems))
