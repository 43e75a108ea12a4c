"""Measure wheeldoc's install footprint with `du` after real installs of the built wheel.

    uv run python scripts/measure_footprint.py                 # all three, a table
    uv run python scripts/measure_footprint.py --only uv-tool --json
    uv run python scripts/measure_footprint.py --limit-mb 40   # exit 1 when one is over

1. `uv build --wheel`, then `uv tool install <wheel>` into a temporary UV_TOOL_DIR: the size of
   the tool's environment (`du -sk $UV_TOOL_DIR/wheeldoc`).
2. `python -m venv` + `pip install <wheel>`: a plain virtual environment (pip and, before
   Python 3.12, setuptools come with it).
3. the pre-commit hook environment: a throwaway git repository holding this checkout's tracked
   files (as on disk) is the hook repository, a second one uses it from its
   .pre-commit-config.yaml at that commit, and `pre-commit run --files Dockerfile` builds the
   environment as it would for a user (`du -sk $PRE_COMMIT_HOME/repo*/py_env-*`).

Dependencies come from the package index (uv's and pip's caches make it quick when warm).
Everything is written under a temporary folder that is removed afterwards (`--keep` keeps it).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GIT_ENV = {"GIT_AUTHOR_NAME": "wheeldoc", "GIT_AUTHOR_EMAIL": "footprint@wheeldoc.invalid",
           "GIT_COMMITTER_NAME": "wheeldoc", "GIT_COMMITTER_EMAIL": "footprint@wheeldoc.invalid",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
KINDS = ("uv-tool", "pip-venv", "pre-commit")
FIRST_RUN = (["--version"], ["check", "fixtures/story"],
             ["kernels", "--list", "fixtures/kernels/comp-all.fatbin", "fixtures/kernels/abi7-lz4.fatbin"])


def run(argv: list[str], **kw) -> subprocess.CompletedProcess:
    kw.setdefault("check", True)
    kw.setdefault("capture_output", True)
    kw.setdefault("text", True)
    try:
        return subprocess.run(argv, **kw)
    except subprocess.CalledProcessError as e:
        sys.stderr.write(f"$ {' '.join(argv)}\n{e.stdout}{e.stderr}")
        raise


def du_kib(path: str | Path) -> int:
    """`du -sk PATH`: disk use in KiB, as the issue measures it (symlinks not followed)."""
    return int(run(["du", "-sk", str(path)]).stdout.split()[0])


def build_wheel(out: Path) -> Path:
    run(["uv", "build", "--wheel", "-o", str(out)], cwd=ROOT)
    (wheel,) = out.glob("wheeldoc-*.whl")
    return wheel


def uv_tool(wheel: Path, work: Path) -> tuple[int, Path]:
    env = {**os.environ, "UV_TOOL_DIR": str(work / "tools"), "UV_TOOL_BIN_DIR": str(work / "bin")}
    env.pop("VIRTUAL_ENV", None)
    run(["uv", "tool", "install", str(wheel)], env=env)
    return du_kib(work / "tools" / "wheeldoc"), work / "bin" / "wheeldoc"


def pip_venv(wheel: Path, work: Path, python: str) -> tuple[int, Path]:
    venv = work / "venv"
    run([python, "-m", "venv", str(venv)])
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         str(wheel)])
    return du_kib(venv), venv / "bin" / "wheeldoc"


def _git(cwd: Path, *args: str) -> str:
    return run(["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}).stdout


def pre_commit(work: Path, pre_commit_exe: str) -> tuple[int, Path]:
    hook, user, home = work / "hook-repo", work / "user-repo", work / "pre-commit-home"
    for d in (hook, user, home):
        d.mkdir(parents=True)
    for rel in filter(None, _git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")):
        src = ROOT / rel
        if src.is_file():
            (hook / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, hook / rel)
    _git(hook, "init", "-q")
    _git(hook, "add", "-A")
    _git(hook, "commit", "-q", "-m", "snapshot")
    rev = _git(hook, "rev-parse", "HEAD").strip()
    shutil.copy(ROOT / "fixtures" / "dockerfiles" / "rules" / "wd401-story-fixed.Dockerfile", user / "Dockerfile")
    (user / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {hook}\n  rev: {rev}\n  hooks:\n  - id: wheeldoc-dockerfile\n")
    _git(user, "init", "-q")
    _git(user, "add", "-A")
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never"}
    env.pop("VIRTUAL_ENV", None)
    res = run([pre_commit_exe, "run", "--files", "Dockerfile"], cwd=user, env=env, check=False)
    if res.returncode != 0:
        raise SystemExit(f"pre-commit run failed ({res.returncode}):\n{res.stdout}{res.stderr}")
    (env_dir,) = glob.glob(str(home / "repo*" / "py_env-*"))
    return du_kib(env_dir), Path(env_dir) / "bin" / "wheeldoc"


def measure(kinds: tuple[str, ...], work: Path, *, python: str = sys.executable,
            pre_commit_exe: str | None = None) -> dict[str, dict]:
    wheel = build_wheel(work / "dist")
    out: dict[str, dict] = {}
    for kind in kinds:
        sub = work / kind
        sub.mkdir()
        if kind == "uv-tool":
            kib, exe = uv_tool(wheel, sub)
        elif kind == "pip-venv":
            kib, exe = pip_venv(wheel, sub, python)
        else:
            exe_pc = pre_commit_exe or shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
            kib, exe = pre_commit(sub, exe_pc)
        # the installed wheeldoc runs (the base install, nothing optional), and the first run's
        # __pycache__ is counted too (uv does not compile bytecode at install time, pip does)
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV")}
        runs = [run([str(exe), *argv], cwd=ROOT, check=False, env={**env, "PATH": str(exe.parent)})
                for argv in FIRST_RUN]
        after = du_kib(exe.parent.parent if kind != "uv-tool" else sub / "tools" / "wheeldoc")
        out[kind] = {"kib": kib, "mib": round(kib / 1024, 1), "after_first_run_kib": after,
                     "after_first_run_mib": round(after / 1024, 1), "wheeldoc": str(exe),
                     "first_run": [{"argv": a, "exit": r.returncode, "stdout": r.stdout, "stderr": r.stderr}
                                   for a, r in zip(FIRST_RUN, runs)]}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=KINDS, action="append")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--limit-mb", type=float, default=None, help="exit 1 when an install is over (MiB)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = ap.parse_args()
    kinds = tuple(args.only or KINDS)
    work = Path(tempfile.mkdtemp(prefix="wheeldoc-footprint-"))
    try:
        result = measure(kinds, work)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if args.json:
        print(json.dumps({"python": py, **result}, indent=2))
    else:
        for kind, r in result.items():
            print(f"{kind:<11} {r['mib']:>6} MiB  (du -sk: {r['kib']} KiB, Python {py}); "
                  f"{r['after_first_run_mib']} MiB after a first run")
    over = [k for k, r in result.items() if args.limit_mb is not None and r["kib"] > args.limit_mb * 1024]
    return 1 if over else 0


if __name__ == "__main__":
    raise SystemExit(main())
