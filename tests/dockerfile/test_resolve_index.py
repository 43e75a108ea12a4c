"""`check --resolve` on a Dockerfile: a package the torch-pin table does not hold is read from the
index (PEP 691 page, then the release's PEP 658 METADATA file, or the wheel's METADATA member by
range requests where no such file is served) and judged as the table's own packages are. Served
here by a local HTTP index of tiny real wheels; one test asks the real PyPI."""

from __future__ import annotations

import hashlib
import json
import threading
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.wheelfactory import build_wheel
from wheeldoc.binary.indexmeta import IndexReader, IndexReadError


def _index(root: Path) -> None:
    """root/simple/fakedep/ (PEP 691 JSON) and root/files/*.whl: fakedep 2.0 (torch>=2.9, with a PEP
    658 file), 1.0 (torch>=2.0, no PEP 658 file: its METADATA is read from the wheel itself)."""
    files = root / "files"
    new = build_wheel(files, "fakedep", "2.0", requires=["torch>=2.9", "numpy"], requires_python=">=3.8")
    old = build_wheel(files, "fakedep", "1.0", requires=["torch>=2.0"], requires_python=">=3.8")
    with zipfile.ZipFile(new) as z:
        (files / f"{new.name}.metadata").write_bytes(z.read("fakedep-2.0.dist-info/METADATA"))
    page = {"meta": {"api-version": "1.1"}, "name": "fakedep", "files": [
        {"filename": w.name, "url": f"../../files/{w.name}", "hashes": {"sha256": hashlib.sha256(w.read_bytes()).hexdigest()},
         "requires-python": ">=3.8", "size": w.stat().st_size, "yanked": False} for w in (old, new)]}
    (root / "simple" / "fakedep").mkdir(parents=True)
    (root / "simple" / "fakedep" / "index.html").write_text(json.dumps(page))


class _Quiet(SimpleHTTPRequestHandler):
    extensions_map = {**SimpleHTTPRequestHandler.extensions_map, ".html": "application/vnd.pypi.simple.v1+json"}

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def index_url(tmp_path: Path):
    root = tmp_path / "index"
    _index(root)

    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(root)))
    t = threading.Thread(target=server.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()
    server.server_close()


def loud(findings: list[dict], rule: str = "WD403") -> list[dict]:
    return [f for f in findings if f["rule"] == rule and f["severity"] in ("warning", "error")]


IMAGE = """
    FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-devel
    RUN pip install {spec}
"""


def test_an_unknown_package_read_from_the_index_replaces_the_torch(check, index_url, tmp_path, monkeypatch):
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path / "cache"))
    text = IMAGE.format(spec="fakedep")
    assert loud(check(text)) == []  # not in the table: not judged
    [f] = loud(check(text, "--resolve", "--index-url", index_url))
    assert f["severity"] == "error" and "fakedep 2.0, torch>=2.9" in f["message"]
    assert "read with --resolve" in f["message"] and "127.0.0.1" in f["message"]


def test_a_pinned_release_without_a_metadata_file_is_read_from_the_wheel(check, index_url, tmp_path, monkeypatch):
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path / "cache"))
    assert loud(check(IMAGE.format(spec="fakedep==1.0"), "--resolve", "--index-url", index_url)) == []
    reader = IndexReader(index_url)
    [old] = [f for f in reader.files("fakedep") if f["filename"].startswith("fakedep-1.0")]
    assert "Requires-Dist: torch>=2.0" in reader.metadata(old)


def test_what_the_index_does_not_have_or_cannot_answer_stays_unknown(check, index_url, tmp_path, monkeypatch):
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path / "cache"))
    assert loud(check(IMAGE.format(spec="not-on-the-index"), "--resolve", "--index-url", index_url)) == []
    down = index_url.rsplit(":", 1)[0] + ":9/simple"  # nothing listens on the discard port
    got = check(IMAGE.format(spec="fakedep"), "--resolve", "--index-url", down)
    assert loud(got) == []
    [note] = [f for f in got if f["rule"] == "WD002"]
    assert note["severity"] == "info" and "--resolve: the index could not be read" in note["message"]


def test_the_reader_refuses_what_is_not_http_and_checks_the_metadata_hash(index_url):
    with pytest.raises(IndexReadError):
        IndexReader("file:///etc")
    reader = IndexReader(index_url)
    [new] = [f for f in reader.files("fakedep") if f["filename"].startswith("fakedep-2.0")]
    with pytest.raises(IndexReadError, match="sha256"):
        reader.metadata({**new, "core-metadata": {"sha256": "0" * 64}})


def test_the_added_packages_are_gone_after_the_run(check, index_url, tmp_path, monkeypatch):
    from wheeldoc.data.base_images import torch_pins

    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path / "cache"))
    check(IMAGE.format(spec="fakedep"), "--resolve", "--index-url", index_url)
    assert "fakedep" not in torch_pins()


@pytest.mark.slow
def test_the_real_pypi_answers_a_package_beyond_the_table(check, tmp_path, monkeypatch):
    # ont-bonito is not among the projects the table covers; its 1.1.0 wheel asks torch~=2.9
    # (held-out 2's project-b, labelled from `uv pip compile ont-bonito==1.1.0 torch==2.1.2`: unsatisfiable)
    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path / "cache"))
    try:
        IndexReader().files("ont-bonito")
    except IndexReadError as e:
        pytest.skip(f"PyPI not reachable: {e}")
    [f] = loud(check(IMAGE.format(spec="ont-bonito==1.1.0"), "--resolve"))
    assert f["severity"] == "error" and "torch~=2.9" in f["message"]


def test_a_second_run_reads_its_own_index_not_the_first_runs_releases(check, index_url, tmp_path, monkeypatch):
    # one process, two `check --resolve` runs against indexes that list different releases of one
    # package: the second is judged on its own index (nothing of the first run's table stays behind)
    from wheeldoc.data.base_images import torch_pins

    monkeypatch.setenv("WHEELDOC_CACHE_DIR", str(tmp_path / "cache"))
    assert loud(check(IMAGE.format(spec="fakedep"), "--resolve", "--index-url", index_url))
    other = tmp_path / "other"
    w = build_wheel(other / "files", "fakedep", "3.0", requires=["torch>=1.0"], requires_python=">=3.8")
    page = {"meta": {"api-version": "1.1"}, "name": "fakedep", "files": [
        {"filename": w.name, "url": f"../../files/{w.name}", "size": w.stat().st_size,
         "hashes": {"sha256": hashlib.sha256(w.read_bytes()).hexdigest()}, "requires-python": ">=3.8"}]}
    (other / "simple" / "fakedep").mkdir(parents=True)
    (other / "simple" / "fakedep" / "index.html").write_text(json.dumps(page))
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(other)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/simple"
        assert loud(check(IMAGE.format(spec="fakedep"), "--resolve", "--index-url", url)) == []
    finally:
        server.shutdown()
        server.server_close()
    assert "fakedep" not in torch_pins()
