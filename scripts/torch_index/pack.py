"""Pack raw entries (extract.py) into the index shipped in wheeldoc/data/torch_index/.

    uv run python scripts/torch_index/pack.py RAW_DIR [OUT_DIR]

Writes `names.bin` (every exported symbol name of every entry, once), `lookup.bin` (their
hashes, for finding a name's id without decoding them), one `<key>.wdti` per entry
(scripts/torch_index/README.md tells how the raw entries were made) and `catalog.json`: per
entry its key (release, local build, platform) and provenance (the wheel's file name, sha256 and
size as downloaded from the package index).
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

from wheeldoc.abi.index import ENTRY_VERSION, key_of
from wheeldoc.abi.index_pack import LOOKUP, NAMES, pack_entry, pack_lookup, pack_names


def main(argv: list[str]) -> int:
    raw_dir = Path(argv[0])
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[2] / "wheeldoc/data/torch_index"
    entries = []
    for f in sorted(raw_dir.glob("*.json.gz")):
        e = json.load(gzip.open(f, "rt", encoding="utf-8"))
        if e.get("entry_version") != ENTRY_VERSION:
            raise SystemExit(f"{f}: entry version {e.get('entry_version')}, expected {ENTRY_VERSION}")
        entries.append(e)
    names = sorted({n for e in entries for lib in e["elf"].values() for n in lib["symbols"]["names"][1:]})
    ids = {n: i for i, n in enumerate(names)}
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.wdti"):
        old.unlink()
    (out / NAMES).write_bytes(pack_names(names))
    (out / LOOKUP).write_bytes(pack_lookup(names))
    catalog = []
    for e in entries:
        key = key_of(e)
        file = f"torch-{key.version}{'+' + key.local if key.local else ''}-{key.arch}.wdti"
        (out / file).write_bytes(pack_entry(e, ids))
        catalog.append({"version": key.version, "local": key.local, "arch": key.arch, "file": file,
                        "wheel": e["wheel"]["filename"], "sha256": e["wheel"]["sha256"], "size": e["wheel"]["size"]})
    catalog.sort(key=lambda r: (r["arch"], [int(x) if x.isdigit() else x for x in r["version"].split(".")], r["local"] or ""))
    (out / "catalog.json").write_text(json.dumps({"entry_version": ENTRY_VERSION, "source": "https://pypi.org/simple/torch/",
                                                  "entries": catalog}, indent=1) + "\n", encoding="utf-8")
    total = sum(p.stat().st_size for p in out.iterdir())
    print(f"{len(entries)} entries, {len(names)} names, {total} bytes in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
