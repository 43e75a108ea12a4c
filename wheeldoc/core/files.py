"""Opening files from inputs without hanging: only regular files are read.

A FIFO (or a character device, a socket) where a library, a RECORD, a blob, a cache entry or a
command-line file is expected would block `open()` until someone writes to it, or stream
forever. `open_regular` opens with O_NONBLOCK (so opening a FIFO returns at once), checks the
type of what it opened (fstat: no race with a rename between a stat and the open), then clears
O_NONBLOCK for ordinary reads. Anything else raises `NotRegularFile`, an OSError, so every
caller's existing "cannot read: …" handling names the file.
"""

from __future__ import annotations

import errno
import os
import stat
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"))
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)


class NotRegularFile(OSError):
    """Something other than a regular file where one was expected."""


def kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def open_fd(path: str | os.PathLike[str], extra: int = 0) -> int:
    """A read-only descriptor of a regular file (see the module docstring)."""
    fd = os.open(path, _FLAGS | extra)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, f"not a regular file ({kind(st.st_mode)})", os.fspath(path))
        if _FLAGS & getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`open(path, "rb")` for regular files only."""
    return os.fdopen(open_fd(path), "rb")


def read_text(path: str | os.PathLike[str], encoding: str = "utf-8", errors: str = "strict") -> str:
    with open_regular(path) as fh:
        return fh.read().decode(encoding, errors)
