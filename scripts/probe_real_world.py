"""Ground truth for docs/real-world-truth.md: does each extension object really load after
`import torch`? Real dlopen in throwaway venvs, one fresh process per shared object.

    python scripts/probe_real_world.py --wheels /work/wheels --work /work/wheels/venvs-abi \
        --out docs/groundtruth/real-world/dlopen.json

For each torch build of TORCHES a venv is made with `uv venv` and exactly that torch wheel, the
wheels of its own resolution (its nvidia-* CUDA wheels and Python dependencies, as uv resolves
`torch==X` for Python 3.11 on x86_64 manylinux_2_28) installed `--no-deps` from the wheel folder.
Each extension wheel of EXTENSIONS is then installed `--no-deps`, and every shared object its
RECORD lists is opened in a fresh process: an interpreter runs `import torch` once and forks one
child per object, which runs `ctypes.CDLL(path, RTLD_NOW)` and exits (so no object sees another's
load),
under a private mount namespace whose tmpfs hides this machine's CUDA toolkit
(/usr/local/cuda*; `ldconfig -p` lists it), with an empty LD_LIBRARY_PATH except a folder that
holds a stand-in for the NVIDIA driver (`libcuda.so.1`, every cu* function name `cuda.h`
declares, compiled here): this machine has no GPU driver, a user's GPU machine has. After the
load the process lists every shared object mapped from outside the venv and the system folders
(`/proc/self/maps`), so a library picked up from the host is flagged, never counted as a load.
The venv is deleted after its extensions are probed.
"""

from __future__ import annotations

import argparse
import base64
import csv
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

PY = "3.11"
PLATFORM = "x86_64-manylinux_2_28"
# torch builds: id -> (requirement resolved by uv, the torch wheel's file name pattern)
TORCHES = {
    "torch-2.9.1-cu128": ("torch==2.9.1", "torch-2.9.1-cp311-cp311-manylinux_2_28_x86_64.whl"),
    "torch-2.10.0-cu128": ("torch==2.10.0", "torch-2.10.0-3-cp311-cp311-manylinux_2_28_x86_64.whl"),
    "torch-2.14.1-cu130": ("torch==2.14.1", "torch-2.14.1-cp311-cp311-manylinux_2_28_x86_64.whl"),
    "torch-2.13.0-cpu": ("torch==2.13.0+cpu", "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl"),
}
# causal-conv1d and mamba-ssm publish sdists only, flash-attn nothing on PyPI: not probed
EXTENSIONS = [
    "vllm-0.14.1-*.whl", "vllm-0.17.1-*.whl", "vllm-0.28.0-*.whl", "vllm-0.33.0-*.whl",
    "sgl_kernel-0.3.21-*.whl", "xformers-0.0.33.post2-*.whl", "xformers-0.0.34-*.whl", "xformers-0.0.35-*.whl",
    "torchaudio-2.9.1-cp311-*.whl", "torchaudio-2.10.0-cp311-*.whl", "torchaudio-2.11.0-cp311-*.whl",
    "torchvision-0.24.1-cp311-*.whl", "torchvision-0.25.0-cp311-*.whl", "torchvision-0.29.1-cp311-*.whl",
    "bitsandbytes-0.50.2-*.whl", "flashinfer_python-0.6.16.post3-*.whl",
]
FOLDERS = [Path("/opt/wheels"), Path("/opt/pypi/files"), Path("/opt/pypi-more/files")]
SYSTEM_DIRS = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/")
LIBRARY = re.compile(r"(^|/)[^/]+\.so(\.[0-9A-Za-z_]+)*$")

PROBE = r"""
import ctypes, json, os, sys
venv, allowed, objects = sys.argv[1], sys.argv[2].split(":") + [sys.base_prefix + "/"], sys.argv[3:]
try:
    import torch  # noqa: F401
except BaseException as e:
    for obj in objects:
        print("PROBE" + json.dumps({"object": obj, "loads": False, "stage": "import torch",
                                    "error": f"{type(e).__name__}: {e}"[:600], "outside": []}), flush=True)
    sys.exit(0)
for obj in objects:
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:  # a fresh process that has imported torch and nothing else
        out = {"object": obj}
        try:
            ctypes.CDLL(obj, os.RTLD_NOW)
            out.update(loads=True, stage="dlopen", error=None)
        except OSError as e:
            out.update(loads=False, stage="dlopen", error=str(e)[:600])
        maps = set()
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and ".so" in parts[5]:
                    maps.add(parts[5].strip())
        out["outside"] = sorted(p for p in maps if not p.startswith(venv) and not p.startswith(tuple(allowed)))
        print("PROBE" + json.dumps(out), flush=True)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        print("PROBE" + json.dumps({"object": obj, "loads": False, "stage": "crash",
                                    "error": f"wait status {status}", "outside": []}), flush=True)
"""


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def driver_stub(work: Path) -> Path:
    """libcuda.so.1 exporting every cu* function cuda.h declares (raw and after its macros)."""
    folder = work / "driver-stub"
    lib = folder / "libcuda.so.1"
    if lib.exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    header = Path("/usr/local/cuda/include/cuda.h").read_text(errors="replace")
    names = set(re.findall(r"CUDAAPI\s+(cu[A-Za-z0-9_]+)\s*\(", header))
    pre = subprocess.run(["gcc", "-E", "-I/usr/local/cuda/include", "-"], input="#include <cuda.h>\n",
                         capture_output=True, text=True, check=True).stdout
    names |= set(re.findall(r"\b(cu[A-Z][A-Za-z0-9_]*)\s*\(", pre))
    (folder / "stub.c").write_text("".join(f"int {n}(void) {{ return 999; }}\n" for n in sorted(names)))
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib), "-Wl,-soname,libcuda.so.1", str(folder / "stub.c")],
                   check=True)
    return folder


