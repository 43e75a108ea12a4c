"""Credentials never reach an output: index URLs with `user:token@`, tokens in ENV / ARG values and
image configs, in text, JSON and SARIF, on stdout, in `-o` files and in one-line errors; and WD401
never proposes copying a credential into another stage.

Generators build each input at test time around one secret; every verb that can meet the input
runs it in every format, and the secret must not appear anywhere in what comes back.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests import imagefactory as im
from tests.hostile.runner import REPO, wheeldoc
from wheeldoc.core.redact import has_secret, redact_data, redact_text

GPU = ("--gpu", "h200", "--driver", "580.95.05")
PASSWORD = "Tr0ub4dor-and-3-horses"  # a password, no token shape: only its place says it is one
GH = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
HF = "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNm1234"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
SECRETS = (PASSWORD, GH, HF, AWS, "alice")
CRED_URL = f"https://alice:{PASSWORD}@pypi.corp.example/simple"
FORMATS = ("text", "json", "sarif")
LOCKS = REPO / "fixtures/locks/mixed-cuda/hit-cu12-torch-cupy13"


def clean(text: str) -> None:
    for s in SECRETS:
        assert s not in text, f"secret {s!r} in output:\n{text[:3000]}"


def every_format(tmp: Path, *argv: str, codes=(0, 1)) -> list:
    runs = []
    for fmt in FORMATS:
        r = wheeldoc(tmp, *argv, "--format", fmt).check(*codes)
        clean(r.text)
        if fmt != "text" and r.out:
            json.loads(r.out)  # still valid JSON after redaction
        runs.append(r)
    out = tmp / "report.out"
    r = wheeldoc(tmp, *argv, "--format", "json", "-o", str(out)).check(*codes)
    clean(r.text + out.read_text())
    return runs


# -- the redactor itself ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    CRED_URL, f"--extra-index-url https://__token__:{GH}@gitlab.example/api/v4/simple",
    f"git+https://{GH}@github.com/org/repo", f"HF_TOKEN={HF}", f"ENV HF_TOKEN {HF}",
    f"AWS_ACCESS_KEY_ID={AWS}", "MY_API_TOKEN=0123456789abcdef0123456789abcdef",
    'PASSWORD="c2VjcmV0LXBhc3N3b3JkLWJhc2U2NA=="', "glpat-" + "x" * 20,
])
def test_redactor_masks_each_shape(text):
    assert has_secret(text)
    out = redact_text(text)
    assert "***" in out and out != text
    for s in (PASSWORD, GH, HF, AWS, "0123456789abcdef0123", "c2VjcmV0", "x" * 20):
        assert s not in out


@pytest.mark.parametrize("text", [
    "https://download.pytorch.org/whl/cu130", "UV_HTTP_TIMEOUT=600", "torch==2.11.0+cu130",
    "sha256:" + "ab" * 32, "TORCH_CUDA_ARCH_LIST=8.0;9.0+PTX", "git+https://github.com/org/repo@v1.2",
    "user@example.com",
])
def test_redactor_leaves_ordinary_text_alone(text):
    assert redact_text(text) == text


def test_redactor_over_json_keeps_structure():
    doc = {"env": {"HF_TOKEN": HF, "PATH": "/usr/bin"}, "url": CRED_URL, "n": 3}
    out = redact_data(doc)
    assert out == {"env": {"HF_TOKEN": "***", "PATH": "/usr/bin"},
                   "url": "https://***@pypi.corp.example/simple", "n": 3}


# -- Dockerfiles: ENV / ARG values, and WD401's fix -----------------------------------------------

DOCKERFILE = f"""\
FROM python:3.12-slim AS builder
ENV UV_INDEX_URL={CRED_URL}
ARG PIP_EXTRA_INDEX_URL=https://__token__:{GH}@gitlab.example/api/v4/simple
ENV HF_TOKEN={HF} AWS_ACCESS_KEY_ID={AWS}
RUN pip install torch && uv pip install --system torch

