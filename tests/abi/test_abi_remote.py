"""TORCH as a requirement on a remote index: uv resolves it over HTTP, urllib fetches the
wheel once into wheeldoc's cache (sha256 checked against uv's), and a second run reuses it.
The index is a PEP 503 folder served on the loopback interface by this test."""

from __future__ import annotations

import hashlib
import html
import shutil
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import ROOT

W = ROOT / "fixtures" / "abi" / "wheels"
EXT = "fixtures/abi/wheels/ext-1.0-cp311-cp311-linux_x86_64.whl"


class _Handler(SimpleHTTPRequestHandler):
    hits: list[str] = []

    def log_message(self, *args) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        type(self).hits.append(self.path)
        super().do_GET()


@pytest.fixture
def index(tmp_path):
    root = tmp_path / "www"
    files = root / "files"
    files.mkdir(parents=True)
    by_project: dict[str, list[Path]] = {}
    for whl in W.glob("*.whl"):
        shutil.copy(whl, files / whl.name)
        project = whl.name.split("-", 1)[0].replace("_", "-").lower()
        by_project.setdefault(project, []).append(files / whl.name)
    for project, wheels in by_project.items():
        page = root / "simple" / project
        page.mkdir(parents=True)
        links = "".join(f'<a href="../../files/{html.escape(w.name)}#sha256='
                        f'{hashlib.sha256(w.read_bytes()).hexdigest()}">{html.escape(w.name)}</a>\n' for w in wheels)
        (page / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
    _Handler.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
def test_remote_torch_is_downloaded_once(cli, index, tmp_path, monkeypatch):
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    argv = ("abi", EXT, "fake-torch==2.12.0", "--index-url", index, "--format", "json", "--fail-on", "never")
    first = cli(*argv)
    assert first.code == 0, first.err
    doc = first.json()
    assert doc["torch"]["version"] == "2.12.0+cu130"
    fetched = list((tmp_path / "cache" / "wheels").rglob("fake_torch-2.12.0+cu130-*.whl"))
    assert len(fetched) == 1 and fetched[0].parent.name == hashlib.sha256(fetched[0].read_bytes()).hexdigest()
    # the CUDA runtime wheel is remote too: judged from metadata, not downloaded
    assert doc["cuda_libraries"]["unknown"] == ["fake-nvidia-cuda-runtime==13.0.0"]
    torch_gets = [h for h in _Handler.hits if h.replace("%2B", "+").startswith("/files/fake_torch-2.12.0+cu130")]
    assert len(torch_gets) == 1, _Handler.hits
    # (uv itself may GET the runtime wheel to read its METADATA: this server has neither PEP 658
    # metadata files nor range requests; PyPI has both)
    _Handler.hits.clear()
    second = cli(*argv)
    assert second.json()["findings"] == doc["findings"]
    assert not [h for h in _Handler.hits if "fake_torch" in h], "the wheel came from wheeldoc's cache"
