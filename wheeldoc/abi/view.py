"""What `wheeldoc abi` shows: the verdict per extension object, the missing torch symbols grouped
by library and namespace, where the CUDA libraries came from; and the JSON records."""

from __future__ import annotations

from collections.abc import Callable

from wheeldoc.abi.facts import first_failure
from wheeldoc.render.text import Lines

VERDICT_STYLE = {"compatible": "bold green", "incompatible": "bold red", "unknown": "bold yellow"}


def extension_records(facts) -> list[dict]:
    out = []
    for r in facts.results:
        verdict = facts.root_verdict(r)
        out.append({
            "library": r.root,
            "verdict": verdict,
            "first_failure": first_failure(facts, r) if verdict == "incompatible" else None,
            "unreadable": list(r.unreadable),
            "missing_libraries": [{"soname": m.soname, "needed_by": m.needed_by} for m in r.missing_libraries],
            "missing_symbols": len(r.missing_symbols),
            "unverified_symbols": [{"symbol": u.symbol, "demangled": facts.demangled.get(u.symbol, u.symbol),
                                    "version": u.version, "unread": list(u.unread)}
                                   for u in r.unresolved if u.status == "unverified"],
            "matched_by_version_name": [s for s, _ in r.by_version_name],
            "closure": [{"library": n.display, "origin": n.origin, "how": n.how,
                         "metadata_only": n.placeholder} for n in r.closure],
            "chosen_at_run_time": _choice(facts, r.root),
            "system_packages": r.system_packages,
        })
    return out


def _choice(facts, root: str) -> dict | None:
    c = facts.choices.get(root)
    return None if c is None else {"reason": c.reason, "group": c.group, "chosen": c.chosen}


def sections(facts) -> tuple[Callable[[Lines], None], ...]:
    return (lambda out: verdict_section(out, facts), lambda out: symbols_section(out, facts),
            lambda out: sources_section(out, facts))


def verdict_section(out: Lines, facts) -> None:
    ext = facts.extension
    who = f"{ext.name} {ext.version}" if ext.name and ext.version else ext.label
    out.add(("ABI verdict: ", "bold"), (facts.verdict, VERDICT_STYLE[facts.verdict]),
            f" — {who} on {facts.torch_display} ({facts.torch_build}); system target {facts.target.label}")
    width = max((len(r.root) for r in facts.results), default=0)
    for r in facts.results:
        verdict = facts.root_verdict(r)
        if verdict == "unknown":
            out.add(f"  {r.root.ljust(width)}  ", ("not checked", "yellow"),
                    f": {', '.join(r.unreadable)} could not be read")
            continue
        ok = verdict == "compatible"
        choice = facts.choices.get(r.root)
        note = ""
        if choice is not None and choice.chosen is not True:
            note = "  (not loaded for this target)" if choice.chosen is False else "  (one of a run-time choice)"
        elif choice is not None:
            note = "  (chosen for this target)"
        out.add(f"  {r.root.ljust(width)}  ", ("loads" if ok else "cannot load", "green" if ok else ("dim" if note and choice.chosen is not True else "red")),
                ("" if ok else f": {first_failure(facts, r)}") + note)
    if not facts.results:
        out.add("  (no shared objects to load)")
    out.add("")


def symbols_section(out: Lines, facts) -> None:
    from wheeldoc.binary.demangle import function_name

    groups: dict[str, dict[str, list[str]]] = {}
    for r in facts.results:
        for u in r.missing_symbols:
            dem = facts.demangled.get(u.symbol, u.symbol)
            qualified = function_name(dem)
            ns = "::".join(qualified.split("::")[:2]) if qualified.count("::") >= 2 else \
                (qualified.split("::")[0] if "::" in qualified else "(global)")
            for lib in u.libraries:
                line = dem
                rel = facts.relatives.get(u.symbol)
                if rel is not None:
                    line += f"   -> torch has {rel.demangled}"
                bucket = groups.setdefault(lib, {}).setdefault(ns, [])
                if line not in bucket:
                    bucket.append(line)
    if not groups:
        return
    out.add(("Undefined symbols, by library and namespace:", "bold"))
    for lib, by_ns in sorted(groups.items()):
        out.add(f"  {lib}")
        for ns, lines in sorted(by_ns.items()):
            out.add(f"    {ns} ({len(lines)})")
            for line in lines[:20]:
                out.add(f"      {line}")
            if len(lines) > 20:
                out.add(f"      … and {len(lines) - 20} more")
    out.add("")


def sources_section(out: Lines, facts) -> None:
    from wheeldoc.abi.index import IndexedWheel

    for source, _ in facts.torch.sources:
        if isinstance(source, IndexedWheel):
            out.add(("torch: ", "bold"), f"source: {source.origin}, built from {source.path} "
                    f"(sha256 {source.sha256[:16]}…); --no-torch-index reads the wheel itself")
            if "standing in" in facts.torch.label:
                out.add("  the build asked for is not indexed: every indexed build of this release gives "
                        "this extension the same answer, so this one stands in")
    if facts.cuda_packages or facts.cuda_unknown:
        out.add(("CUDA libraries: ", "bold"), {"environment": "installed beside torch",
                                               "wheels": "read from the wheels uv picked",
                                               "metadata": "judged from torch's Requires-Dist",
                                               "none": "none required"}.get(facts.cuda_mode, facts.cuda_mode))
        for line in facts.cuda_packages[:12]:
            out.add(("  ", ""), (line, "dim"))
        if len(facts.cuda_packages) > 12:
            out.add(("  ", ""), (f"… and {len(facts.cuda_packages) - 12} more", "dim"))
        for name in facts.cuda_unknown:
            out.add(f"  {name}: unknown to wheeldoc's table and not read")
    by_name = sorted({s for r in facts.results for s, _ in r.by_version_name})
    unverified = sorted({u.symbol for r in facts.results for u in r.unresolved if u.status == "unverified"})
    if by_name:
        out.add((f"  {len(by_name)} symbol{'s' if len(by_name) != 1 else ''} matched by version name only "
                 f"(library not read): ", "dim"), (", ".join(by_name[:4]) + (" …" if len(by_name) > 4 else ""), "dim"))
    if unverified:
        out.add(f"  {len(unverified)} symbol{'s' if len(unverified) != 1 else ''} could not be checked "
                f"(no library read defines them): " + ", ".join(facts.demangled.get(s, s) for s in unverified[:4])
                + (" …" if len(unverified) > 4 else ""))
    if facts.cuda_packages or facts.cuda_unknown or by_name or unverified:
        out.add("")
