"""`wheeldoc abi EXT 'torch>=2.9,<2.15'`: which torch releases the extension really loads against.

Every release of the range that uv can pick for the extension's Python and platform (with the
index options given) is fetched (read in place when local) and checked like a single TORCH;
the answer is a table, one row per release, with the verdict, the first failure and whether
the extension's own pin admits it. The findings of each release are kept, at info severity
(each carries `data.torch`), except when no release loads: then the newest release's findings
keep their severity and the exit code says so.
"""

from __future__ import annotations

from wheeldoc.render.text import Lines


def run_range(args, settings, ext, options, cache, report) -> int:
    from wheeldoc.abi.command import uv_platform, uv_python
    from wheeldoc.abi.fetch import offered
    from wheeldoc.core.engine import finalize, input_error_finding
    from wheeldoc.core.errors import InputError
    from wheeldoc.render.output import emit

    report.inputs.append(args.torch)
    indexed = _indexed(args, settings, ext, options)
    if indexed:
        return _run_rows(args, settings, ext, report, [(w.wheel_info().version, w.path, w) for w in indexed],
                         options, cache, source="index")
    from wheeldoc.core.terminal import progress

    progress(f"asking uv which releases of {args.torch} fit the extension (one resolution per release)")
    releases = offered(args.torch, options, python_version=uv_python(ext, settings),
                       python_platform=uv_platform(ext, settings))
    if not releases:
        err = InputError(args.torch, "uv found no release in this range for the extension's Python and "
                                     "platform (check the index options)")
        report.input_errors = 1
        finalize(report, [input_error_finding(err)], settings.selection)
        ext.close()
        return emit(report, settings)
    from wheeldoc.abi.fetch import plan_message, wheels_dir

    progress(plan_message(releases, wheels_dir()))
    return _run_rows(args, settings, ext, report, [(w.version, w.filename, w) for w in releases], options, cache,
                     source="uv")


def _indexed(args, settings, ext, options) -> list:
    """The releases of the range the torch index holds (none when index options are given)."""
    if options.given or getattr(args, "no_torch_index", False):
        return []
    from wheeldoc.abi.command import target_arch
    from wheeldoc.abi.index import covered

    return covered(args.torch, target_arch(ext, settings))


def _run_rows(args, settings, ext, report, releases, options, cache, *, source: str) -> int:
    from wheeldoc.abi import inputs as inputs
    from wheeldoc.abi.command import _analyze
    from wheeldoc.abi.facts import first_failure
    from wheeldoc.abi.fetch import fetch, wheels_dir
    from wheeldoc.abi.index import IndexedWheel
    from wheeldoc.abi.rules import run as run_abi_rules
    from wheeldoc.core.engine import Context, finalize
    from wheeldoc.core.errors import InputError
    from wheeldoc.core.model import Severity
    from wheeldoc.render.output import emit

    rows, per_release = [], []
    ctx = Context(settings.target, settings.selection)
    try:
        for version, filename, wheel in releases:
            try:
                if isinstance(wheel, IndexedWheel):
                    torch_side = inputs.torch_from_source(wheel, f"torch=={version} -> {filename} ({wheel.origin})")
                else:
                    path = fetch(wheel, wheels_dir())
                    torch_side, _ = inputs.torch_from_path(str(path), cache)
                facts, closers = _analyze(args, settings, ext, options, cache, None, torch_side=torch_side)
            except InputError as e:
                rows.append({"torch": version, "wheel": filename, "verdict": "unknown",
                             "first_failure": e.one_line(), "pin_satisfied": None})
                per_release.append([])
                continue
            try:
                findings = run_abi_rules(facts, ctx)
                failure = next((first_failure(facts, r) for r in facts.results
                                if facts.root_verdict(r) == "incompatible"), None)
                rows.append({"torch": version, "wheel": filename, "verdict": facts.verdict,
                             "first_failure": failure, "pin_satisfied": facts.pin_satisfied})
                per_release.append(findings)
            finally:
                for c in closers:
                    c.close()
    finally:
        ext.close()
    any_loads = any(r["verdict"] == "compatible" for r in rows)
    kept = []
    for i, (row, findings) in enumerate(zip(rows, per_release)):
        for f in findings:
            keep_severity = not any_loads and i == 0
            f2 = f if keep_severity else f.with_severity(Severity.INFO)
            kept.append(f2.__class__(f2.rule, f2.title, f2.severity, f2.location,
                                     f"torch {row['torch']}: {f2.message}", f2.evidence, f2.fix,
                                     {**f2.data, "torch": row["torch"]}))
    report.extra["verdict"] = "compatible" if any_loads else "incompatible"
    report.extra["matrix"] = rows
    report.extra["releases_from"] = source
    finalize(report, kept, settings.selection)
    return emit(report, settings, (lambda out: matrix_section(out, ext, args.torch, rows),))


def matrix_section(out: Lines, ext, spec: str, rows: list[dict]) -> None:
    who = f"{ext.name} {ext.version}" if ext.name and ext.version else ext.label
    loads = [r["torch"] for r in rows if r["verdict"] == "compatible"]
    out.add(("Built against: ", "bold"),
            (", ".join(loads) if loads else "none of them", "bold green" if loads else "bold red"),
            f" — {who} over {spec} ({len(rows)} release{'s' if len(rows) != 1 else ''} offered)")
    width = max(len(r["torch"]) for r in rows)
    out.add(f"  {'torch'.ljust(width)}  {'loads':<5}  pin admits  first failure")
    for r in rows:
        ok = r["verdict"] == "compatible"
        pin = {True: "yes", False: "no", None: "-"}[r["pin_satisfied"]]
        out.add(f"  {r['torch'].ljust(width)}  ",
                ("yes  " if ok else ("no   " if r["verdict"] == "incompatible" else "?    "),
                 "green" if ok else "red"),
                f"  {pin:<10} {r['first_failure'] or ''}")
    out.add("")
