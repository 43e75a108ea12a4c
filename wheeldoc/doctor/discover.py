"""Which environment `wheeldoc doctor` reads: the one the user means, said on the first line.

In order: `--python PATH`; `--site-packages DIR` (a venv or prefix root given there is resolved to
its site-packages); the active `VIRTUAL_ENV`; `./.venv`; the running interpreter. The last is
refused when it is wheeldoc's own tool environment (`uv tool install`, `uvx`, `pipx`): a
HEALTHY about wheeldoc's dependencies answers a question nobody asked.
"""

from __future__ import annotations

import glob
import os
import sys
from dataclasses import replace
from typing import Mapping

from wheeldoc.core.errors import InputError, UsageError
from wheeldoc.environment.reader import EnvironmentLocation, location_for_directory, locate_environment

# How each choice is named on the first line (text) and in JSON (`environment.chosen_by`).
CHOSEN_BY = {
    "python": "--python",
    "site-packages": "--site-packages",
    "prefix": "--site-packages (a prefix: its site-packages)",
    "virtual_env": "the active VIRTUAL_ENV",
    "dot_venv": "./.venv",
    "running": "the interpreter wheeldoc runs on",
}
TOOL_MARKERS = ("uv-receipt.toml", "pipx_metadata.json")  # `uv tool install`, pipx
NO_ENVIRONMENT_HINT = ("activate the project's virtual environment, run from a folder with .venv, "
                       "or pass --python PATH / --site-packages DIR")


def find_environment(python: str | None, site_packages: str | None, *,
                     environ: Mapping[str, str] | None = None, cwd: str | None = None) -> EnvironmentLocation:
    """The location to read, with `chosen_by` saying why it was chosen."""
    environ = os.environ if environ is None else environ
    cwd = cwd or os.getcwd()
    if python and site_packages:
        raise UsageError("give either --python or --site-packages, not both")
    if python:
        return _chosen(locate_environment(python=python), "python")
    if site_packages:
        return _site_packages_or_prefix(site_packages)
    active = environ.get("VIRTUAL_ENV", "").strip()
    if active:
        if not os.path.isdir(active):
            raise InputError(active, "VIRTUAL_ENV names no folder (a stale activation?); deactivate it "
                                     "or pass --python / --site-packages")
        return _chosen(_venv(active), "virtual_env")
    dot = os.path.join(cwd, ".venv")
    if os.path.isfile(os.path.join(dot, "pyvenv.cfg")):
        return _chosen(_venv(dot), "dot_venv")
    tool = tool_environment(sys.prefix)
    if tool:
        raise InputError(sys.prefix, f"this is wheeldoc's own {tool} environment, not a project's: "
                                     f"{NO_ENVIRONMENT_HINT}")
    return _chosen(locate_environment(), "running")


def tool_environment(prefix: str) -> str | None:
    """'uv tool' / 'pipx' / 'uvx' when `prefix` is an environment a tool installer made for wheeldoc."""
    if os.path.isfile(os.path.join(prefix, "uv-receipt.toml")):
        return "uv tool"
    if os.path.isfile(os.path.join(prefix, "pipx_metadata.json")):
        return "pipx"
    parts = os.path.normpath(prefix).split(os.sep)
    if any(p.startswith("archive-v") for p in parts) and os.path.isfile(os.path.join(prefix, "pyvenv.cfg")):
        return "uvx"  # uv's cache of ephemeral tool environments (~/.cache/uv/archive-v0/<hash>)
    return None


def _chosen(loc: EnvironmentLocation, how: str) -> EnvironmentLocation:
    return replace(loc, chosen_by=CHOSEN_BY[how])


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _venv(prefix: str) -> EnvironmentLocation:
    """A venv prefix: the running interpreter when it is that venv; else its interpreter, queried
    (standard library only); else, when that interpreter cannot run, its site-packages folder."""
    if _same(prefix, sys.prefix):
        return locate_environment()
    exe = os.path.join(prefix, "Scripts", "python.exe") if os.name == "nt" else os.path.join(prefix, "bin", "python")
    if os.path.exists(exe):
        try:
            return locate_environment(python=exe)
        except InputError:
            pass  # a venv whose base interpreter is gone: its files can still be read
    found = prefix_site_packages(prefix)
    if not found:
        raise InputError(prefix, "no site-packages folder in this environment")
    return location_for_directory(found[0])


def prefix_site_packages(prefix: str) -> list[str]:
    """The site-packages folders of a venv / prefix root (lib/pythonX.Y/site-packages, Lib/site-packages)."""
    pattern_sets = (("lib", "python*", "site-packages"), ("lib64", "python*", "site-packages"),
                    ("Lib", "site-packages"))
    out: list[str] = []
    for parts in pattern_sets:
        for p in sorted(glob.glob(os.path.join(glob.escape(prefix), *parts))):
            if os.path.isdir(p) and not any(_same(p, q) for q in out):
                out.append(p)
    return out


def has_dist_info(folder: str) -> bool:
    try:
        with os.scandir(folder) as it:
            return any(e.name.endswith(".dist-info") for e in it)
    except OSError:
        return False


def _site_packages_or_prefix(folder: str) -> EnvironmentLocation:
    """`--site-packages DIR`: DIR itself, or, when DIR is a venv / prefix root, its site-packages."""
    if os.path.isdir(folder) and not has_dist_info(folder):
        found = prefix_site_packages(folder)
        if len(found) > 1:
            raise UsageError(f"--site-packages {folder}: a prefix with several site-packages folders "
                             f"({', '.join(found)}); give one")
        if found:
            return _chosen(location_for_directory(found[0]), "prefix")
    return _chosen(location_for_directory(folder), "site-packages")


def no_distributions(loc: EnvironmentLocation) -> InputError:
    """The input error for an environment without a single *.dist-info (exit 2, not HEALTHY)."""
    where = loc.site_packages[0] if len(loc.site_packages) == 1 else (loc.prefix or ", ".join(loc.site_packages))
    explicit = loc.chosen_by.startswith(("--python", "--site-packages"))
    hint = "is this the folder that holds the *.dist-info folders?" if explicit else NO_ENVIRONMENT_HINT
    said = f" (read because: {loc.chosen_by})" if loc.chosen_by else ""
    return InputError(where, f"no distributions (*.dist-info) found{said}; {hint}")
