"""Regenerate the ABI analyzer's data tables in wheeldoc/data/ (committed outputs).

    uv run python scripts/make_abi_tables.py --auditwheel auditwheel-6.8.2-py3-none-any.whl \
        --wheels /opt/pypi/files --wheels /opt/pypi-more/files --wheels /work/wheels
    uv run python scripts/make_abi_tables.py --only-cuda --wheels ...   # cuda_sonames.json alone

- `manylinux.json`: per manylinux policy, the newest GLIBC / GLIBCXX / CXXABI / GCC symbol
  versions it allows on each architecture and the system libraries it assumes, taken from
  auditwheel's `manylinux-policy.json` (read from the auditwheel wheel given, never unpacked);
  plus the libstdc++ release table (GLIBCXX -> CXXABI and libgcc_s GCC_ versions) from the
  libstdc++ manual's ABI history, used for an explicit `--libstdcxx`.
- `system_symbols.json.gz`: the names glibc, libstdc++, libgcc_s and zlib export, each under the
  oldest symbol version that defines it, read from this machine's libraries (a reference
  system; the analyzer never judges a target by the host: it keeps a name only when its version
  is within the target's caps).
- `cuda_sonames.json`: which shared objects each NVIDIA CUDA wheel installs (and where), read
  from the central directories of the real wheels in the folders given, and the extras of
  `cuda-toolkit` (which packages each extra pulls in) from its METADATA.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
import zipfile
from email.parser import HeaderParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = ROOT / "wheeldoc" / "data"
FAMILIES = ("GLIBC", "GLIBCXX", "CXXABI", "GCC")
ARCHES = ("x86_64", "aarch64", "ppc64le", "s390x", "i686", "armv7l")
# libstdc++ manual, "ABI Policy and Guidelines", section "History": the first GCC release of
# each GLIBCXX version, the CXXABI version it shipped, and libgcc_s's newest GCC_ version then.
LIBSTDCXX = [
    ("3.4.19", "1.3.7", "4.8.0", "4.8.3"), ("3.4.20", "1.3.8", "4.8.0", "4.9.0"),
    ("3.4.21", "1.3.9", "4.8.0", "5.1.0"), ("3.4.22", "1.3.10", "4.8.0", "6.1.0"),
    ("3.4.23", "1.3.11", "7.0.0", "7.1.0"), ("3.4.24", "1.3.11", "7.0.0", "7.2.0"),
    ("3.4.25", "1.3.11", "7.0.0", "8.1.0"), ("3.4.26", "1.3.12", "7.0.0", "9.1.0"),
    ("3.4.27", "1.3.12", "7.0.0", "9.2.0"), ("3.4.28", "1.3.12", "7.0.0", "9.3.0"),
    ("3.4.29", "1.3.13", "7.0.0", "11.1.0"), ("3.4.30", "1.3.13", "12.0.0", "12.1.0"),
    ("3.4.31", "1.3.14", "12.0.0", "13.1.0"), ("3.4.32", "1.3.14", "12.0.0", "13.2.0"),
    ("3.4.33", "1.3.15", "14.0.0", "14.1.0"), ("3.4.34", "1.3.16", "14.0.0", "15.1.0"),
]
SYSTEM_LIBS = {
    "libc.so.6": "/lib/x86_64-linux-gnu/libc.so.6", "libm.so.6": "/lib/x86_64-linux-gnu/libm.so.6",
    "libdl.so.2": "/lib/x86_64-linux-gnu/libdl.so.2",
    "libpthread.so.0": "/lib/x86_64-linux-gnu/libpthread.so.0",
    "librt.so.1": "/lib/x86_64-linux-gnu/librt.so.1", "libutil.so.1": "/lib/x86_64-linux-gnu/libutil.so.1",
    "ld-linux-x86-64.so.2": "/lib64/ld-linux-x86-64.so.2",
    "libstdc++.so.6": "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
    "libgcc_s.so.1": "/lib/x86_64-linux-gnu/libgcc_s.so.1",
    "libz.so.1": "/lib/x86_64-linux-gnu/libz.so.1",  # in every manylinux policy's library list
}
_SONAME = re.compile(r"^lib[^/]*\.so(\.\d+)*$|^[^/]*\.so\.\d+$")


def vkey(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split("."))


def numeric(v: str) -> bool:
    return bool(re.fullmatch(r"\d+(\.\d+)*", v))


def manylinux(auditwheel_whl: Path) -> dict:
    with zipfile.ZipFile(auditwheel_whl) as zf:
        policies = json.loads(zf.read("auditwheel/policy/manylinux-policy.json"))
    out = {}
    for p in policies:
        if not p["name"].startswith("manylinux_"):
            continue
        versions = {}
        for arch in ARCHES:
            sv = p["symbol_versions"].get(arch)
            if not sv:
                continue
            caps = {}
            for fam in FAMILIES:
                names = sv.get(fam, [])
                nums = [v for v in names if numeric(v)]
                caps[fam] = {"max": max(nums, key=vkey) if nums else None,
                             "extra": sorted(v for v in names if not numeric(v))}
            versions[arch] = caps
        out[p["name"]] = {"aliases": p["aliases"], "libraries": sorted(p["lib_whitelist"]),
                          "versions": versions}
    return out


def system_symbols() -> dict:
    from wheeldoc.binary.elf import read_elf_path

    libs = {}
    for soname, path in SYSTEM_LIBS.items():
        info = read_elf_path(path)
        by_version: dict[str, list[str]] = {}
        for name, versions in info.symbols.exports().items():
            named = [v.name for v in versions if v is not None]
            fam_nums = [n for n in named if "_" in n and numeric(n.split("_", 1)[1])]
            oldest = min(fam_nums, key=lambda n: vkey(n.split("_", 1)[1])) if fam_nums else (named[0] if named else "")
            by_version.setdefault(oldest, []).append(name)
        libs[soname] = {v: sorted(names) for v, names in sorted(by_version.items())}
    return libs


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def cuda_sonames(folders: list[Path]) -> tuple[dict, dict]:
    """Per NVIDIA CUDA package (CUDA 13's `nvidia-cublas`, CUDA 12's `nvidia-cublas-cu12`, CUDA
    11's `nvidia-cublas-cu11`: different names, so one table holds every major), the newest wheel
    found: its shared objects and where they install, with the wheel's name and sha256."""
    from packaging.utils import canonicalize_name, parse_wheel_filename
    from packaging.version import Version

    packages: dict[str, dict] = {}
    toolkit_extras: dict[str, list[str]] = {}
    for folder in folders:
        for whl in sorted(folder.glob("*.whl")):
            name, version, _, _ = parse_wheel_filename(whl.name)
            if name == "cuda-toolkit":
                with zipfile.ZipFile(whl) as zf:
                    meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
                    headers = HeaderParser().parsestr(zf.read(meta).decode())
                from packaging.requirements import Requirement

                for line in headers.get_all("Requires-Dist") or []:
                    req = Requirement(line)
                    m = re.search(r"extra == ['\"]([\w-]+)['\"]", str(req.marker))
                    if m and m[1] != "all":
                        toolkit_extras.setdefault(m[1], []).append(canonicalize_name(req.name))
                continue
            if not name.startswith("nvidia-"):
                continue
            with zipfile.ZipFile(whl) as zf:
                libs = {n.rsplit("/", 1)[1]: n for n in zf.namelist() if _SONAME.match(n.rsplit("/", 1)[-1])}
            known = packages.get(name)
            if libs and (known is None or Version(known["version"]) < version):
                packages[name] = {"version": str(version), "libraries": dict(sorted(libs.items())),
                                  "wheel": whl.name, "sha256": _sha256(whl)}
    return dict(sorted(packages.items())), {k: sorted(set(v)) for k, v in sorted(toolkit_extras.items())}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--auditwheel", type=Path, help="an auditwheel wheel (policy JSON source)")
    ap.add_argument("--wheels", type=Path, action="append", default=[], help="folders of real nvidia-* wheels")
    ap.add_argument("--only-cuda", action="store_true", help="rebuild cuda_sonames.json only")
    ap.add_argument("--only-distro", action="store_true", help="rebuild distro_libraries.json only")
    args = ap.parse_args()
    if args.only_distro:
        distro_table()
        return
    if not args.only_cuda:
        if args.auditwheel is None:
            ap.error("--auditwheel is required (or --only-cuda)")
        other_tables(args)
        distro_table()
    cuda_table(args)


def other_tables(args) -> None:
    table = {
        "_comment": "Generated by scripts/make_abi_tables.py from auditwheel's manylinux-policy.json "
                    f"({args.auditwheel.name}) and the libstdc++ manual's ABI history. Do not edit.",
        "policies": manylinux(args.auditwheel),
        "libstdcxx": [{"GLIBCXX": g, "CXXABI": c, "GCC": s, "gcc": r} for g, c, s, r in LIBSTDCXX],
        "system_sonames": ["ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "ld64.so.2", "ld64.so.1",
                           "ld-linux.so.2", "ld-linux-armhf.so.3"],
        "driver_sonames": ["libcuda.so.1", "libnvidia-ml.so.1", "libnvcuvid.so.1",
                           "libnvidia-encode.so.1", "libnvidia-opticalflow.so.1"],
    }
    (DATA / "manylinux.json").write_text(json.dumps(table, indent=1) + "\n")
    sym = {"_comment": "Generated by scripts/make_abi_tables.py: names exported by a reference system's "
                       "glibc, libstdc++ and libgcc_s (x86_64), each under its oldest symbol version.",
           "libraries": system_symbols()}
    with gzip.GzipFile(DATA / "system_symbols.json.gz", "wb", mtime=0) as f:
        f.write(json.dumps(sym, separators=(",", ":"), sort_keys=True).encode())


def distro_table() -> None:
    """`distro_libraries.json`: the shared libraries of this reference system's distribution (what
    `ldconfig -p` lists under /lib and /usr/lib, never /usr/local: a CUDA toolkit there is not the
    distribution's), each with the Debian package that installs it (`dpkg -S`). A wheel needing
    one that its manylinux policy does not promise (`libnuma.so.1`) loads where that package is
    installed: the analyzer says so instead of "found nowhere"."""
    import subprocess

    listing = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    libs: dict[str, str] = {}
    for line in listing.splitlines()[1:]:
        m = re.match(r"^\s+(\S+) \((libc6,x86-64)[^)]*\) => (/(?:usr/)?lib\S+)$", line)
        if m and _SONAME.match(m[1]) and re.search(r"\.so\.\d", m[1]):
            libs.setdefault(m[1], m[3])
    packages = {}
    for soname, path in sorted(libs.items()):
        real = subprocess.run(["dpkg", "-S", path], capture_output=True, text=True)
        if real.returncode != 0:
            real = subprocess.run(["dpkg", "-S", str(Path(path).resolve())], capture_output=True, text=True)
        if real.returncode == 0:
            packages[soname] = real.stdout.split(":", 1)[0]
    os_release = Path("/etc/os-release").read_text()
    name = re.search(r'^PRETTY_NAME="?([^"\n]+)', os_release, re.M)
    doc = {"_comment": "Generated by scripts/make_abi_tables.py from `ldconfig -p` (/lib, /usr/lib) and "
                       f"`dpkg -S` on {name[1] if name else 'the reference system'} (x86_64).",
           "system": name[1] if name else None, "libraries": packages}
    (DATA / "distro_libraries.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def cuda_table(args) -> None:
    packages, extras = cuda_sonames(args.wheels)
    cuda = {"_comment": "Generated by scripts/make_abi_tables.py from the central directories of real "
                        "NVIDIA CUDA wheels (CUDA 13 names such as nvidia-cublas, CUDA 12/11 names such as "
                        "nvidia-cublas-cu12): the shared objects each package installs, with the wheel "
                        "read (name, sha256), and what each cuda-toolkit extra pulls in. Used when those "
                        "wheels cannot be read.",
            "packages": packages, "cuda_toolkit_extras": extras}
    (DATA / "cuda_sonames.json").write_text(json.dumps(cuda, indent=1) + "\n")


if __name__ == "__main__":
    main()
