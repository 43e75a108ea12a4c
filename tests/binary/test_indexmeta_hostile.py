"""A hostile index page or wheel for `check --resolve` (wheeldoc/binary/indexmeta.py): every answer is
an `IndexReadError` (the caller names what stayed unknown) or a sanitized file list, never another
exception. Served by a local HTTP server; nothing here needs the network."""

from __future__ import annotations

import hashlib
import io
import json
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from wheeldoc.binary.indexmeta import IndexReader, IndexReadError

NAME = "fakedep-1.0-py3-none-any.whl"


def _wheel(encrypted: bool = False) -> bytes:
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.writestr("fakedep-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: fakedep\nVersion: 1.0\n"
                                                     "Requires-Dist: torch>=2.9\n")
        z.writestr("fakedep-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\n")
    data = bytearray(b.getvalue())
    if encrypted:  # the zip says its members are encrypted (general purpose flag bit 0)
        for sig, off in ((b"PK\x01\x02", 8), (b"PK\x03\x04", 6)):
            i = data.find(sig)
            while i != -1:
                data[i + off] |= 1
                i = data.find(sig, i + 4)
    return bytes(data)


def _serve(page: bytes, wheel: bytes):
    class H(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def _send(self, code: int, body: bytes) -> None:
            self.send_response(code)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path.startswith("/simple/"):
                return self._send(200, page)
            if self.path.startswith("/files/") and not self.path.endswith(".metadata"):
                a, b = (int(x) for x in self.headers["Range"].split("=")[1].split("-"))
                return self._send(206, wheel[a:b + 1])
            return self._send(404, b"")

    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/simple"


def _page(wheel: bytes, **over) -> bytes:
    f = {"filename": NAME, "url": f"/files/{NAME}", "hashes": {"sha256": hashlib.sha256(wheel).hexdigest()},
         "requires-python": ">=3.8", "size": len(wheel)}
    f.update(over)
    return json.dumps({"files": [f]}).encode()


@pytest.fixture
def index():
    servers = []

    def start(page: bytes, wheel: bytes = _wheel()) -> IndexReader:
        server, url = _serve(page, wheel)
        servers.append(server)
        return IndexReader(url)

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def _read(reader: IndexReader) -> None:
    """What `check --resolve` does with a project: its files, then one wheel's METADATA."""
    for f in reader.files("fakedep") or ():
        reader.metadata(f)


@pytest.mark.parametrize("over", [{"url": 5}, {"url": {"a": 1}}, {"hashes": ["x"]}, {"requires-python": 38},
                                  {"requires-python": [">=3"]}, {"size": "12"}, {"core-metadata": "yes"}],
                         ids=lambda o: f"{next(iter(o))}={next(iter(o.values()))!r}")
def test_a_file_entry_of_the_wrong_types_is_an_index_error_or_left_out(index, over):
    reader = index(_page(_wheel(), **over))
    try:
        _read(reader)
    except IndexReadError:
        pass
    for f in reader.files("fakedep") or ():  # what is kept has the types the callers read
        assert isinstance(f["url"], str) and isinstance(f.get("hashes", {}), dict)
        assert isinstance(f.get("requires-python") or "", str)


def test_a_deeply_nested_page_is_not_a_recursion_error(index):
    reader = index(b"[" * 200_000 + b"]" * 200_000)
    with pytest.raises(IndexReadError):
        reader.files("fakedep")


def test_a_wheel_whose_zip_says_encrypted_is_not_read(index):
    wheel = _wheel(encrypted=True)
    reader = index(_page(wheel), wheel)
    [f] = reader.files("fakedep")
    with pytest.raises(IndexReadError, match="not a readable wheel"):
        reader.metadata(f)


def test_a_server_that_trickles_its_page_is_cut_off_by_the_run_deadline():
    import time

    class Slow(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(1 << 20))
            self.end_headers()
            try:
                for _ in range(1 << 20):  # one byte every 0.1 s: each read is well within the socket timeout
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    time.sleep(0.1)
            except OSError:
                pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        reader = IndexReader(f"http://127.0.0.1:{server.server_address[1]}/simple", deadline_s=1.0)
        t0 = time.monotonic()
        with pytest.raises(IndexReadError, match="s allowed"):
            reader.files("fakedep")
        assert time.monotonic() - t0 < 5
    finally:
        server.shutdown()
        server.server_close()


def test_a_redirect_off_http_is_refused_and_answers_are_cached_per_index(tmp_path):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from wheeldoc.binary.indexmeta import IndexReader, IndexReadError

    class Redirect(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(302)
            self.send_header("Location", "ftp://127.0.0.1/x")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(IndexReadError, match="only http"):
            IndexReader(f"http://127.0.0.1:{server.server_address[1]}/simple").files("x")
    finally:
        server.shutdown()
        server.server_close()
    sha = "a" * 64
    one, other = IndexReader("https://one.example/simple", tmp_path), IndexReader("https://two.example/simple", tmp_path)
    one._store(sha, "Metadata-Version: 2.1\nName: x\n")
    assert one._cached(sha) is not None and other._cached(sha) is None
