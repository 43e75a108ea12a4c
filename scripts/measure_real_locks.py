#!/usr/bin/env python3
"""Measure `wheeldoc check` on the real-world lockfile corpus against its hand labels.

    python scripts/measure_real_locks.py            # print the tables
    python scripts/measure_real_locks.py --write    # also rewrite docs/real-world-lockfiles.md
    python scripts/measure_real_locks.py --corpus fixtures/real/heldout/locks   # the held-out set

For every lock and target in fixtures/real/locks/labels.json, runs `wheeldoc check LOCK
ARGS --format json` (a fresh process each, the checkout's own wheeldoc) and matches the
error- and warning-level findings with the labelled defects: a finding matches a defect of the
same rule and package (the package the finding names in `data.package` or `data.packages`).
Per rule: true positives (labelled defects found), false positives (error/warning findings that
match no labelled defect), misses (labelled defects not found). Info findings are listed, never
counted. `measure()` is what tests/lockfile/test_real_corpus.py calls.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "fixtures" / "real" / "locks"
HELDOUT = REPO / "fixtures" / "real" / "heldout" / "locks"
DOC = REPO / "docs" / "real-world-lockfiles.md"


def run_check(lock: Path, args: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("WHEELDOC_CONFIG", None)
    proc = subprocess.run([sys.executable, "-m", "wheeldoc", "check", str(lock), *args, "--format", "json"], capture_output=True, text=True, cwd=REPO, env=env)
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"wheeldoc check {lock} {args} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout)


def _packages(f: dict) -> set[str]:
    data = f.get("data") or {}
    out = set(data.get("packages") or ())
    if data.get("package"):
        out.add(data["package"])
    return out


def measure(corpus: Path = CORPUS) -> dict:
    labels = json.loads((corpus / "labels.json").read_text())
    rows, per_rule = [], {}
    for entry in labels["locks"]:
        lock = corpus / entry["path"]
        for target in entry["targets"]:
            report = run_check(lock, target["args"])
            # the lockfile rules' verdicts; WD0xx notes (an input that could not be read, an include
            # the corpus excerpt lacks) say what was not checked and are listed with the quiet ones
            loud = [f for f in report["findings"] if f["severity"] in ("error", "warning") and f["rule"].startswith("WD1")]
            quiet = [f for f in report["findings"] if f not in loud]
            found = set()
            tp = fp = miss = 0
            for f in loud:
                hit = next((i for i, d in enumerate(target["defects"])
                            if d["rule"] == f["rule"] and d["package"] in _packages(f)), None)
                c = per_rule.setdefault(f["rule"], Counter())
                if hit is None:
                    c["fp"] += 1
                    fp += 1
                else:
                    if hit not in found:
                        c["tp"] += 1
                        tp += 1
                    found.add(hit)
            for i, d in enumerate(target["defects"]):
                if i not in found:
                    per_rule.setdefault(d["rule"], Counter())["miss"] += 1
                    miss += 1
            rows.append({"lock": entry["path"], "args": target["args"], "defects": len(target["defects"]),
                         "tp": tp, "fp": fp, "miss": miss,
                         "loud": [f"{f['rule']} {f['severity']}: {f['message']}" for f in loud],
                         "quiet": [f"{f['rule']} {f['severity']}: {f['message']}" for f in quiet]})
    tp = sum(c["tp"] for c in per_rule.values())
    fp = sum(c["fp"] for c in per_rule.values())
    miss = sum(c["miss"] for c in per_rule.values())
    clean = [r for r in rows if r["defects"] == 0]
    return {"rows": rows, "per_rule": {k: dict(v) for k, v in sorted(per_rule.items())},
            "tp": tp, "fp": fp, "miss": miss,
            "precision": tp / (tp + fp) if tp + fp else 1.0,
            "recall": tp / (tp + miss) if tp + miss else 1.0,
            "clean_targets": len(clean), "clean_targets_flagged": sum(1 for r in clean if r["fp"])}


def render(m: dict, heading: str) -> str:
    out = [heading, "",
           f"Locks: {len({r['lock'] for r in m['rows']})}, lock x target checks: {len(m['rows'])}, "
           f"labelled defects: {m['tp'] + m['miss']}, clean checks: {m['clean_targets']} "
           f"(flagged: {m['clean_targets_flagged']}).", "",
           f"Precision (error+warning findings that match a labelled defect): "
           f"{m['tp']}/{m['tp'] + m['fp']} = {m['precision']:.1%}; recall: {m['tp']}/{m['tp'] + m['miss']} "
           f"= {m['recall']:.1%}.", "",
           "| rule | true positives | false positives | misses |", "|---|---|---|---|"]
    for rule, c in m["per_rule"].items():
        out.append(f"| {rule} | {c.get('tp', 0)} | {c.get('fp', 0)} | {c.get('miss', 0)} |")
    out += ["", "| lock | target flags | defects | TP | FP | miss | error/warning findings |", "|---|---|---|---|---|---|---|"]
    for r in m["rows"]:
        loud = "<br>".join(x.replace("|", "\\|")[:160] for x in r["loud"]) or "-"
        out.append(f"| {r['lock']} | {' '.join(r['args']) or '(none)'} | {r['defects']} | {r['tp']} | {r['fp']} | "
                   f"{r['miss']} | {loud} |")
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite the measured section of docs/real-world-lockfiles.md")
    ap.add_argument("--heading", default="## Measured", help="heading of the section written")
    ap.add_argument("--corpus", type=Path, default=CORPUS,
                    help="folder with the locks and their labels.json (default: the tuning corpus)")
    ap.add_argument("--doc", type=Path, default=DOC, help="the document --write rewrites")
    args = ap.parse_args()
    m = measure(args.corpus.resolve())
    text = render(m, args.heading)
    print(text)
    if args.write:
        doc = args.doc.read_text() if args.doc.exists() else "# Real-world lockfiles\n\n"
        start = doc.find(args.heading + "\n")
        if start >= 0:
            end = doc.find("\n## ", start + len(args.heading) + 1)
            doc = doc[:start] + text + (doc[end + 1:] if end >= 0 else "")
        else:
            doc = doc.rstrip("\n") + "\n\n" + text
        args.doc.write_text(doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
