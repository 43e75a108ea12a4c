"""`wheeldoc image`: real OCI layouts and `docker save` archives built in the test
(tests/imagefactory.py), with a torch replaced by a +cpu build in a later layer, whiteouts,
several environments, platforms, the image's ENV, bad archives and the Docker SDK path."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import tarfile
from pathlib import Path

import jsonschema
import pytest

from tests import imagefactory as im
from tests.conftest import ROOT
from tests.render.test_render import report_schema

H200 = ("--gpu", "h200", "--driver", "580.95.05")
SITE = "opt/venv/lib/python3.12/site-packages"
CUDA_OK = ROOT / "fixtures/envs/cuda-ok"


def tree_entries(src: Path, dest: str) -> list[im.Entry]:
    """Every folder and file under `src`, as layer entries under `dest` (parents first)."""
    out = []
    parts = dest.split("/")
    out += [im.dir_("/".join(parts[:i])) for i in range(1, len(parts) + 1)]
    for dirpath, dirnames, files in os.walk(src):
        dirnames.sort()
        rel = os.path.relpath(dirpath, src)
        base = dest if rel == "." else f"{dest}/{rel}"
        if rel != ".":
            out.append(im.dir_(base))
        for f in sorted(files):
            p = Path(dirpath, f)
            out.append(im.file_(f"{base}/{f}", p.read_bytes(), 0o755 if ".so" in f else 0o644))
    return out


def base_layer() -> bytes:
    return im.layer([im.dir_("etc"), im.file_("etc/os-release", b"ID=debian\n"), im.dir_("usr"),
                     im.dir_("usr/local"), im.dir_("usr/local/bin")])


def venv_layer() -> bytes:
    return im.layer(tree_entries(CUDA_OK, "opt/venv"))


def cpu_torch_layer() -> bytes:
    """torch replaced by a +cpu build: the CUDA dist-info and libraries whited out, a new
    dist-info and version.py (cuda = None) written, as `pip install torch==2.11.0+cpu` would."""
    vpy = b"__version__ = '2.11.0+cpu'\ndebug = False\ncuda = None\nhip = None\n"
    di = f"{SITE}/torch-2.11.0+cpu.dist-info"
    libc10 = (CUDA_OK / "lib/python3.12/site-packages/torch/lib/libc10.so").read_bytes()
    libtorch = (CUDA_OK / "lib/python3.12/site-packages/torch/lib/libtorch.so").read_bytes()
    record = (f"torch/version.py,,{len(vpy)}\ntorch/lib/libc10.so,,{len(libc10)}\n"
              f"torch/lib/libtorch.so,,{len(libtorch)}\ntorch-2.11.0+cpu.dist-info/METADATA,,\n"
              "torch-2.11.0+cpu.dist-info/RECORD,,\n").encode()
    return im.layer([
        im.whiteout(f"{SITE}/torch-2.11.0.dist-info"),
        im.whiteout(f"{SITE}/torch/lib/libc10_cuda.so"), im.whiteout(f"{SITE}/torch/lib/libtorch_cuda.so"),
        im.file_(f"{SITE}/torch/version.py", vpy),
        im.file_(f"{SITE}/torch/lib/libc10.so", libc10, 0o755),
        im.file_(f"{SITE}/torch/lib/libtorch.so", libtorch, 0o755),
        im.dir_(di), im.file_(f"{di}/METADATA", b"Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cpu\n\n"),
        im.file_(f"{di}/RECORD", record), im.file_(f"{di}/INSTALLER", b"pip\n")])


def image_json(cli, path, *flags: str):
    res = cli("image", str(path), *flags, "--format", "json")
    doc = json.loads(res.out)
    jsonschema.Draft202012Validator(report_schema()).validate(doc)
    return res, doc


def rules(doc) -> set[str]:
    return {f["rule"] for f in doc["findings"]}


@pytest.mark.parametrize("compression", ["gzip", "zstd", "none"])
def test_torch_replaced_by_cpu_build_in_a_later_layer(cli, tmp_path, compression):
    layers = [base_layer(), venv_layer(), cpu_torch_layer()]
    path = im.write_oci_layout(tmp_path / "oci", layers, im.config(layers), compression=compression)
    res, doc = image_json(cli, path, *H200)
    assert res.code == 1 and doc["verdict"] == "broken"
    assert doc["doctor"]["root_cause"]["rule"] == "WD501"
    (env,) = doc["environments"]
    assert env["environment"]["torch"]["version"] == "2.11.0+cpu" and env["environment"]["torch"]["kind"] == "cpu"
    (x,) = env["abi"]["extensions"]
    assert x["verdict"] == "fails" and x["detail"] == "not found: libc10_cuda.so, libcudart.so.13"
    assert {"WD501", "WD201"} <= rules(doc)
    wd501 = next(f for f in doc["findings"] if f["rule"] == "WD501")
    assert wd501["path"].endswith("!/opt/venv/lib/python3.12/site-packages/torch-2.11.0+cpu.dist-info/METADATA")
    # the same image without the last layer is healthy: the diagnosis follows the layers
    healthy = im.write_oci_layout(tmp_path / "oci2", layers[:2], im.config(layers[:2]), compression=compression)
    _, doc2 = image_json(cli, healthy, *H200)
    assert doc2["verdict"] == "healthy" and doc2["environments"][0]["abi"]["extensions"][0]["verdict"] == "loads"


@pytest.mark.parametrize("style", ["classic", "oci"])
def test_whiteout_removes_the_cuda_runtime(cli, tmp_path, style):
    layers = [base_layer(), venv_layer(), im.layer([
        im.whiteout(f"{SITE}/nvidia_cuda_runtime-13.0.96.dist-info"),
        im.opaque(f"{SITE}/nvidia/cu13/lib")])]
    path = im.write_docker_save(tmp_path / "img.tar", layers, im.config(layers), style=style)
    res, doc = image_json(cli, path, *H200)
    assert doc["image"]["format"] in ("docker-save", "oci-archive") and doc["image"]["layers"] == 3
    assert doc["verdict"] == "broken" and doc["doctor"]["root_cause"]["rule"] == "WD502"
    wd502 = next(f for f in doc["findings"] if f["rule"] == "WD502")
    assert wd502["data"]["missing"] == ["nvidia-cuda-runtime"]
    assert wd502["data"]["missing_libraries"] == ["libcudart.so.13"]
    (x,) = doc["environments"][0]["abi"]["extensions"]
    assert x["verdict"] == "fails" and "libcudart.so.13" in x["detail"]


def test_image_env_library_path_and_install_settings(cli, tmp_path):
    cuda12 = im.layer([im.dir_("usr/local/cuda-12.8"), im.dir_("usr/local/cuda-12.8/lib64"),
                       im.file_("usr/local/cuda-12.8/lib64/libcudart.so.12",
                                (ROOT / "fixtures/envs/ldpath/cuda12/libcudart.so.12").read_bytes())])
    layers = [base_layer(), venv_layer(), cuda12]
    env = ["PATH=/opt/venv/bin:/usr/bin", "LD_LIBRARY_PATH=/usr/local/cuda-12.8/lib64",
           "UV_TORCH_BACKEND=auto", "PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu"]
    path = im.write_oci_layout(tmp_path / "oci", layers, im.config(layers, env=env))
    _, doc = image_json(cli, path, *H200)
    assert doc["image"]["env"]["LD_LIBRARY_PATH"] == "/usr/local/cuda-12.8/lib64"
    assert {"UV_TORCH_BACKEND", "PIP_EXTRA_INDEX_URL"} <= set(doc["image"]["install_settings"])
    by = {}
    for f in doc["findings"]:
        by.setdefault(f["rule"], []).append(f)
    (lp,) = by["WD505"]
    assert lp["path"].endswith("!/usr/local/cuda-12.8/lib64/libcudart.so.12") and lp["severity"] == "warning"
    (cpu,) = by["WD509"]  # the CPU index, not UV_TORCH_BACKEND=auto
    assert cpu["data"]["variable"] == "PIP_EXTRA_INDEX_URL"
    text = cli("image", str(path), *H200).out
    assert "UV_TORCH_BACKEND=auto  (install-time only" in text and "harmless at run time" in text


def test_two_environments_and_an_image_without_any(cli, tmp_path):
    system = tree_entries(ROOT / "fixtures/envs/cpu-only/lib/python3.12/site-packages",
                          "usr/local/lib/python3.12/site-packages")
    layers = [base_layer(), venv_layer(), im.layer(system)]
    path = im.write_oci_layout(tmp_path / "two", layers, im.config(layers))
    _, doc = image_json(cli, path, "--driver", "none")
    wheres = [e["environment"]["where"] for e in doc["environments"]]
    assert [w.split("!", 1)[1] for w in wheres] == ["/opt/venv/lib/python3.12/site-packages",
                                                    "/usr/local/lib/python3.12/site-packages"]
    kinds = [e["environment"]["kind"] for e in doc["environments"]]
    assert kinds == ["venv", "system"] and [e["verdict"] for e in doc["environments"]] == ["healthy", "healthy"]
    empty = im.write_oci_layout(tmp_path / "empty", [base_layer()], im.config([base_layer()]))
    res, doc = image_json(cli, empty, *H200)
    assert doc["environments"] == [] and rules(doc) == {"WD002"} and res.code == 1


def test_platform_follows_the_target(cli, tmp_path):
    layers = [base_layer(), venv_layer()]
    path = im.write_oci_layout(tmp_path / "multi", layers, im.config(layers), multi_platform=True)
    _, doc = image_json(cli, path, "--platform", "linux-x86_64", *H200)
    assert doc["image"]["architecture"] == "amd64" and doc["verdict"] == "healthy"
    res = cli("image", str(path), "--gpu", "gb10", "--driver", "580.95.05")  # GB10 is an arm64 system
    assert res.code == 2 and "no linux/arm64 image in the index" in res.err


def test_bad_archives_are_input_errors(cli, tmp_path):
    (tmp_path / "junk.tar").write_bytes(b"\x00junk" * 300)
    res = cli("image", str(tmp_path / "junk.tar"), *H200)
    assert res.code == 2 and "Traceback" not in res.err and "not a tar archive or corrupt" in res.err
    res = cli("image", str(tmp_path / "nope.tar"), *H200)
    assert res.code == 2 and "no such file or folder" in res.err


def test_reference_without_the_docker_sdk(cli, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_docker(name, *a, **kw):
        if name == "docker":
            raise ImportError("No module named 'docker'")
        return real_import(name, *a, **kw)

    monkeypatch.setattr(builtins, "__import__", no_docker)
    res = cli("image", "python:3.12", *H200)
    assert res.code == 2 and "install the docker extra (pip install 'wheeldoc[docker]')" in res.err


@pytest.mark.skipif(importlib.util.find_spec("docker") is None, reason="the docker extra is not installed")
def test_reference_without_a_daemon(cli, monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no.sock")
    res = cli("image", "python:3.12", *H200)
    assert res.code == 2 and "cannot read 'python:3.12' from the Docker daemon" in res.err


# -- a real environment inside an image (slow) ---------------------------------------------------

@pytest.mark.slow
def test_real_cpu_torch_image_is_broken(cli, request, tmp_path):
    from tests.doctor import doctor_envs as de

    prefix = de.broken_env(Path(request.config.cache.mkdir("wheeldoc-real-envs")))
    if prefix is None or not shutil.which("uv"):
        pytest.skip("real wheels missing")
    layer_path = tmp_path / "layer.tar"
    with tarfile.open(layer_path, "w", format=tarfile.PAX_FORMAT) as tf:
        tf.add(prefix, arcname="opt/venv", filter=lambda ti: None if ti.name.endswith(".complete") else ti)
    raw = layer_path.read_bytes()
    layer_path.unlink()
    path = im.write_docker_save(tmp_path / "real.tar", [raw], im.config([raw]))
    res, doc = image_json(cli, path, *H200)
    assert doc["verdict"] == "broken" and doc["doctor"]["root_cause"]["rule"] == "WD501"
    (env,) = doc["environments"]
    assert env["environment"]["torch"]["version"] == "2.13.0+cpu"
    failing = {x["library"]: x["detail"] for x in env["abi"]["extensions"] if x["verdict"] == "fails"}
    assert failing["torchvision/_C.so"].startswith("not found: libc10_cuda.so")


class _FakeDaemon:
    """A Docker Engine API endpoint on a unix socket that knows one image: enough for the Docker
    SDK's `images.get(ref)` and `Image.save()` (the real SDK, speaking HTTP to it)."""

    def __init__(self, sock: Path, ref: str, tarball: bytes) -> None:
        import http.server
        import socketserver
        import threading

        ref_path = ref.replace(":", "%3A").replace("/", "%2F")
        image_id = "sha256:" + "ab" * 32

        class Handler(http.server.BaseHTTPRequestHandler):
            def address_string(self):  # a unix socket has no client address
                return "local"

            def log_message(self, *args):
                pass

            def do_GET(self):  # noqa: N802 (http.server's naming)
                path = self.path.split("?", 1)[0]
                if path.endswith("/version") or path.endswith("/_ping"):
                    return self._send(json.dumps({"ApiVersion": "1.44", "Version": "25.0.0"}).encode())
                if path.endswith(f"/images/{ref_path}/json") or path.endswith(f"/images/{ref}/json"):
                    return self._send(json.dumps({"Id": image_id, "RepoTags": [ref]}).encode())
                if "/images/" in path and path.endswith("/get"):
                    return self._send(tarball, "application/x-tar")
                self.send_response(404)
                body = json.dumps({"message": f"No such image: {path}"}).encode()
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

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


@pytest.mark.skipif(importlib.util.find_spec("docker") is None, reason="the docker extra is not installed")
def test_reference_read_through_the_docker_sdk(cli, monkeypatch, tmp_path):
    layers = [base_layer(), venv_layer(), cpu_torch_layer()]
    tarball = im.write_docker_save(tmp_path / "img.tar", layers, im.config(layers), tags=("app:cpu",)).read_bytes()
    daemon = _FakeDaemon(tmp_path / "docker.sock", "app:cpu", tarball)
    try:
        monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/docker.sock")
        res, doc = image_json(cli, "app:cpu", *H200)
        assert doc["verdict"] == "broken" and doc["doctor"]["root_cause"]["rule"] == "WD501"
        assert doc["image"]["format"] == "docker-save" and doc["image"]["ref"] == "app:cpu"
        res = cli("image", "app:missing", *H200)
        assert res.code == 2 and "the Docker daemon has no image 'app:missing'" in res.err
    finally:
        daemon.close()
    leftovers = [p for p in Path(__import__("tempfile").gettempdir()).glob("wheeldoc-image-*.tar")]
    assert not leftovers
