"""Cold reads spread over processes: the headers of hundreds of libraries, and the data
sections of the few searched for fatbin containers kept outside `.nv_fatbin`.

Reading is CPU-bound Python (struct unpacking, `bytes.find` over hundreds of MB), so threads
would serialise on the GIL; a pool of forked workers reads files of the host in parallel, each
worker storing what it read in the cache itself (the cache's writes are atomic renames, safe
across processes) and returning it. Small batches, images (their layers are open in this
process) and machines with one core are read in this process.
"""

from __future__ import annotations

import os
from typing import Callable, Iterator

MIN_PARALLEL = 24  # fewer misses than this: not worth starting workers
MAX_WORKERS = 16


MIN_CPUS = 4  # on fewer cores the workers' start and the transfer of results cost more than they save


def _workers(n: int) -> int:
    """How many processes to use for `n` files: 1 (this process) on small machines."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    forced = os.environ.get("WHEELDOC_WORKERS", "")
    if forced.isascii() and forced.isdigit() and len(forced) < 4 and int(forced) > 0:  # for tests and benchmarks
        return max(1, min(int(forced), n))
    if cpus < MIN_CPUS:
        return 1
    return max(1, min(MAX_WORKERS, cpus, n))


def _pool(n: int):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:
        return None
    return ProcessPoolExecutor(max_workers=n, mp_context=ctx)


def _cache_root(cache) -> str | None:
    return str(cache.root) if cache is not None else None


def _stored(value: dict) -> dict:
    return {k: v for k, v in value.items() if k != "digest_ok"}


def _read_one(path: str, key: str | None, cache_root: str | None, expect: str | None = None):
    """Worker: one library's facts (stored in the cache when it has a key and its bytes hash to
    the digest the key was made from)."""
    from wheeldoc.environment.scan import SCAN_VERSION, read_library
    from wheeldoc.core.errors import InputError
    from wheeldoc.environment.fs import HOST

    try:
        value = read_library(HOST, path, expect=expect if cache_root and key else None)
    except InputError as e:
        return path, None, e.message
    if cache_root and key and value.get("digest_ok", True):
        from wheeldoc.core.cache import Cache

        Cache(cache_root).put("doctor-lib", key, SCAN_VERSION, _stored(value))
    return path, value, None


def read_libraries(fs, misses: list[tuple[str, str | None, int]], cache, progress: Callable | None,
                   done: int, total: int, files: int, expect: dict[str, str] | None = None,
                   ) -> Iterator[tuple[str, dict | None, str | None]]:
    """(path, facts, error) for each (path, cache key, size) not in the cache, in any order.

    `expect` maps a path to the sha256 (hex) its key was made from (RECORD's claim): the facts
    are cached only when the bytes read hash to it, so a lying RECORD caches nothing."""
    expect = expect or {}
    from wheeldoc.environment.scan import SCAN_VERSION, read_library
    from wheeldoc.core.errors import InputError
    from wheeldoc.environment.fs import HostFileSystem

    sizes = {p: size for p, _, size in misses}
    n = _workers(len(misses))
    pool = _pool(n) if isinstance(fs, HostFileSystem) and n > 1 and len(misses) >= MIN_PARALLEL else None
    if pool is None:
        for path, key, size in misses:
            if progress:
                progress(path, done, total, files)
            try:
                value = read_library(fs, path, expect=expect.get(path) if cache is not None and key else None)
            except InputError as e:
                yield path, None, e.message
            else:
                if cache is not None and key and value.get("digest_ok", True):
                    cache.put("doctor-lib", key, SCAN_VERSION, _stored(value))
                yield path, value, None
            done += size
        return
    from concurrent.futures import as_completed

    root = _cache_root(cache)
    # the biggest files first, so one large library does not finish last on its own
    order = sorted(misses, key=lambda m: -m[2])
    with pool:
        futures = [pool.submit(_read_one, path, key, root, expect.get(path)) for path, key, _ in order]
        for fut in as_completed(futures):
            path, value, error = fut.result()
            done += sizes[path]
            if progress:
                progress(path, done, total, files)
            yield path, value, error


def _embedded_one(path: str):
    from wheeldoc.kernels import embedded
    from wheeldoc.kernels.facts import encode_fatbin
    from wheeldoc.core.errors import InputError
    from wheeldoc.kernels.fatbin import Fatbin

    try:
        found = embedded.scan_file(path)
    except (InputError, OSError):
        return path, None
    fb = Fatbin(path, None, "embedded", None, None, None, (), tuple(c for _, c in found))
    return path, {"sections": [s for s, _ in found], "fatbin": encode_fatbin(fb)}


def scan_embedded(paths: list[str]) -> dict[str, dict]:
    """path -> {"sections", "fatbin"} (encoded) for the containers kept in data sections."""
    n = _workers(len(paths))
    pool = _pool(n) if n > 1 and len(paths) > 1 else None
    if pool is None:
        return {p: doc for p, doc in map(_embedded_one, paths) if doc is not None}
    with pool:
        return {p: doc for p, doc in pool.map(_embedded_one, sorted(paths, key=_size, reverse=True))
                if doc is not None}


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
