#!/usr/bin/env python3
"""`wheeldoc kernels` on libcublasLt.so.13 (552 MB, 5,737 entries) against `cuobjdump -lelf -lptx`.

    uv run python bench/bench_kernels.py [LIBRARY] [--wheel WHEEL] [--runs N]

Without LIBRARY, libcublasLt.so.13 is extracted from the local nvidia-cublas wheel (--wheel, or
the newest nvidia_cublas-13*.whl in /work/wheels) into a temporary folder, removed at the end
(the wheel itself is read in place for the wheel rows). Every command
is a fresh child process, as a user would run it: the `wheeldoc` command of an install end to end
(interpreter start, imports, reading, output), from a scratch working directory. The install is
made here: this checkout built into a wheel (`uv build`) and installed with `uv pip install` into
a fresh virtual environment, whose bytecode is compiled (as `uv tool install` / pip do); with
`--source`, `python -m wheeldoc` from this checkout instead (its development environment also
runs setuptools' `.pth` hooks at every start, which an install does not have). Commands run alternately, after one untimed warm-up each (so the file
is in the page cache for all); wall time is measured around each child and peak RSS comes from
the child's own rusage (os.wait4). cuobjdump runs right before each listing (A B A C ...), and
a listing's ratio is the median of (that cuobjdump run / this listing run), so a machine shared
with others loads both sides alike; CPU time (user + system, from rusage) is shown beside it. The listing is compared with cuobjdump's line for line
(apart from cuobjdump's documented `f` naming quirk). Targets (issue 4): the listing at least
50x faster than cuobjdump, the verdict for a target under 0.5 s, memory far below the file.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WHEEL_GLOB = ("/work/wheels", "nvidia_cublas-13*.whl")
MEMBER = "nvidia/cu13/lib/libcublasLt.so.13"
TARGET = ("--gpu", "gb10", "--driver", "580.95.05")


def cuobjdump() -> Path:
    import sysconfig

    path = Path(sysconfig.get_paths()["purelib"]) / "nvidia" / "cu13" / "bin" / "cuobjdump"
    if not path.exists():
        sys.exit("cuobjdump not found: install the dev dependency nvidia-cuda-cuobjdump")
    return path


def default_wheel() -> Path:
    wheels = sorted(Path(WHEEL_GLOB[0]).glob(WHEEL_GLOB[1]))
    if not wheels:
        sys.exit(f"no cuBLAS wheel in {WHEEL_GLOB[0]}; pass a library path")
    return wheels[-1]


def extract(wheel: Path, folder: str) -> Path:
    dest = Path(folder) / "libcublasLt.so.13"
    print(f"extracting {MEMBER} from {wheel.name} ...", flush=True)
    with zipfile.ZipFile(wheel) as z, z.open(MEMBER) as src, open(dest, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
    return dest


def run_child(argv: list[str], env: dict, cwd: str) -> tuple[float, int, str, int, float]:
    """Wall seconds, peak RSS (KiB), stdout, exit code and CPU seconds of one child process."""
    with tempfile.TemporaryFile() as fh:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        fh.seek(0)
        text = fh.read().decode("utf-8", "replace")
    return wall, usage.ru_maxrss, text, os.waitstatus_to_exitcode(status), \
        usage.ru_utime + usage.ru_stime


def evict(path: Path) -> None:
    """Drop the file's pages from the page cache (it is only read: no dirty pages)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def same_but_f_quirk(mine: list[str], theirs: list[str]) -> tuple[bool, int]:
    quirks = sum(a != b and re.sub(r"(\.sm_\d+)f\.cubin$", r"\1.cubin", a) == b
                 for a, b in zip(mine, theirs))
    same = len(mine) == len(theirs) and all(
        a == b or re.sub(r"(\.sm_\d+)f\.cubin$", r"\1.cubin", a) == b for a, b in zip(mine, theirs))
    return same, quirks