def resolution(requirement: str, wheels: Path) -> list:
    """uv's resolution of `requirement`: the wheel files found in the wheel folders, else
    `name==version` (installed from the index, still `--no-deps`)."""
    proc = subprocess.run(["uv", "pip", "compile", "-", "--python-version", PY, "--python-platform", PLATFORM,
                           "--find-links", str(wheels), *[a for f in FOLDERS for a in ("--find-links", str(f))],
                           "--format", "pylock.toml",
                           "--no-header", "--quiet"],
                          input=requirement + "\n", capture_output=True, text=True, check=True)
    import tomllib

    files = []
    for pkg in tomllib.loads(proc.stdout)["packages"]:
        name = pkg["wheels"][0]["url"].rsplit("/", 1)[-1].replace("%2B", "+")
        for folder in (wheels, *FOLDERS):
            if (folder / name).is_file():
                files.append(folder / name)
                break
        else:
            files.append(f"{pkg['name']}=={pkg['version']}")
    return files


def record_objects(site: Path, dist_info: Path) -> list[str]:
    with open(dist_info / "RECORD", newline="") as f:
        return sorted(row[0] for row in csv.reader(f) if row and LIBRARY.search(row[0]) and not row[0].startswith(".."))


def probe(python: Path, venv: Path, objects: list[Path], stub: Path) -> list[dict]:
    """Each object opened in its own process: one interpreter imports torch, then forks one child
    per object (a fresh process holding torch and nothing else) that calls CDLL and exits."""
    allowed = ":".join(SYSTEM_DIRS + (str(stub) + "/",))
    script = ("mount -t tmpfs none /usr/local/cuda-13.0 && "
              f"exec env -i PATH=/usr/bin:/bin LD_LIBRARY_PATH={stub} HOME=/tmp \"$@\"")
    argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh",
            str(python), "-c", PROBE, str(venv), allowed, *map(str, objects)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    found = {}
    for line in proc.stdout.splitlines():
        if line.startswith("PROBE"):
            r = json.loads(line[5:])
            found[r["object"]] = r
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1][:600]
    return [found.get(str(o)) or {"object": str(o), "loads": False, "stage": "no answer", "error": tail,
                                  "outside": []} for o in objects]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheels", type=Path, default=Path("/work/wheels"))
    ap.add_argument("--work", type=Path, default=Path("/work/wheels/venvs-abi"))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--torch", action="append", help="only these torch ids")
    ap.add_argument("--extension", action="append", help="only these extension patterns")
    args = ap.parse_args()
    subprocess.run(["ldconfig", "-p"], check=True, capture_output=True)
    stub = driver_stub(args.work)
    results = json.loads(args.out.read_text()) if args.out.exists() else {"pairs": []}
    done = {(p["torch"], p["extension"]) for p in results["pairs"]}
    for tid, (req, pattern) in TORCHES.items():
        if args.torch and tid not in args.torch:
            continue
        wanted = []
        for ext_pattern in args.extension or EXTENSIONS:
            found = sorted(f for folder in (args.wheels, *FOLDERS) for f in glob.glob(str(folder / ext_pattern)))
            if not found:
                print(f"skip {ext_pattern}: no wheel in {args.wheels}", file=sys.stderr)
                continue
            if (tid, Path(found[0]).name) not in done:
                wanted.append(Path(found[0]))
        if not wanted:
            continue
        files = resolution(req, args.wheels)
        venv = args.work / tid
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run(["uv", "venv", "-q", "-p", PY, str(venv)], check=True)
        python = venv / "bin" / "python"
        subprocess.run(["uv", "pip", "install", "-q", "--no-deps", "--python", str(python), *map(str, files)], check=True)
        site = Path(glob.glob(str(venv / "lib" / "python*" / "site-packages"))[0])
        torch_wheel = next(f for f in files if isinstance(f, Path) and f.name == pattern)
        for ext in wanted:
            t0 = time.time()
            subprocess.run(["uv", "pip", "install", "-q", "--no-deps", "--python", str(python), str(ext)], check=True)
            name = ext.name.split("-")[0]
            dist_info = next(p for p in site.glob("*.dist-info")
                             if p.name.split("-")[0].lower() == name.lower() and (p / "RECORD").is_file())
            rels = record_objects(site, dist_info)
            objects = []
            for rel, r in zip(rels, probe(python, venv, [site / rel for rel in rels], stub)):
                r["object"] = rel
                r["outside"] = [p.replace(str(site) + "/", "") for p in r["outside"]]
                objects.append(r)
                print(f"{tid} {ext.name} {rel}: {'loads' if r['loads'] else 'FAILS ' + str(r['error'])[:150]}"
                      + (f" OUTSIDE {r['outside']}" if r["outside"] else ""), flush=True)
            subprocess.run(["uv", "pip", "uninstall", "-q", "--python", str(python), name], check=True)
            results["pairs"].append({
                "torch": tid, "torch_wheel": torch_wheel.name, "torch_sha256": sha256(torch_wheel),
                "extension": ext.name, "extension_sha256": sha256(ext),
                "environment": [f.name if isinstance(f, Path) else f for f in files], "objects": objects,
                "seconds": round(time.time() - t0, 1)})
            results["method"] = __doc__.strip().split("\n\n", 1)[1]
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.write_text(json.dumps(results, indent=1) + "\n")
        shutil.rmtree(venv, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
