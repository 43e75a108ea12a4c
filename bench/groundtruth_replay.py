#!/usr/bin/env python3
"""Replay the recorded H200 load results against wheeldoc's CURRENT predictions (no GPU).

    PYTHONPATH=. python3 bench/groundtruth_replay.py [--json] [--show-all]

Reads the runs recorded under docs/groundtruth/ (the first run, which found the
disagreements, and after-fixes/, measured once the model had learned them):

- fixtures (`gpu_groundtruth.json`): each recorded image is rebuilt from the committed fixture
  exactly as bench/gpu_groundtruth.py cut it, its entries are checked against the recorded
  description (so a rebuilt fixture cannot pass silently), and the current model's error and
  chosen entry are compared with the driver's recorded `cuModuleLoadData` result and tag;
- real libraries (`h200_libraries.json`): the container entries recorded on the H200 (the
  after-fixes run stores them; the first run is joined to them by library path, size and
  container index) go through the current model and are compared with the recorded result.

Prints, per run, the agreement then (as recorded) and now, and every row whose verdict changed
or still disagrees. Exit status 1 when any recorded result disagrees with a current prediction.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from gpu_groundtruth import KERNELS, describe, expected_tag, images_of  # noqa: E402

from wheeldoc.kernels.load_model import predict_container, predict_image  # noqa: E402

GROUNDTRUTH = ROOT / "docs" / "groundtruth"
RUNS = {"first run": GROUNDTRUTH, "after fixes": GROUNDTRUTH / "after-fixes"}
SUCCESS = "CUDA_SUCCESS"


def _cuda(device: dict) -> tuple[int, int] | None:
    text = str(device.get("cuda") or device.get("driver_cuda") or "")
    if "." not in text:
        return None
    major, minor = text.split(".", 1)
    return int(major), int(minor)


def replay_fixtures(path: Path) -> dict:
    doc = json.loads(path.read_text())
    cc, isa, cuda = tuple(doc["cc"]), tuple(doc["ptx_isa"]), _cuda(doc["device"])
    manifest = {m["file"]: m for m in json.loads((KERNELS / "manifest.json").read_text())["fixtures"]}
    images: dict[tuple[str, str], dict] = {}
    rows = []
    for rec in doc["rows"]:
        fx = manifest.get(rec["fixture"])
        if fx is None:
            raise SystemExit(f"{path}: fixture {rec['fixture']} is no longer in the manifest")
        if (rec["fixture"], rec["container"]) not in images:
            for img in images_of(fx):
                images[(rec["fixture"], img["container"])] = img
        img = images[(rec["fixture"], rec["container"])]
        now_entries = describe(img["entries"]).replace(" [concat]", "")
        # a standalone cubin's `f` is read from its ptxas options now; recorded before as plain
        if now_entries != rec["entries"].replace(" [concat]", "") and \
                re.sub(r"(sm_\d+)f\b", r"\1", now_entries) != rec["entries"].replace(" [concat]", ""):
            raise SystemExit(f"{path}: {rec['fixture']} [{rec['container']}] now holds "
                             f"{now_entries!r}, the H200 loaded {rec['entries']!r}")
        pred = predict_image(img["format"], img["entries"], cc, isa, cuda)
        error = pred.cuda_error or SUCCESS
        want_tag = expected_tag(fx, img["entries"], pred.entry) if pred.verdict != "fail" else None
        choice = None if want_tag is None or rec["tag"] is None else want_tag == rec["tag"]
        rows.append({
            "name": f"{rec['fixture']} [{rec['container']}]", "entries": rec["entries"],
            "actual": rec["actual_error"], "tag": rec["tag"],
            "then": rec["predicted_error"], "then_entry": rec["predicted_entry"],
            "then_result": bool(rec["result_agrees"]), "choice_then": rec.get("choice_agrees"),
            "now": error, "now_entry": None if pred.entry is None else describe([pred.entry]),
            "now_result": error == rec["actual_error"], "choice_now": choice})
    return _summary(path, doc["device"], rows)


def _entries_by_container(path: Path) -> dict:
    """(library, size, container) -> recorded entries, from every library run that has them."""
    out = {}
    for run in RUNS.values():
        p = run / "h200_libraries.json"
        if not p.exists():
            continue
        for row in json.loads(p.read_text())["rows"]:
            for load in row["loads"]:
                if "entries" in load:
                    out[(row["library"], row["size"], load["container"])] = load["entries"]
    return out


def _entry(rec: dict) -> SimpleNamespace:
    return SimpleNamespace(kind=rec["kind"], sm=rec["sm"], suffix=rec["suffix"],
                           code_version=tuple(rec["code_version"]),
                           parent=object() if rec["concat"] else None)


def replay_libraries(path: Path) -> dict:
    doc = json.loads(path.read_text())
    summary = doc["summary"]
    cc = tuple(int(x) for x in summary["cc"].split("."))
    cuda = _cuda(summary)
    from wheeldoc.data.tables import ptx_isa_for_cuda

    isa = ptx_isa_for_cuda(cuda)
    known = _entries_by_container(path)
    rows = []
    for lib in doc["rows"]:
        for load in lib["loads"]:
            recs = load.get("entries") or known.get((lib["library"], lib["size"], load["container"]))
            if recs is None:
                raise SystemExit(f"{path}: no recorded entries for {lib['library']} container "
                                 f"{load['container']}")
            entries = [_entry(r) for r in recs]
            pred = predict_container(entries, cc, isa, driver_cuda=cuda)
            error = pred.cuda_error or SUCCESS
            rows.append({
                "name": f"{Path(lib['library']).name} [{load['container']}]",
                "entries": ", ".join(f"{r['kind']} sm_{r['sm']}{r['suffix']}"
                                     + (f" ({r['code_version'][0]}.{r['code_version'][1]})"
                                        if r["kind"] == "ptx" else "")
                                     + (" [concat]" if r["concat"] else "") for r in recs),
                "actual": load["actual_error"], "tag": None,
                "then": load["predicted_error"], "then_entry": None,
                "then_result": bool(load["agrees"]), "choice_then": None, "now": error,
                "now_entry": None, "now_result": error == load["actual_error"],
                "choice_now": None})
    return _summary(path, {"name": summary["device"], "cuda": summary["driver_cuda"]}, rows)


def _summary(path: Path, device: dict, rows: list[dict]) -> dict:
    for r in rows:
        r["then_agrees"] = r["then_result"] and r["choice_then"] is not False
        r["now_agrees"] = r["now_result"] and r["choice_now"] is not False
    return {
        "file": str(path.relative_to(ROOT)), "device": device, "rows": len(rows),
        "results_then": sum(r["then_result"] for r in rows),
        "results_now": sum(r["now_result"] for r in rows),
        "choices_then": sum(r["choice_then"] is not None for r in rows),
        "choices_agree_then": sum(bool(r["choice_then"]) for r in rows),
        "choices_now": sum(r["choice_now"] is not None for r in rows),
        "choices_agree_now": sum(bool(r["choice_now"]) for r in rows),
        "agree_now": sum(r["now_agrees"] for r in rows),
        "changed": [r for r in rows if r["then"] != r["now"] or r["then_agrees"] != r["now_agrees"]],
        "disagree_now": [r for r in rows if not r["now_agrees"]],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the summaries as JSON")
    ap.add_argument("--show-all", action="store_true", help="list unchanged rows too")
    args = ap.parse_args()
    results = []
    for label, run in RUNS.items():
        if (run / "gpu_groundtruth.json").exists():
            results.append({"run": label, "kind": "fixtures",
                            **replay_fixtures(run / "gpu_groundtruth.json")})
        if (run / "h200_libraries.json").exists():
            results.append({"run": label, "kind": "libraries",
                            **replay_libraries(run / "h200_libraries.json")})
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        for r in results:
            then = f"results {r['results_then']}/{r['rows']}"
            now = f"results {r['results_now']}/{r['rows']}"
            if r["choices_then"] or r["choices_now"]:
                then += f", chosen entry {r['choices_agree_then']}/{r['choices_then']}"
                now += f", chosen entry {r['choices_agree_now']}/{r['choices_now']}"
            print(f"{r['file']} ({r['run']}, {r['kind']}): as recorded {then}; "
                  f"current predictions {now}")
            for row in (r["changed"] if not args.show_all else r["changed"] + r["disagree_now"]):
                mark = "ok " if row["now_agrees"] else "NO "
                print(f"  {mark}{row['name']}: {row['entries']} | was {row['then']} | now "
                      f"{row['now']} {row['now_entry'] or ''}| driver {row['actual']}"
                      + (f" tag {row['tag']}" if row["tag"] is not None else ""))
    return 0 if all(r["agree_now"] == r["rows"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
