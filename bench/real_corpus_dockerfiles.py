"""Per-rule true positives, false positives and misses of `wheeldoc check` on the real-world
Dockerfile corpus (fixtures/real/dockerfiles), against the hand labels in labels.json.

A finding counts when it is a warning or an error. It is a true positive when the file has a
labelled defect of the same rule inside the same instruction (the labelled line and the finding
line fall in one instruction, as the Dockerfile parser numbers them); otherwise it is a false
positive. A labelled defect with no such finding is a miss. Info findings are listed apart.

    uv run python bench/real_corpus_dockerfiles.py            # the table (markdown)
    uv run python bench/real_corpus_dockerfiles.py --json     # the numbers
    uv run python bench/real_corpus_dockerfiles.py --details  # every finding and miss
    uv run python bench/real_corpus_dockerfiles.py --corpus fixtures/real/heldout/dockerfiles
                                                     # the held-out set (labelled, never tuned on)
    uv run python bench/real_corpus_dockerfiles.py --corpus fixtures/real/heldout/dockerfiles \
        --contexts fixtures/real/heldout/contexts    # each file with the build-context files its
                                                     # repository holds (MANIFEST.md), `check --context`
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "fixtures" / "real" / "dockerfiles"
HELDOUT = ROOT / "fixtures" / "real" / "heldout" / "dockerfiles"


def labels(corpus: Path = CORPUS) -> dict:
    return json.loads((corpus / "labels.json").read_text())


def run_wheeldoc(paths: list[Path], contexts: Path | None = None, flags: tuple[str, ...] = ()) -> list[dict]:
    """One `wheeldoc check --format json` over every file (the CLI, as a user runs it); a file
    with a folder of the same name under `contexts` is checked on its own with `--context`.
    `flags`: more options for every run (`--resolve`)."""
    if contexts is not None:
        own = [p for p in paths if (contexts / p.name).is_dir()]
        rest = [p for p in paths if p not in own]
        out = run_wheeldoc(rest, flags=flags) if rest else []
        for p in own:
            out += _run([str(p), "--context", str(contexts / p.name), *flags])
        return out
    return _run([str(p) for p in paths] + list(flags))


def _run(args: list[str]) -> list[dict]:
    cmd = [sys.executable, "-m", "wheeldoc", "check", "--format", "json", "--fail-on", "never", *args]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode not in (0, 1):
        raise SystemExit(f"wheeldoc failed ({out.returncode}): {out.stderr[-2000:]}")
    return json.loads(out.stdout)["findings"]


def instruction_span(path: Path, line: int) -> tuple[int, int]:
    from wheeldoc.dockerfile.parser import parse_text

    df = parse_text(path.read_text(encoding="utf-8"), str(path))
    ins = df.at_line(line)
    return (ins.start_line, ins.end_line) if ins is not None else (line, line)


def measure(corpus: Path = CORPUS, contexts: Path | None = None, flags: tuple[str, ...] = ()) -> dict:
    lab = labels(corpus)
    rules = lab["rules"]
    names = sorted(lab["files"])
    paths = [corpus / n for n in names]
    findings = run_wheeldoc(paths, contexts, flags)

    def key(f: dict) -> str:  # the labels' key: the path inside the corpus (`case/Dockerfile`)
        path = (ROOT / f["path"]).resolve()
        try:
            return path.relative_to(corpus.resolve()).as_posix()
        except ValueError:
            return f["path"]

    by_file: dict[str, list[dict]] = {}
    for f in findings:
        by_file.setdefault(key(f), []).append(f)
    tp, fp, miss, info = Counter(), Counter(), Counter(), Counter()
    details: list[str] = []
    for name in names:
        path = corpus / name
        defects = lab["files"][name]["defects"]
        spans = [(d["rule"], instruction_span(path, d["line"]), d) for d in defects]
        matched: set[int] = set()
        for f in by_file.get(name, []):
            rule = f["rule"]
            if f["severity"] not in ("warning", "error"):
                info[rule] += 1
                details.append(f"info  {rule} {name}:{f['line']} {f['message'][:160]}")
                continue
            hit = next((i for i, (r, (a, b), _) in enumerate(spans)
                        if r == rule and f["line"] is not None and a <= f["line"] <= b), None)
            if hit is None:
                fp[rule] += 1
                details.append(f"FP    {rule} {name}:{f['line']} [{f['severity']}] {f['message'][:200]}")
            else:
                if hit not in matched:
                    tp[rule] += 1
                matched.add(hit)
                details.append(f"TP    {rule} {name}:{f['line']} [{f['severity']}]")
        for i, (rule, _, d) in enumerate(spans):
            if i not in matched:
                miss[rule] += 1
                details.append(f"MISS  {rule} {name}:{d['line']} {d['why'][:160]}")
    labelled = Counter(d["rule"] for n in names for d in lab["files"][n]["defects"])
    all_tp, all_fp, all_miss = sum(tp.values()), sum(fp.values()), sum(miss.values())
    return {
        "files": len(names), "defects": sum(labelled.values()),
        "per_rule": {r: {"labelled": labelled[r], "tp": tp[r], "fp": fp[r], "miss": miss[r], "info": info[r]}
                     for r in sorted(set(rules) | set(tp) | set(fp) | set(info))},
        "tp": all_tp, "fp": all_fp, "miss": all_miss,
        "precision": all_tp / (all_tp + all_fp) if all_tp + all_fp else 1.0,
        "recall": all_tp / (all_tp + all_miss) if all_tp + all_miss else 1.0,
        "clean_files_with_findings": sorted({key(f) for f in findings
                                             if f["severity"] in ("warning", "error") and key(f) in lab["files"]
                                             and not lab["files"][key(f)]["defects"]}),
        "details": details,
    }


def table(m: dict) -> str:
    rows = ["| rule | labelled defects | true positives | false positives | misses | info findings |",
            "|---|---|---|---|---|---|"]
    for r, v in m["per_rule"].items():
        rows.append(f"| {r} | {v['labelled']} | {v['tp']} | {v['fp']} | {v['miss']} | {v['info']} |")
    rows.append(f"| all | {m['defects']} | {m['tp']} | {m['fp']} | {m['miss']} | "
                f"{sum(v['info'] for v in m['per_rule'].values())} |")
    rows.append("")
    rows.append(f"{m['files']} files; precision (warnings and errors) {m['precision']:.1%}, recall {m['recall']:.1%}; "
                f"{len(m['clean_files_with_findings'])} files labelled clean carry a warning or error.")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--details", action="store_true")
    ap.add_argument("--corpus", type=Path, default=CORPUS,
                    help="folder with the Dockerfiles and their labels.json (default: the tuning corpus)")
    ap.add_argument("--contexts", type=Path, default=None,
                    help="folder of build contexts, one folder per Dockerfile name (checked with --context)")
    ap.add_argument("--resolve", action="store_true",
                    help="check with --resolve: packages the torch-pin table does not hold are read from PyPI")
    a = ap.parse_args()
    m = measure(a.corpus.resolve(), a.contexts.resolve() if a.contexts else None, ("--resolve",) if a.resolve else ())
    if a.json:
        print(json.dumps({k: v for k, v in m.items() if k != "details"}, indent=1))
    else:
        print(table(m))
    if a.details:
        print("\n".join(m["details"]))


if __name__ == "__main__":
    main()
