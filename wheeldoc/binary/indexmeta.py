"""What a package index says of a project, without downloading or unpacking a wheel: its files
(the PEP 691 JSON page of a simple index) and, for the releases asked for, the METADATA of one
wheel each (the PEP 658 `.metadata` file beside it). Used by `check --resolve` for packages the
torch-pin table does not hold.

Bounded: a page or metadata file over its size limit, a non-HTTP(S) URL, a hash mismatch or a
network error is an `IndexReadError` (the caller says what stayed unknown). METADATA files are
kept in wheeldoc's cache by the wheel's sha256 (what a wheel holds never changes); pages are
read once per run.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from urllib.parse import quote, urljoin, urlsplit

PYPI = "https://pypi.org/simple"
PAGE_LIMIT = 32 << 20
METADATA_LIMIT = 4 << 20
TIMEOUT_S = 20.0
DEADLINE_S = 120.0  # the whole run's reading of one index: a server that answers slowly is cut off
ACCEPT = "application/vnd.pypi.simple.v1+json"


class IndexReadError(Exception):
    pass


@dataclass
class IndexReader:
    index_url: str = PYPI
    cache_dir: Path | None = None
    timeout: float = TIMEOUT_S
    deadline_s: float = DEADLINE_S
    _pages: dict[str, list[dict] | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        import time

        self._until = time.monotonic() + self.deadline_s
        if urlsplit(self.index_url).scheme not in ("http", "https"):
            raise IndexReadError(f"{self.index_url}: only an http(s) index is read")
        self.index_url = self.index_url.rstrip("/")

    @property
    def host(self) -> str:
        return urlsplit(self.index_url).netloc

    def files(self, name: str) -> list[dict] | None:
        """The project's files (PEP 691 `files`), None when the index does not have it."""
        if name not in self._pages:
            body = self._get(f"{self.index_url}/{quote(name)}/", PAGE_LIMIT, {"Accept": ACCEPT})
            if body is None:
                self._pages[name] = None
            else:
                try:
                    got = json.loads(body)
                except (ValueError, RecursionError):  # RecursionError: a page nested past the parser's depth
                    raise IndexReadError(f"{self.index_url}/{name}/: not a PEP 691 JSON page") from None
                files = got.get("files") if isinstance(got, dict) else None
                if not isinstance(files, list):
                    raise IndexReadError(f"{self.index_url}/{name}/: no file list")
                base = f"{self.index_url}/{quote(name)}/"
                self._pages[name] = [_file(f, base) for f in files if isinstance(f, dict)
                                     and isinstance(f.get("filename"), str) and isinstance(f.get("url"), str)]
        return self._pages[name]

    def metadata(self, file: dict) -> str | None:
        """The METADATA of a wheel (its PEP 658 file), None when the index serves none."""
        sha = ((file.get("hashes") or {}).get("sha256") or "").lower()
        cached = self._cached(sha)
        if cached is not None:
            return cached
        body = self._get(file["url"] + ".metadata", METADATA_LIMIT)
        if body is None:
            text = self.member_metadata(file["url"], file.get("size"))  # no PEP 658 file: the wheel's METADATA member, by range requests
            if text is None:
                return None
        else:
            want = file.get("core-metadata") or file.get("data-dist-info-metadata")
            if isinstance(want, dict) and want.get("sha256") and \
                    hashlib.sha256(body).hexdigest() != str(want["sha256"]).lower():
                raise IndexReadError(f"{file['url']}.metadata: sha256 does not match the index page")
            text = body.decode("utf-8", "replace")
        self._store(sha, text)
        return text

    def member_metadata(self, url: str, size: int | None) -> str | None:
        """The `*.dist-info/METADATA` member of a remote wheel of `size` bytes: its zip directory (the
        file's tail), then that member, each by an HTTP range request; nothing else of the wheel is read."""
        import io
        import zipfile

        if not isinstance(size, int) or size <= 0:
            return None  # the page does not say how large: not read
        try:
            with zipfile.ZipFile(io.BufferedReader(_RangeFile(self, url, size), 64 * 1024)) as z:
                names = [i for i in z.infolist() if i.filename.count("/") == 1
                         and i.filename.endswith(".dist-info/METADATA")]
                if len(names) != 1 or names[0].file_size > METADATA_LIMIT:
                    return None
                return z.read(names[0]).decode("utf-8", "replace")
        except (zipfile.BadZipFile, EOFError, ValueError, NotImplementedError, RuntimeError):  # RuntimeError: "encrypted"
            raise IndexReadError(f"{url}: not a readable wheel") from None

    def _entry(self, sha: str) -> Path | None:
        """Where a wheel's METADATA is kept: by the index that served it and the sha256 its page gave, so
        one index's answer is never read back for another's (an index may claim any hash)."""
        if self.cache_dir is None or len(sha) != 64 or not all(c in "0123456789abcdef" for c in sha):
            return None
        index = hashlib.sha256(self.index_url.encode()).hexdigest()[:16]
        return self.cache_dir / index / f"{sha}.metadata"

    def _cached(self, sha: str) -> str | None:
        entry = self._entry(sha)
        try:
            return entry.read_text(encoding="utf-8") if entry is not None else None
        except OSError:
            return None

    def _store(self, sha: str, text: str) -> None:
        entry = self._entry(sha)
        if entry is None:
            return
        import os
        import tempfile

        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=entry.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, entry)
        except OSError:
            pass  # the cache is an optimization only

    def _get(self, url: str, limit: int, headers: dict | None = None) -> bytes | None:
        import urllib.error
        import urllib.request

        if urlsplit(url).scheme not in ("http", "https"):
            raise IndexReadError(f"{url}: only http(s) is read")
        import time

        req = urllib.request.Request(url, headers={"User-Agent": "wheeldoc", **(headers or {})})
        late = IndexReadError(f"{url}: the index did not answer within the {self.deadline_s:g} s allowed")
        if time.monotonic() >= self._until:
            raise late
        try:
            with _opener().open(req, timeout=min(self.timeout, self._until - time.monotonic())) as r:
                chunks, got = [], 0
                while got <= limit:  # in chunks, so a server that trickles its answer meets the deadline
                    if time.monotonic() >= self._until:
                        raise late
                    chunk = r.read1(min(64 * 1024, limit + 1 - got))
                    if not chunk:
                        break
                    chunks.append(chunk)
                    got += len(chunk)
                body = b"".join(chunks)
        except urllib.error.HTTPError as e:
            if e.code in (404, 410):
                return None
            raise IndexReadError(f"{url}: HTTP {e.code}") from None
        except (OSError, ValueError) as e:
            raise IndexReadError(f"{url}: {getattr(e, 'reason', None) or e}") from None
        if len(body) > limit:
            raise IndexReadError(f"{url}: larger than {limit:,} bytes (a range the server did not honour, or a page past its limit)")
        return body


