"""`check Dockerfile --pull-base`: base facts from the image's real config, read through the Docker
SDK from a fake Docker Engine API on a unix socket (no real daemon, no network)."""

from __future__ import annotations

import builtins
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

ROOT = Path(__file__).resolve().parents[2]
NGC = "nvcr.io/nvidia/pytorch:25.01-py3"
# An NGC-PyTorch-like config for the test: the values the 25.01 release notes give (PyTorch
# 2.6.0a0+ecf3bae, CUDA 12.8.0), the arch list and variables that image family sets, and two
# secrets that must never reach the output.
SECRET_TOKEN = "hf_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4"
SECRET_PASS = "s3cr3t-Passw0rd-xyz"
NGC_ENV = [
    "PATH=/usr/local/nvm/versions/node/v22/bin:/usr/local/bin:/usr/bin:/bin",
    "CUDA_VERSION=12.8.0.038",
    "NV_CUDA_LIB_VERSION=12.8.0.038-1",
    "NVIDIA_PYTORCH_VERSION=25.01",
    "PYTORCH_VERSION=2.6.0a0+ecf3bae",
    "TORCH_CUDA_ARCH_LIST=7.5 8.0 8.6 9.0 10.0 12.0+PTX",
    "PYTHON_VERSION=3.12.3",
    f"HF_TOKEN={SECRET_TOKEN}",
    f"PIP_INDEX_URL=https://builder:{SECRET_PASS}@pypi.example.internal/simple",
]
FILE = f"""FROM {NGC}
RUN FORCE_CUDA=1 pip install --no-build-isolation git+https://github.com/facebookresearch/xformers.git
RUN pip install vllm==0.7.3
"""
needs_docker = pytest.mark.skipif(importlib.util.find_spec("docker") is None,
                                  reason="the docker extra is not installed")


def schema_validate(doc: dict) -> None:
    from importlib import resources

    schema = json.loads(resources.files("wheeldoc.render").joinpath("report.schema.json").read_text())
    jsonschema.validate(doc, schema)


