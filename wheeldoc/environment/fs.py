"""The file system an environment is read from: the host's, or a container image's virtual tree.

`FileSystem` is the small read-only interface the environment reader needs; `HostFileSystem`
implements it over `os`, and `wheeldoc.image.reader.ImageFiles` over an image's layers, so
the same code inspects a venv on this machine and a site-packages inside an image.
Paths are POSIX strings; reads are always bounded (`read(path, max_bytes)` raises
`LimitExceeded` rather than returning a truncated file).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import stat
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Protocol

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.core.files import open_fd, open_regular


class FileSystem(Protocol):
    """Read-only access to a tree of files. Missing paths: `is_*` False, `listdir` []."""

    def is_dir(self, path: str) -> bool: ...

    def is_file(self, path: str) -> bool: ...

    def listdir(self, path: str) -> list[str]: ...

    def size(self, path: str) -> int: ...

    def read(self, path: str, max_bytes: int) -> bytes: ...

    def head(self, path: str, n: int) -> bytes:
        """The first `n` bytes (fewer when the file is shorter)."""
        ...

    def open_buffer(self, path: str) -> AbstractContextManager[memoryview]: ...

    def realpath(self, path: str) -> str: ...

    def where(self, path: str) -> str:
        """How to name `path` in a message (`image.tar!/usr/lib/...` for an image)."""
        ...


class HostFileSystem:
    """The machine's own files. OS errors become `InputError` naming the path."""

    def is_dir(self, path: str) -> bool:
        return os.path.isdir(path)

    def is_file(self, path: str) -> bool:
        return os.path.isfile(path)

    def listdir(self, path: str) -> list[str]:
        try:
            return os.listdir(path)
        except (FileNotFoundError, NotADirectoryError):
            return []
        except OSError as e:
            raise InputError(path, f"cannot list directory: {e.strerror or e}") from None

    def size(self, path: str) -> int:
        try:
            return os.stat(path).st_size
        except OSError as e:
            raise InputError(path, f"cannot stat: {e.strerror or e}") from None

    def read(self, path: str, max_bytes: int) -> bytes:
        try:
            with open_regular(path) as f:
                data = f.read(max_bytes + 1)
        except OSError as e:
            raise InputError(path, f"cannot read: {e.strerror or e}") from None
        if len(data) > max_bytes:
            raise LimitExceeded(path, f"file is larger than the {max_bytes:,}-byte limit for it")
        return data

    def head(self, path: str, n: int) -> bytes:
        try:
            with open_regular(path) as f:
                return f.read(n)
        except OSError as e:
            raise InputError(path, f"cannot read: {e.strerror or e}") from None

    @contextlib.contextmanager
    def open_buffer(self, path: str) -> Iterator[memoryview]:
        """The whole file as a read-only buffer (an mmap; nothing is copied)."""
        try:
            fd = open_fd(path)  # a FIFO is refused here, never opened blocking
        except OSError as e:
            raise InputError(path, f"cannot open: {e.strerror or e}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise InputError(path, "not a regular file")
            if st.st_size == 0:
                yield memoryview(b"")
                return
            mm = mmap.mmap(fd, st.st_size, prot=mmap.PROT_READ)
        finally:
            os.close(fd)
        view = memoryview(mm)
        try:
            yield view
        finally:
            view.release()
            with contextlib.suppress(BufferError):
                mm.close()

    def realpath(self, path: str) -> str:
        return os.path.realpath(path)

    def where(self, path: str) -> str:
        return path


HOST = HostFileSystem()
