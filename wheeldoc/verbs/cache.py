"""`wheeldoc cache dir|clean`: where wheeldoc's cache lives, and removing it.

The folder is `core.cache.default_dir()`: `$WHEELDOC_CACHE_DIR`, else `$XDG_CACHE_HOME/wheeldoc`,
else `~/.cache/wheeldoc`. It holds parsed facts (`<kind>/<sha256[:2]>/<sha256>.<version>`),
`resolved/` (the requirements `--resolve` produced) and `wheels/<sha256>/` (wheels `abi`
downloaded). `clean` removes that folder and nothing else: it refuses `/`, the home folder and
any folder above it, and a folder holding entries wheeldoc never writes (a
WHEELDOC_CACHE_DIR pointed at a shared folder by mistake).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import stat
import sys
from pathlib import Path

from wheeldoc.core.cache import default_dir
from wheeldoc.core.errors import InputError

_KIND = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")  # core.cache's kind names
_SHARD = re.compile(r"^[0-9a-f]{2}$")
_SHA = re.compile(r"^[0-9a-f]{64}$")


def _origin() -> str:
    if os.environ.get("WHEELDOC_CACHE_DIR"):
        return "WHEELDOC_CACHE_DIR"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return "XDG_CACHE_HOME" if xdg and os.path.isabs(xdg) else "the default (~/.cache/wheeldoc)"


def _foreign(root: Path) -> list[str]:
    """Entries of `root` that wheeldoc never writes (empty: the folder is wheeldoc's)."""
    out = []
    for entry in sorted(os.scandir(root), key=lambda e: e.name):
        if not entry.is_dir(follow_symlinks=False):
            out.append(entry.name)
        elif entry.name == "resolved":
            continue
        elif entry.name == "wheels":
            out += [f"wheels/{e.name}" for e in os.scandir(entry.path)
                    if not (_SHA.match(e.name) and e.is_dir(follow_symlinks=False))]
        elif _KIND.match(entry.name):
            out += [f"{entry.name}/{e.name}" for e in os.scandir(entry.path)
                    if not (_SHARD.match(e.name) and e.is_dir(follow_symlinks=False))]
        else:
            out.append(entry.name)
    return out


def _size(root: Path) -> tuple[int, int]:
    """(files, bytes) under root, symbolic links not followed."""
    files = size = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            files += 1
            size += st.st_blocks * 512 if hasattr(st, "st_blocks") else st.st_size
    return files, size


def _human(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _refuse(root: Path, why: str) -> InputError:
    return InputError(str(root), f"not removing the cache folder ({_origin()}): {why}")


def clean(root: Path) -> tuple[int, int]:
    """Remove wheeldoc's cache folder; (files, bytes) freed. InputError when refused."""
    try:
        st = os.lstat(root)
    except FileNotFoundError:
        return 0, 0
    except OSError as e:
        raise InputError(str(root), f"cannot read the cache folder: {e.strerror or e}") from None
    if stat.S_ISLNK(st.st_mode):
        raise _refuse(root, "it is a symbolic link; remove the link or clean its target's folder")
    if not stat.S_ISDIR(st.st_mode):
        raise _refuse(root, "it is not a folder")
    real = Path(os.path.realpath(root))
    home = Path(os.path.realpath(Path.home()))
    if real == Path(real.anchor):
        raise _refuse(root, "it is the root of the file system")
    if real == home or real in home.parents:
        raise _refuse(root, "it is your home folder or a folder above it")
    if real == Path(os.path.realpath(os.getcwd())) or real in Path(os.path.realpath(os.getcwd())).parents:
        raise _refuse(root, "it is the current folder or a folder above it")
    foreign = _foreign(root)
    if foreign:
        shown = ", ".join(foreign[:5]) + (f" and {len(foreign) - 5} more" if len(foreign) > 5 else "")
        raise _refuse(root, f"it holds entries wheeldoc never writes ({shown}); point WHEELDOC_CACHE_DIR "
                            "at wheeldoc's own folder")
    files, size = _size(root)
    errors: list[str] = []

    def onexc(_func, path, exc) -> None:  # noqa: ANN001 (shutil's signature)
        if not isinstance(exc, FileNotFoundError):  # a concurrent run removed it first
            errors.append(f"{path}: {exc}")

    if sys.version_info >= (3, 12):
        shutil.rmtree(root, onexc=onexc)
    else:
        shutil.rmtree(root, onerror=lambda f, p, info: onexc(f, p, info[1]))
    if errors:
        raise InputError(str(root), f"could not remove {len(errors)} entries, e.g. {errors[0]}")
    return files, size


def run(args: argparse.Namespace) -> int:
    root = default_dir()
    if args.action == "dir":
        print(root)
        return 0
    existed = os.path.lexists(root)
    files, size = clean(root)
    if not existed:
        print(f"Nothing to clean: {root} does not exist")
    else:
        print(f"Removed {root}: {files:,} files, {_human(size)} freed")
    sys.stdout.flush()
    return 0
