"""Turn requirements into wheel files with the real uv, without unpacking anything.

- `lock(requirements)`: `uv pip compile --no-deps --format pylock.toml` with the index options
  passed through (`--index-url`, `--extra-index-url`, `--find-links`, `--torch-backend`) and the
  extension's Python version and platform, so uv picks the wheel that would be installed there;
  the pylock file names each wheel's URL and sha256.
- `fetch(wheel)`: a `file://` URL (a local index or a find-links folder) is read in place; a
  remote one is downloaded once over HTTPS (the standard library's urllib, from the URL uv
  reported; pip need not be installed: `uv tool install wheeldoc` has none) into wheeldoc's cache
  (`<cache>/wheels/<sha256>/`), checked against the sha256 uv reported while it streams in, and
  reused after that. uv has no download command, and installing (even `--target`) would unpack
  the whole wheel.
- `offered(spec)`: every release of a range an index offers, newest first: uv is asked for the
  best match, that release is excluded (`!=X`), and uv is asked again.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from wheeldoc.core.errors import InputError

UV_TIMEOUT_S = 300
DOWNLOAD_TIMEOUT_S = 120  # per read: a stalled connection, not the whole download
MAX_RELEASES = 40


@dataclass(frozen=True)
class IndexOptions:
    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    torch_backend: str | None = None
    no_index: bool = False

    @property
    def given(self) -> bool:
        return bool(self.index_url or self.extra_index_urls or self.find_links or self.torch_backend
                    or self.no_index)

    def uv_args(self) -> list[str]:
        out: list[str] = ["--no-index"] if self.no_index else []
        if self.index_url:
            out += ["--index-url", self.index_url]
        for url in self.extra_index_urls:
            out += ["--extra-index-url", url]
        for link in self.find_links:
            out += ["--find-links", link]
        if self.torch_backend:
            out += ["--torch-backend", self.torch_backend]
        return out


@dataclass(frozen=True)
class LockedWheel:
    name: str
    version: str
    url: str
    sha256: str | None
    size: int | None = None  # bytes, as the index (uv's pylock output) gives it

    @property
    def filename(self) -> str:
        return unquote(urlsplit(self.url).path).rsplit("/", 1)[-1]


def uv_binary() -> str:
    from wheeldoc.lockfile.resolve import uv_binary as find

    return find("resolving a torch requirement")


def lock(requirements: list[str], options: IndexOptions, *, python_version: str | None,
         python_platform: str | None, no_deps: bool = True) -> list[LockedWheel]:
    """The wheels uv picks for `requirements` (one per package), or InputError with uv's reason."""
    argv = [uv_binary(), "pip", "compile", "-", "--format", "pylock.toml", "--no-header", "--quiet",
            *options.uv_args()]
    if no_deps:
        argv.append("--no-deps")
    if python_version:
        argv += ["--python-version", python_version]
    if python_platform:
        argv += ["--python-platform", python_platform]
    try:
        proc = subprocess.run(argv, input="\n".join(requirements) + "\n", capture_output=True, text=True,
                              timeout=UV_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise InputError(" ".join(requirements), f"uv pip compile did not finish in {UV_TIMEOUT_S} s") from None
    except OSError as e:
        raise InputError("uv", f"cannot run uv: {e.strerror or e}") from None
    if proc.returncode != 0:
        lines = [ln.strip() for ln in proc.stderr.strip().splitlines() if ln.strip() and not ln.strip().startswith("hint:")]
        raise InputError(" ".join(requirements), "uv could not resolve it: " + " ".join(lines[-2:])[:400])
    return parse_pylock(proc.stdout)


def parse_pylock(text: str) -> list[LockedWheel]:
    try:
        import tomllib  # type: ignore[import-not-found]
    except ImportError:  # Python 3.10
        import tomli as tomllib
    data = tomllib.loads(text)
    out = []
    for pkg in data.get("packages", []):
        wheels = pkg.get("wheels") or []
        if not wheels:
            continue
        w = wheels[0]
        size = w.get("size")
        out.append(LockedWheel(pkg["name"], pkg["version"], w["url"], (w.get("hashes") or {}).get("sha256"),
                               size if isinstance(size, int) and not isinstance(size, bool) else None))
    return out


def offered(requirement: str, options: IndexOptions, *, python_version: str | None,
            python_platform: str | None, limit: int = MAX_RELEASES) -> list[LockedWheel]:
    """Every release matching `requirement` that uv can pick, newest first."""
    from packaging.requirements import Requirement

    req = Requirement(requirement)
    found: list[LockedWheel] = []
    excluded: list[str] = []
    while len(found) < limit:
        spec = ",".join([str(s) for s in req.specifier] + [f"!={v}" for v in excluded])
        try:
            picked = lock([f"{req.name}{spec}" if spec else req.name], options,
                          python_version=python_version, python_platform=python_platform)
        except InputError:
            break
        if not picked:
            break
        wheel = picked[0]
        found.append(wheel)
        excluded.append(wheel.version.split("+", 1)[0])
    return found


def _cached(wheel: LockedWheel, cache_root: Path) -> Path:
    return cache_root / "wheels" / (wheel.sha256 or hashlib.sha256(wheel.url.encode()).hexdigest()) / wheel.filename


def needs_download(wheel: LockedWheel, cache_root: Path) -> bool:
    return urlsplit(wheel.url).scheme in ("http", "https") and not _cached(wheel, cache_root).is_file()


def plan_message(wheels: list[LockedWheel], cache_root: Path) -> str:
    """What a range run is about to do, said before it starts: how many wheels it will fetch."""
    from wheeldoc.core.terminal import human_size

    todo = [w for w in wheels if needs_download(w, cache_root)]
    n = len(wheels)
    head = f"checking {n} release{'s' if n != 1 else ''}: "
    if not todo:
        return head + "every wheel is local or cached, nothing to download"
    sizes = [w.size for w in todo]
    total = human_size(sum(sizes)) if all(s is not None for s in sizes) else "size unknown"
    return head + f"will download {len(todo)} wheel{'s' if len(todo) != 1 else ''} ({total}), " \
                  f"{n - len(todo)} local or cached"


def fetch(wheel: LockedWheel, cache_root: Path) -> Path:
    """A local path for the wheel: read in place when local, else downloaded once into the cache
    (announced with its name and size before it starts, on a terminal)."""
    url = urlsplit(wheel.url)
    if url.scheme == "file" or url.scheme == "":
        path = Path(unquote(url.path))
        if not path.is_file():
            raise InputError(wheel.url, "uv named a wheel that does not exist")
        return path
    if url.scheme not in ("http", "https"):
        raise InputError(wheel.url, f"cannot fetch a {url.scheme}:// URL")
    target = _cached(wheel, cache_root)
    folder = target.parent
    if target.is_file():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    from wheeldoc.core.terminal import human_size, progress

    progress(f"downloading {wheel.filename} ({human_size(wheel.size)}) from {url.hostname}")
    fd, tmp = tempfile.mkstemp(prefix=".download-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as out:
            digest = download(wheel.url, out)
        if wheel.sha256 and digest != wheel.sha256:
            raise InputError(wheel.url, f"sha256 {digest} differs from the index's {wheel.sha256}")
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide the cached wheel from other users of the cache
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return target


def download(url: str, out) -> str:
    """Stream `url` into the open file `out`; its sha256. Honours the proxy and CA settings of the
    environment (`HTTPS_PROXY`, `SSL_CERT_FILE`) as urllib does."""
    import urllib.error
    import urllib.request

    h = hashlib.sha256()
    request = urllib.request.Request(url, headers={"User-Agent": "wheeldoc (+abi fetch)"})
    try:
        with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT_S) as resp:
            while True:
                block = resp.read(1 << 20)
                if not block:
                    break
                h.update(block)
                out.write(block)
    except urllib.error.HTTPError as e:
        raise InputError(url, f"download failed: HTTP {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError, TimeoutError) as e:
        reason = getattr(e, "reason", None) or e
        raise InputError(url, f"download failed: {reason}") from None
    return h.hexdigest()


def wheels_dir() -> Path:
    from wheeldoc.core.cache import default_dir

    return default_dir()
