#!/usr/bin/env python3
"""Listing the GPU code of libcublasLt.so.13: wheeldoc's fatbin walker vs `cuobjdump -lelf -lptx`.

    uv run python bench/bench_kernels.py [LIBRARY] [--runs N]

Without LIBRARY, libcublasLt.so.13 is extracted once from the local nvidia-cublas wheel into
~/.cache/wheeldoc-bench/. Both tools run as fresh child processes, alternately, after one
untimed warm-up each (so the file is in the page cache for both); wall time is measured
around each child and peak RSS comes from that child's own rusage (os.wait4). The outputs are
compared line by line (apart from cuobjdump's documented `f` naming quirk). Also reported:
the in-process walk time and the time to predict every container for two GPUs.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WHEEL_GLOB = ("/opt/pypi-more/files", "nvidia_cublas-13*.whl")
MEMBER = "nvidia/cu13/lib/libcublasLt.so.13"
WHEELDOC_CHILD = (
    "import sys\n"
    "from wheeldoc.sources.fatbin import open_fatbin, listing\n"
    "sys.stdout.write(''.join(line + '\\n' for line in listing(open_fatbin(sys.argv[1]))))\n"
)


def cuobjdump() -> Path:
    import sysconfig

    path = Path(sysconfig.get_paths()["purelib"]) / "nvidia" / "cu13" / "bin" / "cuobjdump"
    if not path.exists():
        sys.exit("cuobjdump not found: install the dev dependency nvidia-cuda-cuobjdump")
    return path


def default_library() -> Path:
    wheels = sorted(Path(WHEEL_GLOB[0]).glob(WHEEL_GLOB[1]))
    if not wheels:
        sys.exit(f"no cuBLAS wheel in {WHEEL_GLOB[0]}; pass a library path")
    dest = Path.home() / ".cache" / "wheeldoc-bench" / wheels[-1].stem / "libcublasLt.so.13"
    if not dest.exists():
        print(f"extracting {MEMBER} from {wheels[-1].name} ...", flush=True)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_suffix(".tmp")
        with zipfile.ZipFile(wheels[-1]) as z, z.open(MEMBER) as src, open(tmp, "wb") as out:
            shutil.copyfileobj(src, out, 1 << 20)
        tmp.replace(dest)
    return dest


def run_child(argv: list[str], env: dict | None = None) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (KiB) and stdout of one child process."""
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"bench-kernels-{os.getpid()}.out"
    with open(out, "wb") as fh:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=fh, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    text = out.read_text()
    out.unlink()
    if proc.returncode != 0:
        sys.exit(f"{argv[0]} failed with exit code {proc.returncode}")
    return wall, usage.ru_maxrss, text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("library", nargs="?", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    lib = args.library or default_library()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    tools = {
        "wheeldoc": [sys.executable, "-c", WHEELDOC_CHILD, str(lib)],
        "cuobjdump": [str(cuobjdump()), "-lelf", "-lptx", str(lib)],
        # the floor under wheeldoc's number: interpreter start + imports, no file read
        "startup": [sys.executable, "-c", "import wheeldoc.sources.fatbin"],
    }
    size = lib.stat().st_size
    print(f"library: {lib} ({size / 1e6:.0f} MB)")
    outputs, walls, rss = {}, {k: [] for k in tools}, {k: [] for k in tools}
    for name, argv in tools.items():  # warm-up: page cache, .pyc files
        outputs[name] = run_child(argv, env)[2]
    for i in range(args.runs):
        for name, argv in tools.items():
            wall, peak, _ = run_child(argv, env)
            walls[name].append(wall)
            rss[name].append(peak)
            print(f"  run {i + 1}: {name:9s} {wall:8.3f} s  peak RSS {peak / 1024:8.1f} MiB",
                  flush=True)

    mine = outputs["wheeldoc"].splitlines()
    theirs = outputs["cuobjdump"].splitlines()
    quirks = sum(a != b and re.sub(r"(\.sm_\d+)f\.cubin$", r"\1.cubin", a) == b
                 for a, b in zip(mine, theirs))
    same = len(mine) == len(theirs) and all(
        a == b or re.sub(r"(\.sm_\d+)f\.cubin$", r"\1.cubin", a) == b for a, b in zip(mine, theirs))

    from wheeldoc.kernels_model import predict_container
    from wheeldoc.sources.fatbin import open_fatbin

    t0 = time.perf_counter()
    fb = open_fatbin(lib)
    t1 = time.perf_counter()
    verdicts = {}
    for gpu, cc in (("h200", (9, 0)), ("gb10", (12, 1))):
        verdicts[gpu] = [predict_container(c.entries, cc, (9, 0)).verdict for c in fb.containers]
    t2 = time.perf_counter()

    w, c = statistics.median(walls["wheeldoc"]), statistics.median(walls["cuobjdump"])
    rw, rc = max(rss["wheeldoc"]), max(rss["cuobjdump"])
    print()
    print(f"| tool | median wall ({args.runs} runs) | peak RSS |")
    print("|---|---|---|")
    print(f"| cuobjdump -lelf -lptx | {c:.3f} s | {rc / 1024:.0f} MiB |")
    print(f"| wheeldoc (python child, incl. interpreter start) | {w:.3f} s | {rw / 1024:.0f} MiB |")
    s = statistics.median(walls["startup"])
    print(f"| of which: python start + imports only | {s:.3f} s | |")
    print()
    print(f"speed-up: {c / w:.0f}x (target >= 50x); memory: {rc / rw:.0f}x less "
          f"({rw / 1024:.0f} MiB vs {rc / 1024:.0f} MiB; file {size / 2**20:.0f} MiB)")
    print(f"in-process walk: {(t1 - t0) * 1e3:.1f} ms ({c / (t1 - t0):.0f}x faster than cuobjdump) "
          f"for {len(fb.containers)} containers, {len(fb.entries)} entries; predicting every "
          f"container for h200 and gb10: {(t2 - t1) * 1e3:.1f} ms")
    for gpu, v in verdicts.items():
        print(f"  {gpu} + 580 driver: " + ", ".join(f"{k} {v.count(k)}" for k in ("native", "jit", "fail")))
    print(f"listings: {len(mine)} lines each, identical: {same} "
          f"(apart from {quirks} `f` cubins cuobjdump names without the f)")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
