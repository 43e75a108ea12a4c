"""wheeldoc's verdicts on the real-world truth table (docs/real-world-truth.md).

The ground truth (docs/groundtruth/real-world/dlopen.json) is made by
scripts/probe_real_world.py: real `dlopen` after `import torch`, one fresh process per shared
object, in throwaway uv venvs. This module runs `wheeldoc abi EXT.whl TORCH.whl` on the same
wheels (the CUDA wheels read in place from the same folders, `--no-index`) and compares, per
object and per pair:

    uv run python -m tests.abi.realworld            # rewrites wheeldoc.json and the doc's tables

tests/abi/test_real_world.py re-checks it wherever the wheels are cached.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TRUTH = ROOT / "docs" / "groundtruth" / "real-world" / "dlopen.json"
VERDICTS = ROOT / "docs" / "groundtruth" / "real-world" / "wheeldoc.json"
DOC = ROOT / "docs" / "real-world-truth.md"
FOLDERS = [Path(os.environ.get("WHEELDOC_WHEELS", "/work/wheels")), Path("/opt/wheels"), Path("/opt/pypi/files"),
           Path("/opt/pypi-more/files")]


def find(name: str) -> Path | None:
    for folder in FOLDERS:
        if (folder / name).is_file():
            return folder / name
    return None


def pairs() -> list[dict]:
    return json.loads(TRUTH.read_text())["pairs"]


def wheeldoc_verdict(pair: dict) -> dict | None:
    """`wheeldoc abi` on the pair's wheels (JSON report), or None when a wheel is not cached."""
    ext, torch = find(pair["extension"]), find(pair["torch_wheel"])
    if ext is None or torch is None:
        return None
    from wheeldoc.cli import main

    links = [a for f in FOLDERS if f.is_dir() for a in ("--find-links", str(f))]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        code = main(["abi", str(ext), str(torch), "--no-index", *links, "--python-version", "3.11",
                     "--format", "json", "--fail-on", "never", "-o", str(out)])
        if code == 2 or not out.exists():
            return None  # a wheel of the pair (a CUDA dependency) is not in the folders
        doc = json.loads(out.read_text())
    return {"exit": code, "verdict": doc.get("verdict"),
            "objects": {e["library"]: {"verdict": e["verdict"], "first_failure": e["first_failure"],
                                       "chosen_at_run_time": e.get("chosen_at_run_time")}
                        for e in doc.get("extensions", [])},
            "findings": sorted({f["rule"] for f in doc.get("findings", []) if f["severity"] in ("error", "warning")})}


def compare(pair: dict, verdict: dict) -> dict:
    """Per object: dlopen's answer against wheeldoc's loader verdict; per pair: a false
    "incompatible" is wheeldoc saying so while every object loads."""
    truth = {o["object"]: o for o in pair["objects"]}
    rows = []
    for obj, w in sorted(verdict["objects"].items()):
        t = truth.get(obj)
        if t is None:
            continue
        host = [p for p in t.get("outside", []) if "/cuda" in p]
        predicted = {"compatible": True, "incompatible": False}.get(w["verdict"])
        rows.append({"object": obj, "dlopen": t["loads"], "wheeldoc": w["verdict"],
                     "agree": predicted is not None and predicted == t["loads"] and not host,
                     "dlopen_error": t.get("error"), "wheeldoc_failure": w["first_failure"],
                     "host_library": host})
    all_load = all(o["loads"] for o in pair["objects"]) and bool(pair["objects"])
    return {"torch": pair["torch"], "extension": pair["extension"], "objects": rows,
            "probed": len(pair["objects"]), "compared": len(rows),
            "agree": sum(r["agree"] for r in rows), "all_load": all_load,
            "verdict": verdict["verdict"],
            "false_incompatible": all_load and verdict["verdict"] == "incompatible",
            "findings": verdict.get("findings", [])}


BEGIN, END = "<!-- tables: tests/abi/realworld.py -->", "<!-- end of tables -->"


def write_tables(results: list[dict]) -> None:
    """The doc's generated part: the totals, one row per pair, and every disagreement."""
    total = sum(c["compared"] for c in results)
    agree = sum(c["agree"] for c in results)
    false_inc = [c for c in results if c["false_incompatible"]]
    lines = [BEGIN, "",
             f"**{len(results)} pairs, {total} objects compared: {agree} agree "
             f"({100 * agree / total:.1f} %); pairs where wheeldoc says incompatible and every object "
             f"loads: {len(false_inc)}.**" if total else "no pairs compared", "",
             "| torch | extension | objects loading (dlopen) | wheeldoc agrees | wheeldoc verdict | every object loads |",
             "|---|---|---|---|---|---|"]
    for c in results:
        loads = sum(1 for o in c["objects"] if o["dlopen"])
        lines.append(f"| {c['torch']} | {c['extension']} | {loads}/{c['compared']} | {c['agree']}/{c['compared']} "
                     f"| {c['verdict']} | {'yes' if c['all_load'] else 'no'} |")
    bad = [(c, o) for c in results for o in c["objects"] if not o["agree"]]
    lines += ["", f"### Disagreements ({len(bad)})", ""]
    if bad:
        lines += ["| torch | object | dlopen | wheeldoc | dlopen's error | wheeldoc's first failure |", "|---|---|---|---|---|---|"]
        for c, o in bad:
            err = (o["dlopen_error"] or "").replace("|", "\\|").split(": ", 1)[-1][:140]
            lines.append(f"| {c['torch']} | {c['extension'].split('-')[0]} `{o['object']}` | "
                         f"{'loads' if o['dlopen'] else 'fails'} | {o['wheeldoc']} | {err} | "
                         f"{(o['wheeldoc_failure'] or '').replace('|', '/')[:140]} |")
    else:
        lines.append("none")
    lines += ["", END]
    text = DOC.read_text() if DOC.exists() else ""
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + "\n".join(lines) + text[text.index(END) + len(END):]
    else:
        text = text + "\n" + "\n".join(lines) + "\n"
    DOC.write_text(text)


def main(argv: list[str] | None = None) -> int:
    """`--only-new`: keep the verdicts already in wheeldoc.json, run only the pairs it lacks."""
    only_new = "--only-new" in (argv if argv is not None else sys.argv[1:])
    kept = json.loads(VERDICTS.read_text())["pairs"] if only_new and VERDICTS.exists() else []
    have = {(c["torch"], c["extension"]) for c in kept}
    results = list(kept)
    for pair in pairs():
        if (pair["torch"], pair["extension"]) in have:
            continue
        v = wheeldoc_verdict(pair)
        if v is None:
            print(f"not cached: {pair['torch']} {pair['extension']}", file=sys.stderr)
            continue
        c = compare(pair, v)
        results.append(c)
        VERDICTS.write_text(json.dumps({"pairs": results}, indent=1) + "\n")  # progress survives
        print(f"{c['torch']:20} {c['extension'][:44]:44} {c['agree']}/{c['compared']} "
              f"{c['verdict']} all_load={c['all_load']}", flush=True)
    VERDICTS.write_text(json.dumps({"pairs": results}, indent=1) + "\n")
    write_tables(results)
    total = sum(c["compared"] for c in results)
    agree = sum(c["agree"] for c in results)
    print(f"objects: {agree}/{total} agree; false incompatible pairs: "
          f"{sum(c['false_incompatible'] for c in results)} of {len(results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
