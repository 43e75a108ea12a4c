"""`wheeldoc index add TORCH.whl…` / `wheeldoc index list`: the offline torch ABI index.

`add` reads each torch wheel once (members inflated one at a time, nothing extracted) and keeps
what the ABI model needs in the local index of the cache folder, so that `wheeldoc abi EXT
torch==VERSION+LOCAL` answers offline from then on (a `+cu130` build of the PyTorch index, a
nightly, a vendor build). `list` shows the shipped and local entries.
"""

from __future__ import annotations

import argparse
import json
import sys

EXIT_OK, EXIT_ERROR = 0, 2


def run(args: argparse.Namespace) -> int:
    from wheeldoc.abi.index import _catalog, local_dir, stores

    if args.action == "add":
        if not args.wheels:
            print("wheeldoc: error: index add needs at least one torch wheel", file=sys.stderr)
            return EXIT_ERROR
        return _add(args.wheels)
    rows = []
    for origin, folder in stores():
        for key, file in _catalog(str(folder)).items():
            rows.append({"origin": origin, "version": key.version, "local": key.local, "arch": key.arch, "file": file})
    if args.format == "json":
        print(json.dumps({"local_index": str(local_dir()), "entries": rows}, indent=1))
    else:
        for r in rows:
            print(f"{r['origin']:<12} torch {r['version']}{'+' + r['local'] if r['local'] else '':<8} {r['arch']}")
        print(f"{len(rows)} entries (local index: {local_dir()})")
    return EXIT_OK


def _add(wheels: list[str]) -> int:
    import os

    from wheeldoc.abi.index import _catalog, key_of, local_dir
    from wheeldoc.abi.index_build import extract
    from wheeldoc.abi.index_pack import pack_entry
    from wheeldoc.core.errors import InputError

    folder = local_dir()
    folder.mkdir(parents=True, exist_ok=True)
    catalog_path = folder / "catalog.json"
    try:
        catalog = json.loads(catalog_path.read_text(encoding="utf-8"))["entries"]
    except (OSError, ValueError, KeyError, TypeError):
        catalog = []
    code = EXIT_OK
    for wheel in wheels:
        try:
            entry = extract(wheel)
        except InputError as e:
            print(f"wheeldoc: error: {e.one_line()}", file=sys.stderr)
            code = EXIT_ERROR
            continue
        if entry["info"]["name"].replace("_", "-") != "torch" and not any(
                n.startswith("torch/lib/") for n, _, _ in entry["members"]):
            print(f"wheeldoc: error: {wheel}: not a torch wheel", file=sys.stderr)
            code = EXIT_ERROR
            continue
        key = key_of(entry)
        file = f"torch-{key.version}{'+' + key.local if key.local else ''}-{key.arch}.wdti"
        tmp = folder / (file + f".{os.getpid()}.tmp")
        tmp.write_bytes(pack_entry(entry, None))
        os.replace(tmp, folder / file)
        catalog = [r for r in catalog if (r.get("version"), r.get("local"), r.get("arch")) != (key.version, key.local, key.arch)]
        catalog.append({"version": key.version, "local": key.local, "arch": key.arch, "file": file,
                        "wheel": entry["wheel"]["filename"], "sha256": entry["wheel"]["sha256"],
                        "size": entry["wheel"]["size"]})
        print(f"added {key.label} from {os.path.basename(wheel)} (sha256 {entry['wheel']['sha256'][:16]}…)")
    tmp = catalog_path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"entry_version": 1, "entries": catalog}, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, catalog_path)
    _catalog.cache_clear()
    return code