class _FakeDaemon:
    """A Docker Engine API endpoint on a unix socket answering image inspect for known refs."""

    def __init__(self, sock: Path, images: dict[str, dict]) -> None:
        import http.server
        import socketserver
        import threading
        from urllib.parse import unquote

        self.asked: list[str] = []
        asked = self.asked

        class Handler(http.server.BaseHTTPRequestHandler):
            def address_string(self):
                return "local"

            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802
                path = unquote(self.path.split("?", 1)[0])
                if path.endswith("/_ping"):
                    return self._send(b"OK", "text/plain")
                if path.endswith("/version"):
                    return self._send(json.dumps({"ApiVersion": "1.44", "Version": "25.0.0"}).encode())
                if "/images/" in path and path.endswith("/json"):
                    ref = path.split("/images/", 1)[1][: -len("/json")]
                    asked.append(ref)
                    if ref in images:
                        return self._send(json.dumps({"Id": "sha256:" + "cd" * 32, "RepoTags": [ref],
                                                      "Config": images[ref]}).encode())
                body = json.dumps({"message": f"No such image: {path}"}).encode()
                self.send_response(404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):  # noqa: N802 (a pull would be a POST /images/create: never expected)
                asked.append("POST " + self.path)
                self.send_response(500)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def _send(self, body: bytes, ctype: str = "application/json"):
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
            daemon_threads = True

        self.server = Server(str(sock), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def daemon(monkeypatch, tmp_path):
    sock = tmp_path / "docker.sock"
    d = _FakeDaemon(sock, {NGC: {"Env": NGC_ENV, "Labels": {"maintainer": "NVIDIA"}}})
    monkeypatch.setenv("DOCKER_HOST", f"unix://{sock}")
    yield d
    d.close()


def _write(tmp_path: Path, text: str = FILE) -> Path:
    p = tmp_path / "Dockerfile"
    p.write_text(text)
    return p


def _rules(doc: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for f in doc["findings"]:
        out.setdefault(f["rule"], []).append(f)
    return out


@needs_docker
def test_base_config_from_the_daemon_changes_the_outcome(cli, daemon, tmp_path):
    path = _write(tmp_path)
    before = cli("check", str(path), "--format", "json")
    plain = _rules(before.json())
    assert "WD409" in plain  # the table does not know the image's arch list
    assert "pre-release build" in plain["WD403"][0]["message"]

    res = cli("check", str(path), "--format", "json", "--pull-base")
    doc = res.json()
    schema_validate(doc)
    got = _rules(doc)
    assert "WD409" not in got  # the base sets TORCH_CUDA_ARCH_LIST
    assert "WD002" not in got
    (wd403,) = got["WD403"]
    assert wd403["severity"] == "error" and "2.6.0a0+ecf3bae" in wd403["message"]
    assert "PYTORCH_VERSION=2.6.0a0+ecf3bae in the image's config" in wd403["message"]
    (rec,) = doc["bases"]
    assert rec["image"] == NGC and rec["source"] == "daemon" and rec["line"] == 1
    facts = rec["facts"]
    assert facts["torch"] == {"value": "2.6.0a0+ecf3bae", "source": "daemon"}
    assert facts["cuda"] == {"value": "12.8", "source": "daemon"}
    assert facts["nvcc"] == {"value": True, "source": "table"}
    assert facts["env.TORCH_CUDA_ARCH_LIST"]["source"] == "daemon"
    assert not any(k.startswith(("env.HF_TOKEN", "env.PIP_INDEX_URL", "env.PATH")) for k in facts)
    assert SECRET_TOKEN not in res.out and SECRET_PASS not in res.out and SECRET_PASS not in res.err
    assert not any(a.startswith("POST") for a in daemon.asked)  # inspect only: nothing pulled
    assert res.code == before.code


@needs_docker
def test_text_output_says_nothing_secret(cli, daemon, tmp_path):
    res = cli("check", str(_write(tmp_path)), "--pull-base")
    assert "WD409" not in res.out and SECRET_TOKEN not in res.out and SECRET_PASS not in res.out


@needs_docker
def test_image_the_daemon_lacks_is_a_note(cli, daemon, tmp_path):
    path = _write(tmp_path, "FROM python:3.12-slim\nFROM nvidia/cuda:12.8.1-devel-ubuntu24.04 AS b\n"
                            "RUN pip install torch\nFROM b\n")
    before = cli("check", str(path), "--format", "json")
    res = cli("check", str(path), "--format", "json", "--pull-base")
    doc = res.json()
    schema_validate(doc)
    notes = [f for f in doc["findings"] if f["rule"] == "WD002"]
    assert len(notes) == 1 and notes[0]["severity"] == "info"
    assert "docker pull python:3.12-slim" in notes[0]["message"]
    assert [r["source"] for r in doc["bases"]] == ["table", "table"]  # the stage `b` is no base image
    assert res.code == before.code
    assert [f for f in doc["findings"] if f["rule"] != "WD002"] == before.json()["findings"]


@needs_docker
def test_daemon_unreachable_is_a_note(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no.sock")
    path = _write(tmp_path)
    before = cli("check", str(path), "--format", "json")
    res = cli("check", str(path), "--format", "json", "--pull-base")
    doc = res.json()
    (note,) = [f for f in doc["findings"] if f["rule"] == "WD002"]
    assert note["severity"] == "info" and "no Docker daemon answered" in note["message"]
    assert "judged without their real config" in note["message"] and "the base-image table" in note["message"]
    assert res.code == before.code
    assert [f for f in doc["findings"] if f["rule"] != "WD002"] == before.json()["findings"]


def test_sdk_absent_is_a_note(cli, monkeypatch, tmp_path):
    real_import = builtins.__import__

    def no_docker(name, *a, **kw):
        if name == "docker" or name.startswith("docker."):
            raise ImportError("No module named 'docker'")
        return real_import(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_docker)
    path = _write(tmp_path, "FROM example.org/team/app:1\nRUN pip install torch\n")
    before = cli("check", str(path), "--format", "json")
    res = cli("check", str(path), "--format", "json", "--pull-base")
    doc = res.json()
    (note,) = [f for f in doc["findings"] if f["rule"] == "WD002"]
    assert note["severity"] == "info" and "the Docker SDK is not installed" in note["message"]
    assert "example.org/team/app:1 (line 1): unknown" in note["message"]
    assert doc["bases"][0]["source"] == "unknown" and "facts" not in doc["bases"][0]
    assert res.code == before.code == 0


def test_config_key_turns_it_on_and_is_checked(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no.sock")
    _write(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.wheeldoc]\npull-base = true\n")
    res = cli("check", "Dockerfile", "--format", "json", cwd=tmp_path)
    assert "bases" in res.json()
    (tmp_path / "pyproject.toml").write_text("[tool.wheeldoc]\npull-base = \"yes\"\n")
    res = cli("check", "Dockerfile", cwd=tmp_path)
    assert res.code == 2 and "pull-base must be true or false" in res.err


def test_plain_check_imports_neither_the_sdk_nor_the_daemon_module(tmp_path):
    path = _write(tmp_path)
    code = ("import sys; from wheeldoc.cli import main; main(['check', %r, '-q']); "
            "print(sorted(m for m in sys.modules if m == 'docker' or m.endswith('dockerfile.daemon')))" % str(path))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stderr


def test_only_allow_listed_env_is_kept():
    from wheeldoc.dockerfile.daemon import keep_env, merge

    env = keep_env(NGC_ENV + ["PIP_CONSTRAINT=https://u:p4ssw0rd@host/c.txt", 7, "NOEQUALS"])
    assert "HF_TOKEN" not in env and "PIP_INDEX_URL" not in env and "PATH" not in env
    assert env["PIP_CONSTRAINT"] == "https://***@host/c.txt"
    unknown = merge("example.org/x:1", {"PYTHON_VERSION": "3.12.3"})
    assert unknown.torch is None and not unknown.torch_known and unknown.sources == {"env.PYTHON_VERSION": "daemon"}
    shipped = merge("example.org/x:1", {"PYTORCH_VERSION": "2.7.1"})
    assert shipped.torch_known and shipped.torch.version == "2.7.1" and shipped.torch.prerelease is False
