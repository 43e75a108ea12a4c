"""Optional dependencies: import one where a feature needs it, or say which extra brings it.

The base install stays small (the pre-commit hook environment and `uv tool install` each under
40 MB, see docs/install.md); what only some inputs need is an extra of the package:

    resolve   uv          `check --resolve`, `abi EXT torch==…` (uv on PATH is used first)
    kernels   lz4, zstandard   decompressing a compressed fatbin entry (`entry_image`)
    image     zstandard   container image layers compressed with zstd
"""

from __future__ import annotations

import importlib
from types import ModuleType

from wheeldoc.core.errors import InputError

# module -> (distribution to install, the extra that brings it)
PROVIDERS = {
    "uv": ("uv", "resolve"),
    "lz4": ("lz4", "kernels"),
    "lz4.block": ("lz4", "kernels"),
    "zstandard": ("zstandard", "kernels"),
}


class MissingDependency(InputError):
    """A feature an input needs depends on a package that is not installed."""

    def __init__(self, path: str, message: str, *, extra: str, distribution: str,
                 offset: int | None = None, member: str | None = None) -> None:
        self.extra = extra
        self.distribution = distribution
        super().__init__(path, message, offset=offset, member=member)


def install_hint(distribution: str, extra: str) -> str:
    return (f"install it with `uv tool install 'wheeldoc[{extra}]'` or "
            f"`pip install 'wheeldoc[{extra}]'` (or `pip install {distribution}` beside wheeldoc)")


def require(module: str, purpose: str, *, path: str, extra: str | None = None,
            offset: int | None = None, member: str | None = None) -> ModuleType:
    """`import module`, or MissingDependency saying what needs it and which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        dist, default_extra = PROVIDERS.get(module, (module.split(".")[0], "all"))
        extra = extra or default_extra
        raise MissingDependency(
            path, f"{purpose} needs the `{dist}` package, which is not installed: "
                  + install_hint(dist, extra),
            extra=extra, distribution=dist, offset=offset, member=member) from None
