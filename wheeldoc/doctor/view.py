"""What `wheeldoc doctor` and `wheeldoc image` show: the verdict line, the environment and the
machine, the ABI table, the kernel tables (wheeldoc kernels' own), then the findings grouped
by severity (errors and warnings in full, information one line each); their JSON records; and
the progress line (on stderr, only on a terminal) while libraries are read.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Callable, Iterator

from wheeldoc.doctor.diagnose import Diagnosis
from wheeldoc.core.model import Finding, Report, Severity
from wheeldoc.core.terminal import escape_controls
from wheeldoc.render.text import Lines

VERDICT_STYLE = {"healthy": "bold green", "degraded": "bold yellow", "broken": "bold red", "unknown": "bold"}
GROUPS = ((Severity.ERROR, "Errors", "bold red"), (Severity.WARNING, "Warnings", "yellow"),
          (Severity.INFO, "Information", "cyan"))
MAX_ABI_ROWS = 40


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MiB" if n >= 1 << 20 else f"{n / 1024:,.0f} KiB"


# -- the verdict -------------------------------------------------------------------------------

def reason_text(verdict: str, root: Finding | None, findings: list[Finding]) -> str:
    if verdict == "healthy":
        infos = sum(f.severity == Severity.INFO for f in findings)
        return "nothing at warning or error level" + (f" ({infos} note{'s' if infos != 1 else ''} below)"
                                                      if infos else "")
    if verdict == "unknown":
        return "an input could not be read"
    assert root is not None
    first = root.message.split(". ")[0].rstrip(".")
    others = sum(f.severity >= Severity.WARNING for f in findings) - 1
    return f"{first} ({root.rule})" + (f"; {others} more problem{'s' if others != 1 else ''} below" if others else "")


def verdict_record(verdict: str, root: Finding | None, findings: list[Finding]) -> dict:
    return {"verdict": verdict, "reason": reason_text(verdict, root, findings),
            "root_cause": None if root is None else {"rule": root.rule, "path": root.location.path,
                                                      "message": root.message}}


# -- records ---------------------------------------------------------------------------------

def environment_record(d: Diagnosis) -> dict:
    facts = d.facts
    env, loc = facts.env, facts.env.location
    t = env.torch
    return {
        "where": facts.where, "site_packages": list(loc.site_packages), "kind": loc.kind,
        "python": loc.python_version or None, "executable": loc.executable, "origin": loc.origin,
        "prefix": loc.prefix, "chosen_by": loc.chosen_by or None,
        "distributions": len(env.distributions),
        "torch": None if facts.torch_dist is None else {
            "version": facts.torch_version, "dist_version": facts.torch_dist.version, "kind": facts.torch_kind,
            "cuda": t.cuda if t else None, "version_file": t.version_file if t else None,
            "installer": facts.torch_dist.installer},
        "cuda_packages": [{"name": p.name, "version": p.version, "cuda_major": p.cuda_major}
                          for p in env.cuda_packages],
        "companions": [{"name": n, "version": facts.installed[n].version}
                       for n in ("torchvision", "torchaudio", "triton", "vllm", "flashinfer-python", "flash-attn",
                                 "xformers") if n in facts.installed],
        "duplicates": sorted(env.duplicates),
        "libraries": d.scan_stats.get("libraries", 0), "libraries_with_gpu_code": len(d.kernel_rows),
        "cache": {k: d.scan_stats[k] for k in ("cache_hits", "cache_misses", "composite_hit") if k in d.scan_stats},
    }


def machine_record(d: Diagnosis) -> dict:
    m = d.facts.machine
    drv = m.driver
    lp = m.library_path
    return {
        "source": m.source, "no_driver": m.no_driver,
        "driver": None if drv is None else {"present": drv.present, "version": drv.version, "cuda": drv.cuda_str,
                                             "source": drv.source, "reason": drv.reason, "notes": list(drv.notes)},
        "gpus": [{"index": g.index, "name": g.name, "arch": g.arch} for g in m.gpus],
        "library_path": None if lp is None else {
            "ld_library_path": list(lp.ld_library_path), "cache": lp.cache,
            "cuda_libraries": [{"name": x.name, "path": x.path, "source": x.source, "major": x.major}
                               for x in lp.libraries]},
        "notes": list(m.notes),
    }


def abi_record(d: Diagnosis) -> dict:
    return {"checked": len(d.abi), "note": d.abi_note, "extensions": [r.record() for r in d.abi]}


# -- text sections -----------------------------------------------------------------------------

def header_section(d: Diagnosis, verdict: str, root: Finding | None, findings: list[Finding],
                   title: str | None = None) -> Callable[[Lines], None]:
    def section(out: Lines) -> None:
        facts = d.facts
        loc = facts.env.location
        what = title or f"wheeldoc doctor: {facts.where}"
        kind = f"{loc.kind}, Python {loc.python_version}" if loc.python_version else loc.kind
        if loc.chosen_by:
            kind += f"; read because: {loc.chosen_by}"
        out.add((what, "bold"), (f"  ({kind})", "dim"))
        out.add((verdict.upper(), VERDICT_STYLE[verdict]), f" — {reason_text(verdict, root, findings)}")
        out.add()

    return section


def environment_section(d: Diagnosis) -> Callable[[Lines], None]:
    def section(out: Lines) -> None:
        facts = d.facts
        env = facts.env
        out.add(("Environment", "bold"))
        if facts.torch_dist is None:
            out.add("  torch        not installed")
        else:
            t = env.torch
            kind = facts.torch_kind or "unknown"
            build = {"cuda": f"CUDA {t.cuda}" if t and t.cuda else "CUDA", "cpu": "CPU-only",
                     "rocm": "ROCm", "xpu": "XPU"}.get(kind, kind)
            said = "torch/version.py: cuda = " + (repr(t.cuda) if t else "?") if t else "no torch/version.py"
            out.add("  torch        ", (facts.torch_version, "bold"), f"  {build}", (f"  ({said})", "dim"))
        pk = env.cuda_packages
        if pk:
            majors = sorted({p.cuda_major for p in pk if p.cuda_major})
            out.add(f"  CUDA pkgs    {len(pk)} (CUDA {', '.join(map(str, majors)) or '?'}): ",
                    (", ".join(f"{p.name} {p.version}" for p in pk[:6]) + (" …" if len(pk) > 6 else ""), "dim"))
        else:
            out.add("  CUDA pkgs    none")
        comps = environment_record(d)["companions"]
        if comps:
            out.add("  companions   " + ", ".join(f"{c['name']} {c['version']}" for c in comps))
        s = d.scan_stats
        cache = "from the cache" if s.get("composite_hit") else \
            f"{s.get('cache_misses', 0)} read, {s.get('cache_hits', 0)} cached ({_mib(s.get('bytes_read', 0))} read)"
        out.add(f"  files        {len(env.distributions)} distributions, {s.get('libraries', 0)} shared objects "
                f"({len(d.kernel_rows)} with GPU code, {len(env.torch_linked)} linking torch); {cache}")
        out.add()

    return section


def machine_section(d: Diagnosis) -> Callable[[Lines], None]:
    def section(out: Lines) -> None:
        facts = d.facts
        m, target = facts.machine, facts.target
        label = {"host": "Machine (this host)", "flags": "Machine (from the flags)",
                 "image": "Machine (the target; the image's own ENV and loader cache)"}[m.source]
        out.add((label, "bold"))
        if m.no_driver:
            why = m.driver.reason if m.driver is not None else "--driver none"
            out.add("  driver       ", ("none", "yellow"), (f"  ({why})", "dim"))
        else:
            drv = target.driver
            out.add("  driver       " + ((f"{drv.version} (CUDA {drv.cuda_str})" if drv.version else
                                      f"a driver for CUDA {drv.cuda_str}") if drv else "not given"))
            gpu = target.gpu
            out.add("  GPU          " + (f"{gpu.name} ({gpu.arch})" if gpu else "not given (no kernel verdicts)"))
        lp = m.library_path
        if lp is not None:
            ld = ":".join(lp.ld_library_path) or "(unset)"
            found = ", ".join(f"{x.name} ({x.source})" for x in lp.libraries[:4]) + (" …" if len(lp.libraries) > 4 else "")
            out.add(f"  lib path     LD_LIBRARY_PATH {ld}; CUDA libraries outside the environment: {found or 'none'}")
        for note in m.notes:
            out.add(("  note         ", "dim"), note)
        out.add()

    return section


def abi_section(d: Diagnosis) -> Callable[[Lines], None]:
    def section(out: Lines) -> None:
        from wheeldoc.render.table import add_table

        title = "Extensions linking torch (ABI: the loader model on the environment's files)"
        if not d.abi:
            out.add((title, "bold"))
            out.add(("  " + d.abi_note, "dim") if d.abi_note else "  none")
            out.add()
            return
        rows = [[(r.library, ""),
                 (r.verdict, {"loads": "green", "fails": "bold red", "unverified": "yellow", "not loaded here": "dim"}.get(r.verdict, "")),
                 (r.detail, "")] for r in d.abi[:MAX_ABI_ROWS]]
        add_table(out, title, ["extension", "verdict", "detail"], rows)
        if len(d.abi) > MAX_ABI_ROWS:
            out.add(f"  … and {len(d.abi) - MAX_ABI_ROWS} more (JSON has them all)")
        out.add()

    return section


def kernel_sections(d: Diagnosis) -> list[Callable[[Lines], None]]:
    """The verdict table (with a GPU) and the coverage table, as `wheeldoc kernels` draws them."""
    from collections import Counter

    from wheeldoc.doctor.kernels import Named
    from wheeldoc.kernels.report import coverage_section

    rows = d.kernel_rows
    if not rows:
        def none(out: Lines) -> None:
            out.add(("GPU code", "bold"))
            out.add("  no library with GPU code in this environment")
            out.add()
        return [none]
    shorts = Counter(r.short for r in rows)
    names = {r.name: r.short if shorts[r.short] == 1 else r.name for r in rows}
    target = d.facts.target
    out = []
    loads = [r.load for r in rows if r.load is not None]
    if loads:
        out.append(_verdict_section(target, loads, names, rows))
    cov = d.coverage
    out.append(coverage_section(cov["archs"], [(Named(r.name), r.cells) for r in rows], names, target, []))
    return out


def _verdict_section(target, loads, names: dict[str, str], rows) -> Callable[[Lines], None]:
    from wheeldoc.kernels.report import verdict_cells
    from wheeldoc.render.table import add_table

    header = ["library", "containers", "native", "jit", "fail", "verdict"]
    gpu, driver = target.gpu, target.driver
    title = f"GPU code on {gpu.name} ({gpu.arch})"
    if driver is not None:
        isa = driver.ptx_isa
        who = f"driver {driver.version} (CUDA {driver.cuda_str})" if driver.version else f"a CUDA {driver.cuda_str} driver"
        title += f" with {who}, which JIT-compiles PTX up to ISA {isa[0]}.{isa[1]}"
    else:
        top = max((r.newest_ptx for r in rows if r.newest_ptx), default=None)
        title += ("; no driver given: PTX is assumed to JIT" + (f" (the newest PTX here is ISA {top[0]}.{top[1]})"
                                                                 if top else ""))

    def section(out: Lines) -> None:
        table = [[(names[x.library.name], "bold"), *verdict_cells(x)] for x in loads]
        add_table(out, title, header, table)
        out.add()

    return section


def findings_section(findings: list[Finding]) -> Callable[[Lines], None]:
    from wheeldoc.render.text import _finding

    def section(out: Lines) -> None:
        for sev, label, style in GROUPS:
            group = [f for f in findings if f.severity == sev]
            if not group:
                continue
            out.add((f"{label} ({len(group)})", style))
            out.add()
            for f in group:
                if sev == Severity.INFO:
                    out.add(("  " + f.location.display(), "bold"), ": ", (f.rule, "cyan"), " ",
                            f.message.splitlines()[0])
                else:
                    _finding(out, f)
            if sev == Severity.INFO:
                out.add()

    return section


def render_text(report: Report, settings, sections, findings=None) -> int:
    """The report as text: the sections, the findings (`findings_section`), the summary line."""
    from wheeldoc.render.output import emit

    return emit(report, settings, tuple(sections), findings=findings)


# -- progress ------------------------------------------------------------------------------------

@contextlib.contextmanager
def progress_bar(label: str) -> Iterator[Callable | None]:
    """A transient progress line on stderr while libraries are read (label, percent, bytes, the
    file), redrawn at most ten times a second and erased at the end; None off a terminal and
    with --quiet."""
    import time

    from wheeldoc.core.terminal import human_size, quiet

    if quiet() or not sys.stderr.isatty():
        yield None
        return
    last = [0.0, False]  # when it was last drawn; whether anything is on screen

    def update(path: str, done: int, total: int, files: int) -> None:
        now = time.monotonic()
        if now - last[0] < 0.1 and done < total:
            return
        last[0], last[1] = now, True
        pct = f"{100 * done // total:3d}% " if total else ""
        name = escape_controls(path.rsplit("/", 1)[-1][:40], single_line=True)
        sys.stderr.write(f"\r\x1b[2K{label} {pct}{human_size(done)} of {human_size(total)} \x1b[2m{name}\x1b[0m")
        sys.stderr.flush()

    try:
        yield update
    finally:
        if last[1]:
            sys.stderr.write("\r\x1b[2K")
            sys.stderr.flush()
