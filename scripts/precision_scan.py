"""The real-world precision scan of docs/real-world-precision-scan.md: run `wheeldoc check` on
public Dockerfiles and lockfiles that no labelled corpus holds, and count the findings per rule
and severity (the hand judgement of each warning and error is in the doc).

    python scripts/precision_scan.py --git-dirs '/path/to/clones/{owner}+{name}' --work /tmp/scan

scripts/precision_scan_sources.json lists each file (repo, commit, path) and its key. For each
repository, `--git-dirs` names a git directory holding that commit (a bare clone, or a clone's
.git; `{owner}` and `{name}` are filled in). A Dockerfile goes to WORK/df/KEY/Dockerfile with its
build context in WORK/df/KEY/ctx: every requirements*.txt/.in/.lock, constraints*.txt,
pyproject.toml, uv.lock, setup.py and *.whl at most three folders deep under the repository root
and under the Dockerfile's folder (the paths relative to each, the Dockerfile's folder first);
a blob the clone does not hold (Git LFS, a large file a snapshot left out) is left out.
A lockfile goes to WORK/lk/KEY/ with the pyproject.toml beside it in the repository. Then
`wheeldoc check FILE --format json` runs on each (Dockerfiles with `--context` the ctx folder),
each report is kept in WORK/out/, and the counts are printed as the doc's table.

How the files were chosen (once, recorded in the sources file): every Dockerfile of the
repositories gathered whose text names torch or a torch-dependent GPU package (vllm, sglang,
flash-attn, xformers, transformers, accelerate, peft, diffusers, detectron2, mmcv, deepspeed,
bitsandbytes, unsloth) or a torch base image, every uv.lock with a `torch` package, every
pylock*.toml naming torch, every requirements file that pip-compile / `uv pip compile` /
`uv export` wrote with a `torch==` line.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CONTEXT = re.compile(r"(requirements[^/]*\.(txt|in|lock)|pyproject\.toml|uv\.lock|setup\.py|constraints[^/]*\.txt|\.whl)$")


def git(gitdir: str, *args: str, check: bool = True) -> bytes | None:
    proc = subprocess.run(["git", "--git-dir", gitdir, *args], capture_output=True, check=check)
    return proc.stdout if proc.returncode == 0 else None


def extract(row: dict, gitdir: str, work: Path) -> Path:
    commit, path = row["commit"], row["path"]
    kind = row["key"].split("/", 1)[0]
    dest = work / row["key"]
    dest.mkdir(parents=True, exist_ok=True)
    files = git(gitdir, "ls-tree", "-r", "--name-only", commit).decode().splitlines()
    if kind == "df":
        (dest / "Dockerfile").write_bytes(git(gitdir, "show", f"{commit}:{path}"))
        folder = os.path.dirname(path)
        for base in dict.fromkeys((folder, "")):
            for g in files:
                rel = g[len(base) + 1:] if base and g.startswith(base + "/") else (g if not base else None)
                if rel is None or rel.count("/") > 2 or not CONTEXT.search(rel):
                    continue
                target = dest / "ctx" / rel
                if target.exists():
                    continue
                blob = git(gitdir, "show", f"{commit}:{g}", check=False)
                if blob:  # a blob the clone lacks (Git LFS, a shallow store's large file) is left out
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(blob)
        return dest / "Dockerfile"
    name = os.path.basename(path)
    (dest / name).write_bytes(git(gitdir, "show", f"{commit}:{path}"))
    if name == "uv.lock":
        project = os.path.join(os.path.dirname(path), "pyproject.toml").lstrip("/")
        if project in files:
            (dest / "pyproject.toml").write_bytes(git(gitdir, "show", f"{commit}:{project}"))
    return dest / name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--git-dirs", required=True, help="git directory pattern with {owner} and {name}")
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument("--sources", type=Path, default=HERE / "precision_scan_sources.json")
    ap.add_argument("--wheeldoc", default="wheeldoc")
    ap.add_argument("--resolve", action="store_true",
                    help="check Dockerfiles with --resolve (packages the torch-pin table lacks read from PyPI)")
    args = ap.parse_args()
    rows = json.loads(args.sources.read_text())
    counts: collections.Counter = collections.Counter()
    loud = []
    (args.work / "out").mkdir(parents=True, exist_ok=True)
    for row in rows:
        owner, name = row["repo"].split("/")
        target = extract(row, args.git_dirs.format(owner=owner, name=name), args.work)
        cmd = [args.wheeldoc, "check", str(target), "--format", "json", "--fail-on", "never"]
        if row["key"].startswith("df/"):
            ctx = target.parent / "ctx"
            cmd += ["--context", str(ctx if ctx.is_dir() else target.parent)]
            if args.resolve:
                cmd.append("--resolve")
        proc = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=300)
        out = args.work / "out" / (row["key"].replace("/", "__") + ".json")
        out.write_text(proc.stdout)
        if proc.returncode != 0:
            print(f"{row['key']}: exit {proc.returncode}: {proc.stderr.strip()[-300:]}", file=sys.stderr)
            continue
        for f in json.loads(proc.stdout)["findings"]:
            counts[(f["rule"], f["severity"])] += 1
            if f["severity"] in ("warning", "error"):
                loud.append((row["key"], f["rule"], f["severity"], f["line"]))
    kinds = collections.Counter(r["key"].split("/", 1)[0] for r in rows)
    print(f"files: {kinds['df']} Dockerfiles, {kinds['lk']} lockfiles")
    print("| rule | severity | findings |\n|---|---|---|")
    for (rule, sev), n in sorted(counts.items()):
        print(f"| {rule} | {sev} | {n} |")
    print("\nwarnings and errors:")
    for key, rule, sev, line in loud:
        print(f"  {key}:{line} {rule} {sev}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
