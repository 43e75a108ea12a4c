#!/usr/bin/env python3
"""Build the payload for the H200 ground truth on real wheels (bench/h200_real_groundtruth.py).

    uv run python bench/h200_real_payload.py WHEEL... --out DIR [--budget-mib 56]

Every GPU container of every wheel is read with wheeldoc (headers only) and grouped by what
decides its load on an H200 (the entries it holds: kind, arch with suffix, PTX ISA) and by
wheeldoc's prediction for an H200 with a CUDA 13.0 driver. The payload keeps, per package,
the smallest container of every group first (so every distinct case is loaded at least once),
then more containers spread over the package while its share of the budget lasts. Each kept
container is written as its raw bytes (a whole fatbin container for a library, the file itself
for a standalone cubin or PTX text) into one blob per package, with a manifest that says where
it came from and how many containers each group holds in the wheel (so the report can say
what part of each package was loaded). Nothing is decompressed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wheeldoc.binary.members import WheelArchive  # noqa: E402
from wheeldoc.kernels.facts import LOADABLE, read_inputs  # noqa: E402
from wheeldoc.kernels.fatbin import container_bytes, entry_image  # noqa: E402
from wheeldoc.kernels.load_model import predict_image  # noqa: E402

H200 = ((9, 0), (9, 0), (13, 0))  # cc, driver PTX ISA, driver CUDA (580.x)
MAX_ITEM = 17 << 20
SMALL_PACKAGE = 12  # containers: a package this small gets the large share


def package_of(wheel: str) -> str:
    return re.split(r"-\d", os.path.basename(wheel), 1)[0].lower().replace("_", "-")


def signature(entries) -> str:
    return ", ".join(f"{e.kind} {e.arch}" + (f" {e.ptx_isa}" if e.kind == "ptx" else "")
                     for e in entries if e.kind in LOADABLE)


def candidates(wheel: str):
    """(member, format, container, entries, size) for every loadable container of the wheel."""
    facts = read_inputs([wheel], None)
    for lib in facts.libraries:
        for c in lib.containers:
            size = c.end - c.offset if lib.fatbin.format in ("elf", "fatbin") else c.fat_size
            yield lib, c, size


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheels", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--share-mib", type=float, default=6, help="per package")
    ap.add_argument("--small-share-mib", type=float, default=19,
                    help=f"per package of at most {SMALL_PACKAGE} containers")
    ap.add_argument("--include", action="append", default=[],
                    help="a member always sent (first container), e.g. one cuobjdump fails on")
    ap.add_argument("--extract-cubins", action="append", default=[], metavar="MEMBER",
                    help="also send each cubin entry (≤ 3 MiB) of MEMBER's first container as a "
                         "standalone cubin, when the container is too large to send whole")
    ap.add_argument("--extract-sms", default="", help="only these SMs, e.g. 60,70,90")
    args = ap.parse_args()
    out = Path(args.out)
    (out / "blobs").mkdir(parents=True, exist_ok=True)
    manifest = {"target": {"cc": [9, 0], "driver_ptx_isa": [9, 0], "driver_cuda": [13, 0]},
                "packages": []}
    for wheel in args.wheels:
        pkg = package_of(wheel)
        groups: dict[tuple[str, str], list] = {}
        total = 0
        for lib, c, size in candidates(wheel):
            pred = predict_image(lib.fatbin.format, c.entries, *H200)
            outcome = pred.verdict if pred.verdict != "fail" else pred.cuda_error
            groups.setdefault((signature(c.entries), outcome), []).append((size, lib, c, pred))
            total += 1
        share = int((args.small_share_mib if total <= SMALL_PACKAGE else args.share_mib) * (1 << 20))
        chosen, used, too_big = [], 0, 0
        for items in groups.values():
            for it in items:
                if it[1].member in args.include and it[2].index == 0:
                    chosen.append(it)
                    used += it[0]
        ordered = sorted(groups.items(), key=lambda kv: min(s for s, *_ in kv[1]))
        for _, items in ordered:  # the smallest of every group first
            items.sort(key=lambda it: it[0])
            if items[0][0] > MAX_ITEM or (chosen and used + items[0][0] > share):
                too_big += 1
                continue
            if any(it is items[0] for it in chosen):
                continue
            if used + items[0][0] <= share or not chosen:
                chosen.append(items[0])
                used += items[0][0]
        rest = [it for _, items in ordered for it in items[1:] if it[0] <= MAX_ITEM]
        step = max(1, len(rest) // 400)
        for it in rest[::step]:  # then a spread of the others while the share lasts
            if used + it[0] > share or any(it is c for c in chosen):
                continue
            chosen.append(it)
            used += it[0]
        blob = out / "blobs" / f"{pkg}.bin"
        items = []
        by_member: dict[str, list] = {}
        extra = [it for _, items_ in groups.items() for it in items_
                 if it[1].member in args.extract_cubins and it[2].index == 0]
        chosen.extend(it for it in extra if not any(it is c for c in chosen))

        def it_is_extra(its, c) -> bool:  # sent only as extracted cubins
            return c.end - c.offset > MAX_ITEM or not any(
                it[2] is c and it[1].member in args.include for it in its) and \
                c.end - c.offset > share
        for it in chosen:
            by_member.setdefault(it[1].member, []).append(it)
        with open(blob, "wb") as fh, WheelArchive(wheel) as archive:
            for member, its in by_member.items():
                with archive.open(member) as data:
                    for size, lib, c, pred in its:
                        if member in args.extract_cubins and c.index == 0:
                            for e in c.entries:
                                sms = {int(x) for x in args.extract_sms.split(",") if x}
                                if e.kind != "cubin" or (sms and e.sm not in sms):
                                    continue
                                img = entry_image(data.buf, e, wheel, member=member)
                                if len(img) > 3 << 20:
                                    continue
                                p = predict_image("cubin", [e], *H200)
                                items.append({"member": member, "format": "cubin",
                                              "container": c.index, "entry": e.index,
                                              "offset_in_member": e.payload_offset,
                                              "blob_offset": fh.tell(), "size": len(img),
                                              "entries": signature([e]),
                                              "predicted": p.verdict if p.verdict != "fail"
                                              else p.cuda_error, "predicted_entry": None})
                                fh.write(img)
                                used += len(img)
                            if it_is_extra(its, c):
                                continue
                        if lib.fatbin.format in ("elf", "fatbin"):
                            raw = container_bytes(data.buf, c)
                        else:
                            raw = bytes(data.buf)
                        off = fh.tell()
                        fh.write(raw)
                        items.append({"member": member, "format": lib.fatbin.format,
                                      "container": c.index, "offset_in_member": c.offset,
                                      "blob_offset": off, "size": len(raw),
                                      "entries": signature(c.entries),
                                      "predicted": pred.verdict if pred.verdict != "fail"
                                      else pred.cuda_error,
                                      "predicted_entry": None if pred.entry is None else
                                      signature([pred.entry])})
        manifest["packages"].append({
            "package": pkg, "wheel": os.path.basename(wheel), "containers_in_wheel": total,
            "groups_in_wheel": len(groups), "groups_too_large": too_big,
            "containers_sent": len(items), "bytes_sent": used, "blob": f"blobs/{pkg}.bin",
            "group_sizes": {f"{k[0]} -> {k[1]}": len(v) for k, v in groups.items()},
            "items": items})
        print(f"{pkg}: {total} containers in {len(groups)} groups; sending {len(items)} "
              f"({used / 2**20:.1f} MiB), {too_big} groups only larger than {MAX_ITEM >> 20} MiB "
              f"or past the share",
              flush=True)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
