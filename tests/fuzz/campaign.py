"""Run fuzz harnesses for a budget, a few at a time, and record what libFuzzer reports.

    uv run python tests/fuzz/campaign.py --time 600 --jobs 2            # every harness
    uv run python tests/fuzz/campaign.py --time 60 elf fatbin            # some of them

Each harness runs in its own process with its corpus in `tests/fuzz/corpus/<parser>`
(seeded from the fixtures when empty; kept between campaigns, gitignored) and its crash
artifacts in `tests/fuzz/crashes/<parser>/`. The summary (executions, coverage `cov` = edges,
`ft` = features, corpus size, crashes, wall time) is printed as a table and written to
`tests/fuzz/campaign.json`, the numbers docs/robustness.md quotes. With `--restart`, a
harness that crashed is started again on its remaining time (after the crash is recorded),
so one bug does not end a long run.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

FUZZ_DIR = Path(__file__).resolve().parent
HARNESSES = sorted(p.stem.removeprefix("fuzz_") for p in FUZZ_DIR.glob("fuzz_*.py"))
_STAT = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+) corp: (\d+)/")
_DONE = re.compile(r"^Done (\d+) runs in (\d+) second")


def parse_output(text: str) -> dict:
    """Executions, edges, features and corpus size from libFuzzer's last status lines."""
    out = {"runs": 0, "cov": 0, "ft": 0, "corpus": 0, "crashed": False, "artifacts": []}
    for line in text.splitlines():
        m = _STAT.match(line)
        if m:
            out["runs"], out["cov"], out["ft"], out["corpus"] = (int(x) for x in m.groups())
        m = _DONE.match(line)
        if m:
            out["runs"] = int(m[1])
        if "ERROR: libFuzzer" in line or "Uncaught Python exception" in line:
            out["crashed"] = True
        m = re.search(r"Test unit written to (\S+)", line)
        if m:
            out["artifacts"].append(m[1])
        m = re.search(r"^stat::number_of_executed_units: (\d+)", line)
        if m:
            out["runs"] = int(m[1])
    return out


def run_one(name: str, seconds: int, restart: bool, extra: list[str]) -> dict:
    log_dir = FUZZ_DIR / "crashes" / name
    log_dir.mkdir(parents=True, exist_ok=True)
    total = {"name": name, "runs": 0, "cov": 0, "ft": 0, "corpus": 0, "crashes": [], "seconds": 0.0,
             "exit": 0}
    left = seconds
    while left > 0:
        start = time.monotonic()
        cmd = [sys.executable, str(FUZZ_DIR / f"fuzz_{name}.py"), f"-max_total_time={left}",
               "-print_final_stats=1", *extra]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        took = time.monotonic() - start
        log = proc.stdout  # one stream, in order: the traceback sits right before libFuzzer's verdict
        (log_dir / f"last-{int(time.time())}.log").write_text(log[:20_000] + "\n[...]\n" + log[-200_000:]
                                                              if len(log) > 220_000 else log)
        got = parse_output(log)
        total["runs"] += got["runs"]
        for k in ("cov", "ft", "corpus"):
            total[k] = max(total[k], got[k])
        total["seconds"] += took
        total["exit"] = proc.returncode
        if got["crashed"]:
            tb = log[log.find("=== Uncaught"):][:3000] if "=== Uncaught" in log else log[-3000:]
            total["crashes"].append({"artifacts": got["artifacts"], "traceback": tb})
            if not restart:
                break
        else:
            break
        left = int(seconds - total["seconds"])
    return total


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", default=HARNESSES)
    ap.add_argument("--time", type=int, default=60, help="seconds per harness")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--restart", action="store_true", help="start a crashed harness again on its remaining time")
    ap.add_argument("--out", default=str(FUZZ_DIR / "campaign.json"))
    args, extra = ap.parse_known_args()
    unknown = set(args.names) - set(HARNESSES)
    if unknown:
        ap.error(f"no such harness: {', '.join(sorted(unknown))} (have: {', '.join(HARNESSES)})")
    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda n: run_one(n, args.time, args.restart, extra), args.names))
    Path(args.out).write_text(json.dumps(results, indent=1))
    print(f"{'parser':14} {'runs':>11} {'cov':>6} {'ft':>7} {'corpus':>7} {'crashes':>7} {'secs':>6}")
    for r in results:
        print(f"{r['name']:14} {r['runs']:>11,} {r['cov']:>6} {r['ft']:>7} {r['corpus']:>7} "
              f"{len(r['crashes']):>7} {r['seconds']:>6.0f}")
    return 1 if any(r["crashes"] for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
