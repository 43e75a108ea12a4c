#!/usr/bin/env python3
"""Dockerfile source layer: parse time of one file, of 100 files in one process, and cold start.

    uv run python bench/bench_dockerfile_parse.py [--repeat 200] [--runs 10] [FILE ...]

Without FILE it uses every parseable fixture in fixtures/dockerfiles/. Reported:
- per file, in one warm process: `parse_dockerfile` alone; parse + `analyze` (stages and
  scopes) + `commands_in_run` / `find_installs` on every RUN ("full"); and the official Go
  parser through the `dockerfile` package (parse only) where it is installed;
- 100 files in one process (the fixtures cycled): full pipeline, total wall time;
- cold start: a fresh interpreter that imports the modules and runs the full pipeline on
  the biggest fixture, against a bare `python -c pass`, best and median of `--runs`.
Targets (issue 5): one Dockerfile well under 10 ms warm; a pre-commit run on one file
under 0.25 s wall with start-up; 100 files in one call under 1 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from wheeldoc.dockerfile.parser import parse_dockerfile  # noqa: E402
from wheeldoc.dockerfile.stages import analyze  # noqa: E402
from wheeldoc.dockerfile.shell import commands_in_run, find_installs  # noqa: E402

FULL = """
import sys
from wheeldoc.dockerfile.parser import parse_dockerfile
from wheeldoc.dockerfile.stages import analyze
from wheeldoc.dockerfile.shell import commands_in_run, find_installs
df = parse_dockerfile(sys.argv[1])
g = analyze(df)
n = sum(len(find_installs(commands_in_run(i))) for i in df.instructions)
print(len(df.instructions), len(g.stages), n)
"""


def full(path: Path) -> int:
    df = parse_dockerfile(path)
    analyze(df)
    return sum(len(find_installs(commands_in_run(i))) for i in df.instructions)


def best_median(fn, repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    files = args.files or sorted((REPO / "fixtures" / "dockerfiles").glob("*.Dockerfile"))
    try:
        import dockerfile as go  # the official Go parser, Linux x86_64 wheels only
    except ImportError:
        go = None

    print(f"{'file':40} {'lines':>5} {'instr':>5} {'parse ms':>9} {'full ms':>8} {'go parse ms':>12}")
    for f in files:
        df = parse_dockerfile(f)
        p_best, _ = best_median(lambda f=f: parse_dockerfile(f), args.repeat)
        f_best, _ = best_median(lambda f=f: full(f), args.repeat)
        g = f"{best_median(lambda f=f: go.parse_file(str(f)), args.repeat)[0] * 1e3:12.3f}" if go else f"{'n/a':>12}"
        print(f"{f.name:40} {df.line_count:5} {len(df.instructions):5} {p_best * 1e3:9.3f} {f_best * 1e3:8.3f} {g}")

    batch = [files[i % len(files)] for i in range(100)]
    t = time.perf_counter()
    for f in batch:
        full(f)
    print(f"\n100 files, full pipeline, one process: {(time.perf_counter() - t) * 1e3:.1f} ms")

    biggest = max(files, key=lambda p: p.stat().st_size)
    cold = []
    for _ in range(args.runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", FULL, str(biggest)], cwd=REPO, check=True, capture_output=True)
        cold.append(time.perf_counter() - t)
    bare = []
    for _ in range(args.runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - t)
    print(f"cold start, full pipeline on {biggest.name}: best {min(cold) * 1e3:.1f} ms, "
          f"median {statistics.median(cold) * 1e3:.1f} ms (bare python: best {min(bare) * 1e3:.1f} ms, "
          f"median {statistics.median(bare) * 1e3:.1f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