PAIRED = ("wheeldoc kernels --list", "wheeldoc kernels --list --format json")
REF = "cuobjdump -lelf -lptx"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("library", nargs="?", type=Path)
    ap.add_argument("--wheel", type=Path, help="the wheel holding it (default: the local cuBLAS)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--source", action="store_true", help="run `python -m wheeldoc` from this checkout")
    args = ap.parse_args()
    wheel = args.wheel or (default_wheel() if args.library is None else None)
    scratch = tempfile.mkdtemp(prefix="bench-kernels-")  # no pyproject.toml: a user's cwd
    lib = args.library or extract(wheel, scratch)
    py = sys.executable
    # an installed wheeldoc has bytecode; compile it once, as pip / uv tool install do
    subprocess.run([py, "-m", "compileall", "-q", str(ROOT / "wheeldoc")], check=True)
    cold_cache = tempfile.mkdtemp(prefix="bench-kernels-cold-")
    warm_cache = tempfile.mkdtemp(prefix="bench-kernels-warm-")
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if args.source:
        env = {**base, "PYTHONPATH": str(ROOT), "WHEELDOC_CACHE_DIR": warm_cache}
        wd = [py, "-m", "wheeldoc", "kernels"]
    else:
        env = {**{k: v for k, v in base.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")},
               "WHEELDOC_CACHE_DIR": warm_cache}
        from installed import install

        exe = install(scratch)
        py = str(exe.parent / "python")
        wd = [str(exe), "kernels"]
    cmds = {
        REF: ([str(cuobjdump()), "-lelf", "-lptx", str(lib)], env),
        "wheeldoc kernels --list": (wd + ["--list", str(lib)], env),
        "wheeldoc kernels --list --format json": (wd + ["--list", str(lib), "--format", "json"], env),
        "wheeldoc kernels --gpu gb10 --driver 580.95.05": (wd + [str(lib), *TARGET], env),
        "wheeldoc kernels --gpu … --format json": (wd + [str(lib), *TARGET, "--format", "json"], env),
        "wheeldoc kernels (coverage, 9 archs)": (wd + [str(lib)], env),
        "python -c pass (interpreter floor)": ([py, "-c", "pass"], env),
        "python -c 'import wheeldoc.cli'": ([py, "-c", "import wheeldoc.cli"], env),
    }
    # the library evicted from the page cache before each of these (posix_fadvise DONTNEED)
    cmds[REF + ", file not cached"] = cmds[REF]
    cmds["wheeldoc kernels --list, file not cached"] = cmds["wheeldoc kernels --list"]
    if wheel is not None:
        cold = {**env, "WHEELDOC_CACHE_DIR": cold_cache}
        cmds["wheel: kernels --gpu …, cold (member inflated)"] = (wd + [str(wheel), *TARGET], cold)
        cmds["wheel: kernels --gpu …, warm (header cache)"] = (wd + [str(wheel), *TARGET], env)
        cmds["wheel: kernels --list, warm"] = (wd + ["--list", str(wheel)], env)

    size = lib.stat().st_size
    print(f"library: {lib} ({size / 1e6:.0f} MB)" + (f"; wheel: {wheel} ({wheel.stat().st_size / 1e6:.0f} MB)"
                                                      if wheel else ""))
    outputs = {}
    for name, (argv, e) in cmds.items():  # warm-up: page cache, bytecode, the warm header cache
        _, _, outputs[name], code, _ = run_child(argv, e, scratch)
        if code not in (0, 1):
            sys.exit(f"{name}: exit code {code}")
    walls: dict[str, list[float]] = {k: [] for k in cmds}
    cpus: dict[str, list[float]] = {k: [] for k in cmds}
    rss: dict[str, list[int]] = {k: [] for k in cmds}
    pairs: dict[str, list[float]] = {k: [] for k in PAIRED}
    for i in range(args.runs):
        for name, (argv, e) in cmds.items():
            if name == REF:
                continue
            todo = [(REF, cmds[REF]), (name, (argv, e))] if name in PAIRED else [(name, (argv, e))]
            for which, (av, ev) in todo:  # cuobjdump right before each listing: A B A C
                if "cold" in which:
                    shutil.rmtree(cold_cache, ignore_errors=True)
                if "not cached" in which:
                    evict(lib)
                wall, peak, _, _, cpu = run_child(av, ev, scratch)
                walls[which].append(wall)
                cpus[which].append(cpu)
                rss[which].append(peak)
            if name in PAIRED:
                pairs[name].append(walls[REF][-1] / walls[name][-1])
        print(f"  run {i + 1}/{args.runs} done (load average {os.getloadavg()[0]:.1f})", flush=True)

    ref = statistics.median(walls[REF])
    ref_cpu = statistics.median(cpus[REF])
    ref_rss = max(rss[REF])
    print()
    print(f"| command ({args.runs} runs) | wall, median (min) | CPU, median | vs cuobjdump "
          "(wall; median of pairs for the listings) | peak RSS |")
    print("|---|---|---|---|---|")
    for name in cmds:
        w = statistics.median(walls[name])
        if name.startswith("cuobjdump"):
            ratio = "1x"
        elif name in PAIRED:
            r = pairs[name]
            ratio = f"{statistics.median(r):.0f}x ({min(r):.0f}-{max(r):.0f})"
        else:
            ratio = f"{ref / w:.0f}x"
        print(f"| {name} | {w * 1e3:.0f} ms ({min(walls[name]) * 1e3:.0f}) | "
              f"{statistics.median(cpus[name]) * 1e3:.0f} ms | {ratio} | "
              f"{max(rss[name]) / 1024:.0f} MiB |")
    mine = outputs["wheeldoc kernels --list"].splitlines()
    theirs = outputs[REF].splitlines()
    same, quirks = same_but_f_quirk(mine, theirs)
    w_list = statistics.median(walls["wheeldoc kernels --list"])
    w_verdict = statistics.median(walls["wheeldoc kernels --gpu gb10 --driver 580.95.05"])
    w_json = statistics.median(walls["wheeldoc kernels --list --format json"])
    c_json = statistics.median(cpus["wheeldoc kernels --list --format json"])
    print()
    print(f"listing as JSON: {statistics.median(pairs[PAIRED[1]]):.0f}x faster than cuobjdump by "
          f"wall (median of same-run pairs; target >= 50x), {ref_cpu / c_json:.0f}x by CPU time; "
          f"JSON / text: {w_json / w_list:.2f}x (target <= 1.2x)")
    print(f"listing: {statistics.median(pairs[PAIRED[0]]):.0f}x faster than cuobjdump; "
          f"memory {max(rss['wheeldoc kernels --list']) / 1024:.0f} MiB vs {ref_rss / 1024:.0f} MiB "
          f"({ref_rss / max(rss['wheeldoc kernels --list']):.0f}x less; file {size / 2**20:.0f} MiB)")
    cold_ref = statistics.median(walls[REF + ", file not cached"])
    cold_list = statistics.median(walls["wheeldoc kernels --list, file not cached"])
    floor = statistics.median(walls["python -c 'import wheeldoc.cli'"])
    print(f"file not in the page cache: {cold_ref / cold_list:.0f}x faster "
          f"({cold_list * 1e3:.0f} ms vs {cold_ref:.2f} s)")
    print(f"start-up floor (interpreter + CLI import, no work): {floor * 1e3:.0f} ms, i.e. at most "
          f"{ref / floor:.0f}x against this cuobjdump run")
    print(f"verdict for a target: {w_verdict:.3f} s (target < 0.5 s)")
    print(f"listings: {len(mine)} lines each, identical: {same} (apart from {quirks} `f` cubins "
          "cuobjdump names without the f)")

    from wheeldoc.kernels.fatbin import listing, open_fatbin

    t0 = time.perf_counter()
    fb = open_fatbin(lib)
    t1 = time.perf_counter()
    listing(fb)
    t2 = time.perf_counter()
    print(f"in process: header walk {(t1 - t0) * 1e3:.1f} ms for {len(fb.containers)} containers, "
          f"{len(fb.entries)} entries; listing {(t2 - t1) * 1e3:.1f} ms")
    for d in (scratch, cold_cache, warm_cache):
        shutil.rmtree(d, ignore_errors=True)
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
