"""The kernel facts in a report: the listing, the per-library verdict table and the coverage
table, and their JSON records; shared by `wheeldoc kernels` and the doctor.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable

from wheeldoc.kernels.facts import Library, LibraryLoad, label
from wheeldoc.render.table import add_table
from wheeldoc.render.text import Lines

MODE_TEXT = {"native": "native", "native+jit": "nat+jit", "jit": "jit", "none": "—",
             "ptx-too-new": "PTX>drv"}
MODE_STYLE = {"native": "green", "native+jit": "green", "jit": "yellow", "none": "dim",
              "ptx-too-new": "bold red"}
VERDICT_STYLE = {"native": "green", "native+jit": "green", "jit": "yellow", "fail": "bold red"}


def display_names(libs: list[Library]) -> dict[str, str]:
    """Short names (member, path under the directory) unless two libraries share one."""
    shorts = Counter(lib.short for lib in libs)
    return {lib.name: lib.short if shorts[lib.short] == 1 else lib.name for lib in libs}


def listing_section(libs: list[Library], names: dict[str, str]):
    from wheeldoc.kernels.fatbin import listing, listing_text

    def section(out: Lines) -> None:
        blocks = [(names[lib.name], lines) for lib in libs if (lines := listing(lib.fatbin))]
        for line in listing_text(blocks).splitlines():
            out.add(line)
        out.add()

    return section


def entry_record(lib: Library, e) -> dict:
    return {"library": lib.name, "container": e.container, "index": e.index, "kind": e.kind,
            "arch": e.arch, "ptx_isa": e.ptx_isa, "compression": e.compression, "size": e.size,
            "identifier": e.identifier, "concat": e.parent is not None}


def library_record(lib: Library, load: LibraryLoad | None) -> dict:
    out = {"library": lib.name, "path": lib.path, "member": lib.member, "format": lib.fatbin.format,
           "section": lib.fatbin.section, "containers": len(lib.containers),
           "entries": len(lib.fatbin.entries), "load": None}
    if load is not None:
        out["load"] = {**load.data(), "embedded_sections": sorted(set(load.sections)),
                       "containers": [
            {"container": x.container.index, "verdict": x.verdict,
             "entry": None if x.prediction.entry is None else label(x.prediction.entry),
             "cuda_error": x.prediction.cuda_error, "concat_blocked": x.concat_blocked}
            for x in load.loads]}
    return out


# -- verdicts ---------------------------------------------------------------------------------


def _target_line(target, libs: list[Library]) -> str:
    from wheeldoc.kernels.facts import newest_ptx

    gpu, driver = target.gpu, target.driver
    head = f"GPU code on {gpu.name} ({gpu.arch})"
    if driver is not None:
        isa = driver.ptx_isa
        who = f"driver {driver.version} (CUDA {driver.cuda_str})" if driver.version \
            else f"a CUDA {driver.cuda_str} driver"
        return f"{head} with {who}, which JIT-compiles PTX up to ISA {isa[0]}.{isa[1]}"
    top = newest_ptx(libs)
    if top is None:
        return f"{head}; no --driver given (no PTX here, so it does not matter)"
    from wheeldoc.data.tables import min_cuda_for_ptx_isa

    need = min_cuda_for_ptx_isa(top)
    needs = f"a driver for CUDA {need[0]}.{need[1]} or newer" if need else "a newer driver"
    return (f"{head}; no --driver given: PTX is assumed to JIT. The newest PTX here is ISA "
            f"{top[0]}.{top[1]}, which needs {needs}; give --driver to check")


def verdict_cells(load: LibraryLoad) -> list[tuple[str, str]]:
    n = load.counts
    fails = ", ".join(k.replace("CUDA_ERROR_", "") + (f" ×{v}" if len(n["errors"]) > 1 else "")
                      for k, v in n["errors"].items())
    where = f" in {', '.join(sorted(set(load.sections)))}" if load.source == "embedded" else ""
    return [(f"{n['containers']}{where}", ""),
            (f"{n['native']}" + (f" ({load.chosen('native')})" if n["native"] else ""),
             "green" if n["native"] else "dim"),
            (f"{n['jit']}" + (f" ({load.chosen('jit')})" if n["jit"] else ""),
             "yellow" if n["jit"] else "dim"),
            (f"{n['fail']}" + (f" ({fails})" if fails else ""), "red" if n["fail"] else "dim"),
            (load.verdict, VERDICT_STYLE[load.verdict])]


def verdict_section(target, loads: list[LibraryLoad], names: dict[str, str],
                    without_code: list[str]):
    header = ["library", "containers", "native", "jit", "fail", "verdict"]

    def section(out: Lines) -> None:
        title = _target_line(target, [x.library for x in loads])
        if not loads:
            out.add((title, "bold"))
            out.add("  no library with GPU code in the inputs")
        else:
            rows = [[(names[x.library.name], "bold"), *verdict_cells(x)] for x in loads]
            add_table(out, title, header, rows)
        if 0 < len(without_code) <= 3:
            out.add(("no GPU code in: ", "dim"), ", ".join(without_code))
        elif without_code:
            out.add((f"{len(without_code)} shared objects without GPU code, e.g. ", "dim"),
                    ", ".join(without_code[:2]))
        out.add()

    return section


# -- coverage ---------------------------------------------------------------------------------


def coverage_section(archs: list[str], table, names: dict[str, str], target,
                     libs: list[Library]):
    gpu, driver = target.gpu, target.driver
    highlight = archs.index(gpu.arch) + 1 if gpu is not None else None
    header = ["library"] + [f"[{a}]" if gpu is not None and a == gpu.arch else a for a in archs]

    def section(out: Lines) -> None:
        if driver is not None:
            isa = driver.ptx_isa
            drv = (f"driver {driver.version or 'for CUDA ' + driver.cuda_str} (PTX ISA up to "
                   f"{isa[0]}.{isa[1]})")
        else:
            drv = "a driver new enough for any PTX here (give --driver to check)"
        title = f"Coverage: which GPU architectures can run each library, with {drv}"
        legend = ("native: cubins run · nat+jit: some containers only as JIT-compiled PTX · jit: "
                  "only PTX, JIT-compiled at load · —: no image (CUDA_ERROR_NO_BINARY_FOR_GPU) · "
                  "PTX>drv: only PTX newer than the driver (CUDA_ERROR_UNSUPPORTED_PTX_VERSION)")
        if not table:
            out.add((title, "bold"))
            out.add("  no library with GPU code in the inputs")
            out.add()
            return
        rows = [[(names[lib.name], "bold")] + [(MODE_TEXT[c["mode"]], MODE_STYLE[c["mode"]])
                                                for c in cells] for lib, cells in table]
        add_table(out, title, header, rows, highlight=highlight, caption=legend)
        out.add()

    return section
