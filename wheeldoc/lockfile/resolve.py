"""`--resolve`: run the real `uv pip compile` on a requirements input, then read the result."""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import os
import shlex
import subprocess
import tempfile
from pathlib import Path

from wheeldoc.core.errors import InputError
from wheeldoc.lockfile.source import Lockfile
from wheeldoc.core.target import Target

UV_PLATFORMS = {
    "linux-x86_64": "x86_64-unknown-linux-gnu",
    "linux-aarch64": "aarch64-unknown-linux-gnu",
    "macos-arm64": "aarch64-apple-darwin",
    "macos-x86_64": "x86_64-apple-darwin",
    "windows-amd64": "x86_64-pc-windows-msvc",
}
RESOLVE_TIMEOUT_S = 600


def resolved_dir() -> Path:
    from wheeldoc.core.cache import default_dir

    return default_dir() / "resolved"


def uv_binary(purpose: str = "`--resolve`") -> str:
    """uv on PATH first (the user's own, usually the newest), else the `uv` package's binary
    (the `resolve` extra), else MissingDependency naming that extra."""
    import shutil

    found = shutil.which("uv")
    if found:
        return found
    try:
        from uv import find_uv_bin

        return find_uv_bin()
    except (ImportError, FileNotFoundError):
        from wheeldoc.core.optional import MissingDependency, install_hint

        raise MissingDependency("uv", f"{purpose} runs uv, which is neither on PATH nor installed as a "
                                "package: install uv (https://docs.astral.sh/uv/), or "
                                + install_hint("uv", "resolve"), extra="resolve", distribution="uv") from None


def compile_args(path: Path, args: argparse.Namespace, target: Target, output: str) -> list[str]:
    argv = ["pip", "compile", str(path), "-o", output, "--quiet", "--no-header"]
    if not getattr(args, "allow_build", False):
        argv.append("--no-build")  # building runs a package's own code: only with --allow-build
    if args.index_url:
        argv += ["--index-url", args.index_url]
    for url in args.extra_index_url:
        argv += ["--extra-index-url", url]
    for fl in args.find_links:
        argv += ["--find-links", fl]
    if args.torch_backend:
        argv += ["--torch-backend", args.torch_backend]
    if target.platform:
        argv += ["--python-platform", UV_PLATFORMS[target.platform]]
    if target.python:
        argv += ["--python-version", target.python]
    return argv


def resolve(path: Path, args: argparse.Namespace, target: Target) -> Lockfile:
    from wheeldoc.lockfile.requirements import parse_requirements

    folder = resolved_dir()
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="wheeldoc-resolve-") as tmp:
        out = str(Path(tmp) / "requirements.lock")
        argv = compile_args(path, args, target, out)
        try:
            proc = subprocess.run([uv_binary(), *argv], capture_output=True, text=True,
                                  timeout=RESOLVE_TIMEOUT_S, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise InputError(str(path), f"uv pip compile did not finish in {RESOLVE_TIMEOUT_S} s") from None
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["(no output)"])
            why = " ".join(last[-3:])[:500]
            if "--no-build" in argv and "uild" in why and ("disabled" in why or "no-build" in why):
                why += (" (wheeldoc resolves from wheels only; --allow-build lets uv build, "
                        "which runs the package's build backend)")
            raise InputError(str(path), "uv pip compile failed: " + why)
        text = Path(out).read_text(encoding="utf-8")
    digest = hashlib.sha256((str(path.resolve()) + "\0" + text).encode()).hexdigest()[:16]
    saved = folder / f"{path.stem}-{digest}.lock.txt"
    tmp_saved = saved.with_suffix(f".{os.getpid()}.tmp")
    tmp_saved.write_text(text, encoding="utf-8")
    os.replace(tmp_saved, saved)
    shown = argv[:3] + argv[5:]  # drop the temporary -o and --quiet/--no-header noise
    shown = [a for a in shown if a not in ("--quiet", "--no-header")]  # --no-build stays: it is how it ran
    lock = parse_requirements(str(saved), text)
    return dataclasses.replace(lock, tool="uv pip compile",
                               tool_command="uv " + shlex.join(shown) + " -o requirements.lock")
