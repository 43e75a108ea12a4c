"""Summarize `wheeldoc doctor --format json` reports of real environments for docs/.

    uv run python scripts/summarize_doctor.py OUT.json DESCRIPTION LABEL=REPORT.json [LABEL=REPORT.json ...]

Writes, per label, the verdict, the count of findings per rule and severity, and the first
line of every error and warning (deduplicated): what docs/real-world-truth.md quotes.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def summary(report: dict) -> dict:
    counts = Counter(f"{f['rule']} {f['severity']}" for f in report["findings"])
    serious = []
    for f in report["findings"]:
        if f["severity"] in ("error", "warning"):
            line = f"{f['rule']} {f['severity']}: {f['message'][:240]}"
            if line not in serious:
                serious.append(line)
    return {"verdict": report.get("verdict"), "counts": dict(sorted(counts.items())), "errors_and_warnings": serious}


def main(argv: list[str]) -> int:
    out, description, pairs = Path(argv[0]), argv[1], argv[2:]
    doc: dict = {"environment": description}
    for pair in pairs:
        label, _, path = pair.partition("=")
        doc[label] = summary(json.loads(Path(path).read_text(encoding="utf-8")))
    out.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