FROM python:3.12-slim AS runner
RUN uv pip install --system torch && pip install vllm
"""


def test_dockerfile_credentials_never_printed_and_wd401_never_copies_them(tmp_path):
    df = tmp_path / "Dockerfile"
    df.write_text(DOCKERFILE)
    runs = every_format(tmp_path, "check", str(df))
    report = json.loads(runs[1].out)
    wd401 = [f for f in report["findings"] if f["rule"] == "WD401" and f["data"]["variable"] == "UV_INDEX_URL"]
    assert wd401, "the generator must trigger WD401 on UV_INDEX_URL"
    fix = wd401[0]["fix"]
    assert fix["applicability"] != "safe" and not fix["edits"]
    assert "--mount=type=secret" in fix["title"]
    for d in (["--diff"], ["--fix"]):  # nothing to apply: the file keeps one copy of each secret
        r = wheeldoc(tmp_path, "check", str(df), *d).check(0, 1)
        clean(r.text)
    assert df.read_text() == DOCKERFILE


# -- lockfiles and requirements --------------------------------------------------------------------

def _credentialed_locks(tmp: Path) -> Path:
    dest = tmp / "locks"
    shutil.copytree(LOCKS, dest)
    for p in dest.iterdir():
        p.write_text(p.read_text().replace("/tmp/wheeldoc-fixtures/", f"https://alice:{PASSWORD}@"))
    req = dest / "requirements.uv-export.txt"
    req.write_text(f"--index-url {CRED_URL}\n--extra-index-url https://__token__:{GH}@gitlab.example/simple\n"
                   f"--find-links https://x:{HF}@files.example/wheels\n" + req.read_text())
    return dest


@pytest.mark.parametrize("name", ["uv.lock", "pylock.toml", "requirements.uv-export.txt"])
def test_lockfile_index_credentials_never_printed(tmp_path, name):
    locks = _credentialed_locks(tmp_path)
    assert PASSWORD in (locks / name).read_text()
    runs = every_format(tmp_path, "check", str(locks / name), *GPU)
    assert json.loads(runs[1].out)["findings"], "the lock must still be analyzed"


def test_index_flags_and_broken_lines_never_print_credentials(tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text(f"torch @ https://alice:{PASSWORD}@[broken/torch.whl\n")
    r = wheeldoc(tmp_path, "check", str(req)).check(1, 2)
    assert "requirements.txt" in r.err
    clean(r.text)
    req.write_text(f"--index-url {CRED_URL}\ntorch==2.11.0+cu130\n")
    every_format(tmp_path, "check", str(req), *GPU, "--extra-index-url", f"https://u:{GH}@x.example/simple")


# -- images: the config's ENV ----------------------------------------------------------------------

def test_image_config_env_never_printed(tmp_path):
    env = ["PATH=/usr/bin:/bin", f"UV_INDEX_URL={CRED_URL}", f"HF_TOKEN={HF}",
           f"PIP_INDEX_URL=https://__token__:{GH}@gitlab.example/simple", f"AWS_ACCESS_KEY_ID={AWS}"]
    layer = im.layer([im.file_("usr/lib/python3.12/site-packages/x.py", b"")])
    cfg = im.config(env=env, history=[f"ENV UV_INDEX_URL={CRED_URL}"],
                    labels={"index": CRED_URL})
    image = im.write_docker_save(tmp_path / "img.tar", [layer], cfg)
    every_format(tmp_path, "image", str(image), *GPU)


# -- installed environments: direct_url.json ---------------------------------------------------------

def test_installed_direct_url_credentials_never_printed(tmp_path):
    site = tmp_path / "site"
    info = site / "torch-2.11.0+cu130.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\n")
    (info / "RECORD").write_text("torch/__init__.py,,\n")
    (info / "direct_url.json").write_text(json.dumps(
        {"url": f"https://alice:{PASSWORD}@pypi.corp.example/torch-2.11.0.whl", "archive_info": {}}))
    (info / "INSTALLER").write_text("uv\n")
    (site / "torch").mkdir()
    (site / "torch/__init__.py").write_text("")
    every_format(tmp_path, "doctor", "--site-packages", str(site), *GPU)