@lru_cache(maxsize=1)
def _opener():
    """urllib's opener whose redirects stay on http(s) (urllib follows ftp:// too)."""
    import urllib.request

    class HttpOnly(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, req, fp, code, msg, headers, newurl):
            if urlsplit(newurl).scheme not in ("http", "https"):
                raise ValueError(f"a redirect to {urlsplit(newurl).scheme}: only http(s) is read")
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    return urllib.request.build_opener(HttpOnly)



def _file(f: dict, base: str) -> dict:
    """A PEP 691 file entry with the types its readers take: a field of another type is dropped."""
    out = {"filename": f["filename"], "url": urljoin(base, f["url"])}
    hashes = f.get("hashes")
    if isinstance(hashes, dict):
        out["hashes"] = {k: v for k, v in hashes.items() if isinstance(k, str) and isinstance(v, str)}
    for key, types in (("requires-python", str), ("size", int), ("yanked", (bool, str)),
                       ("core-metadata", (bool, dict)), ("data-dist-info-metadata", (bool, dict))):
        v = f.get(key)
        if isinstance(v, types) and not (types is int and isinstance(v, bool)):
            out[key] = v
    return out


TAIL = 256 * 1024


class _RangeFile:
    """A remote file read by HTTP range requests, enough for zipfile to read one member: the tail
    (where the zip directory is) in one request, any other part on demand."""

    def __init__(self, reader: IndexReader, url: str, size: int) -> None:
        self.reader, self.url, self.size, self.pos = reader, url, size, 0
        self.tail: tuple[int, bytes] | None = None
        self.closed = False

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def tell(self) -> int:
        return self.pos

    def seek(self, off: int, whence: int = 0) -> int:
        self.pos = off if whence == 0 else self.pos + off if whence == 1 else self.size + off
        return self.pos

    def readinto(self, buf) -> int:
        data = self.read(len(buf))
        buf[: len(data)] = data
        return len(data)

    def read(self, n: int = -1) -> bytes:
        end = self.size if n is None or n < 0 else min(self.size, self.pos + n)
        if end <= self.pos:
            return b""
        if self.tail is None:
            start = max(0, self.size - TAIL)
            self.tail = (start, self._range(start, self.size))
        t0, data = self.tail
        out = data[self.pos - t0:end - t0] if self.pos >= t0 else self._range(self.pos, end)
        self.pos += len(out)
        return out

    def _range(self, start: int, end: int) -> bytes:
        if end - start > METADATA_LIMIT + TAIL:
            raise ValueError("a range larger than a METADATA member")
        body = self.reader._get(self.url, end - start, {"Range": f"bytes={start}-{end - 1}"})
        if body is None or len(body) != end - start:
            raise ValueError(f"{self.url}: the server did not answer the range")
        return body

    def close(self) -> None:
        self.closed = True

    def flush(self) -> None:
        pass
