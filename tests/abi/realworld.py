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
            return {"exit": code, "verdict": "error", "objects": {}}
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


def main() -> int:
    results = []
    for pair in pairs():
        v = wheeldoc_verdict(pair)
        if v is None:
            print(f"not cached: {pair['torch']} {pair['extension']}", file=sys.stderr)
            continue
        c = compare(pair, v)
        results.append(c)
        print(f"{c['torch']:20} {c['extension'][:44]:44} {c['agree']}/{c['compared']} "
              f"{c["verdict"]} all_load={c['all_load']}", flush=True)
    VERDICTS.write_text(json.dumps({"pairs": results}, indent=1) + "\n")
    total = sum(c["compared"] for c in results)
    agree = sum(c["agree"] for c in results)
    print(f"objects: {agree}/{total} agree; false incompatible pairs: "
          f"{sum(c['false_incompatible'] for c in results)} of {len(results)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
