"""Nothing analyzed is ever run, imported, dlopen'ed or compiled into code, and nothing is
written outside the cache and the temporary folder: every verb over hostile inputs, watched by
an audit hook (`audited.py`).

Allowed, precisely: `subprocess` runs of `uv`, `c++filt`, `ldconfig` (ctypes.util and the
loader-cache fallback) and `<--python> -I -S -c <query>`; `ctypes.dlopen` of libc and libstdc++
(cxxfilt's `__cxa_demangle`); `compile` of analyzed text only from `ast.parse` (torch's
version.py, parsed to a tree, never executed); writes under `$TMPDIR`, `$WHEELDOC_CACHE_DIR`
and `/dev/null`. Anything else the hook saw fails the test with the event.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.robustness.hostile import CANARY, CANARY_MODULES, Hostile, _canary, build

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]  # subprocesses run the wheeldoc of this checkout
TOOLS = {"uv", "c++filt", "ldconfig"}
DLOPEN_OK = {None, "libc.so.6", "libstdc++.so.6"}
_NEVER = {"os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
          "socket.connect", "socket.getaddrinfo"}
_FILE_EVENTS = {"os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.symlink", "os.link", "os.chmod",
                "os.chown", "os.truncate", "os.utime", "shutil.copyfile", "shutil.copymode", "shutil.copystat",
                "shutil.copytree", "shutil.move", "shutil.rmtree", "shutil.unpack_archive", "tempfile.mkstemp",
                "tempfile.mkdtemp"}


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Hostile:
    return build(tmp_path_factory.mktemp("hostile"))


def audited(tmp: Path, *argv: str) -> tuple[dict, subprocess.CompletedProcess, list[Path]]:
    """Run `wheeldoc ARGV` under the audit hook; the report, the process, the allowed roots."""
    roots = [tmp / "tmp", tmp / "cache"]
    for d in (*roots, tmp / "home", tmp / "cwd"):
        d.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(roots[0]), "WHEELDOC_CACHE_DIR": str(roots[1]), "HOME": str(tmp / "home"),
           "XDG_CACHE_HOME": str(tmp / "home" / ".cache"), "PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1"}
    report = tmp / "report.json"
    proc = subprocess.run([sys.executable, str(HERE / "audited.py"), str(report), "--", *argv], env=env,
                          cwd=tmp / "cwd", capture_output=True, text=True, timeout=300)
    assert report.is_file(), proc.stderr[-3000:]
    return json.loads(report.read_text()), proc, roots


def _inside(path: str, roots: list[Path]) -> bool:
    real = os.path.realpath(path)
    return any(real == str(r) or real.startswith(str(r) + os.sep) for r in roots)


def violations(report: dict, roots: list[Path], analyzed: list[Path], python: str | None = None) -> list[dict]:
    bad = []
    for e in report["events"]:
        ev = e["event"]
        if ev == "subprocess.Popen":
            argv = e["argv"] or [e["executable"] or ""]
            ok = (os.path.basename(argv[0]) in TOOLS and not _inside(argv[0], analyzed)) or (
                python is not None and argv[:4] == [python, "-I", "-S", "-c"])
            if not ok:
                bad.append(e)
        elif ev in _NEVER:
            bad.append(e)
        elif ev == "ctypes.dlopen":
            if e["name"] not in DLOPEN_OK:
                bad.append(e)
        elif ev == "compile":
            if CANARY in (e["source"] or "") and e["caller"] != "ast.parse":
                bad.append(e)
        elif ev == "exec":
            if _inside(e["filename"], analyzed) or any(CANARY in (c or "") for c in e["consts"]):
                bad.append(e)
        elif ev == "import":
            if e["module"].split(".")[0] in CANARY_MODULES or (e["filename"] and _inside(e["filename"], analyzed)):
                bad.append(e)
        elif ev == "open":
            if e["path"] != os.devnull and not _inside(e["path"], roots):
                bad.append(e)
        elif ev in _FILE_EVENTS:
            paths = [a for a in e["args"] if isinstance(a, str) and a]
            if not paths or not all(_inside(p, roots) for p in paths[:2] if "/" in p):
                bad.append(e)
    for name, file in report["modules"].items():
        if name.split(".")[0] in CANARY_MODULES or (file and _inside(file, analyzed)):
            bad.append({"event": "module loaded", "module": name, "file": file})
    return bad


def _check(h: Hostile, tmp: Path, *argv: str, python: str | None = None) -> tuple[dict, subprocess.CompletedProcess]:
    report, proc, roots = audited(tmp, *argv)
    bad = violations(report, roots, [h.root], python)
    assert not bad, json.dumps(bad, indent=1)[:4000]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert report["exit"] in (0, 1, 2) and proc.returncode == report["exit"]
    assert not h.pwned.exists()
    # the hook saw the run: at least the reads it had to make
    return report, proc


GPU = ("--gpu", "h200", "--driver", "580.95.05")


@pytest.mark.slow
def test_check_over_hostile_lockfiles_and_dockerfile(hostile, tmp_path):
    report, proc = _check(hostile, tmp_path, "check", str(hostile.locks / "requirements.txt"),
                          str(hostile.locks / "uv.lock"), str(hostile.locks / "Dockerfile"), "--format", "json")
    assert report["exit"] in (0, 1, 2)


@pytest.mark.slow
def test_kernels_over_a_hostile_wheel_and_broken_binaries(hostile, tmp_path):
    broken = sorted(str(p) for p in (Path(__file__).parents[2] / "fixtures/kernels/broken").iterdir())
    report, proc = _check(hostile, tmp_path, "kernels", str(hostile.wheel), *GPU, "--format", "json")
    out = json.loads(proc.stdout)
    skipped = {s["member"]: s["reason"] for s in out["skipped"]}
    assert "path traversal" in skipped["../evil.so"] and "absolute path" in skipped["/abs/evil.so"]
    assert "symlink entry" in skipped["canary_pkg/link.so"]
    assert "past the end" in skipped["canary_pkg/_broken.so"]
    _check(hostile, tmp_path, "kernels", *broken, *GPU)


@pytest.mark.slow
def test_abi_over_a_hostile_wheel(hostile, tmp_path):
    _check(hostile, tmp_path, "abi", str(hostile.wheel), str(hostile.torch_wheel), "--format", "json")


@pytest.mark.slow
def test_doctor_over_a_hostile_site_packages(hostile, tmp_path):
    report, proc = _check(hostile, tmp_path, "doctor", "--site-packages", str(hostile.site), *GPU,
                          "--format", "json")
    out = json.loads(proc.stdout)
    assert out["environment"]["torch"]["version"] == "2.11.0+cu130"  # version.py parsed, not run


@pytest.mark.slow
def test_doctor_runs_only_the_interpreter_it_is_given(hostile, tmp_path):
    report, _ = _check(hostile, tmp_path, "doctor", "--python", sys.executable, *GPU, "--format", "json",
                       python=sys.executable)
    runs = [e["argv"][:4] for e in report["events"] if e["event"] == "subprocess.Popen"]
    assert [sys.executable, "-I", "-S", "-c"] in runs


@pytest.mark.slow
@pytest.mark.parametrize("which", ["hostile", "root-whiteout"])
def test_image_over_a_hostile_archive(hostile, tmp_path, which):
    path = hostile.image if which == "hostile" else Path(__file__).parents[2] / "fixtures/fuzz-crashes/image/root-whiteout.tar"
    report, proc = _check(hostile, tmp_path, "image", str(path), *GPU, "--format", "json")
    if which == "hostile":
        out = json.loads(proc.stdout)
        assert out["environments"], "the image's site-packages was not found"


def test_the_hook_and_the_judge_catch_what_they_must(hostile, tmp_path):
    """A negative control: the forbidden things, done for real under the same hook, are all flagged."""
    lib = Path(__file__).parents[2] / "fixtures/abi/lib/libc10.so"  # our own fixture: safe to load
    script = f"""
import ctypes, json, os, subprocess, sys
sys.path.insert(0, {str(HERE)!r})
import audited
sys.addaudithook(audited.hook)
ctypes.CDLL({str(lib)!r})
os.system("true")
subprocess.run(["true"])
exec(compile({_canary(tmp_path / "PWNED").decode().replace("os.system", "print")!r}, "x", "exec"))
audited.RECORDING = False
json.dump({{"events": audited.EVENTS, "modules": {{}}}}, open({str(tmp_path / "r.json")!r}, "w"))
"""
    subprocess.run([sys.executable, "-c", script], cwd=tmp_path, check=True, capture_output=True,
                   env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    report = json.loads((tmp_path / "r.json").read_text())
    flagged = {e["event"] for e in violations(report, [tmp_path / "allowed"], [hostile.root, lib.parent])}
    assert {"ctypes.dlopen", "os.system", "subprocess.Popen", "compile", "exec", "open"} <= flagged
    assert (tmp_path / "PWNED").read_text() == CANARY  # the canary really ran, here, on purpose


# -- links never lead out of the archive -------------------------------------------------------

@pytest.mark.slow
def test_image_links_to_host_files_resolve_inside_the_image(tmp_path):
    """A symbolic link and a hard link in a layer naming a real GPU library of THIS machine (by its
    absolute host path, and by `..` climbing out): if wheeldoc followed either out of the image, the
    host library's GPU code would show up in the report. Source-level: tests/image/test_reader.py::
    test_symlinks_stay_inside_the_image, test_dotdot_traversal_is_refused_and_nothing_is_written."""
    from tests import imagefactory as im

    host_lib = Path(__file__).parents[2] / "fixtures/kernels/libmulti.so"
    sp = "usr/local/lib/python3.12/site-packages"
    lay = im.layer([
        im.file_(f"{sp}/pkg-1.0.dist-info/METADATA", b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n\n"),
        im.file_(f"{sp}/pkg-1.0.dist-info/RECORD", b"pkg/libabs.so,,\npkg/libup.so,,\npkg/libown.so,,\n"),
        im.symlink(f"{sp}/pkg/libabs.so", str(host_lib)),
        im.symlink(f"{sp}/pkg/libup.so", "../../../../../../../../.." + str(host_lib)),
        im.file_(f"{sp}/pkg/libown.so", (Path(__file__).parents[2] / "fixtures/kernels/libptxonly.so").read_bytes()),
    ])
    path = im.write_docker_save(tmp_path / "links.tar", [lay], im.config())
    report, proc, roots = audited(tmp_path, "image", str(path), *GPU, "--format", "json")
    out = json.loads(proc.stdout)
    kernels = json.dumps(out["environments"][0]["kernels"])
    assert "pkg/libown.so" in kernels  # the image's own library is read
    assert "libabs.so" not in kernels and "libup.so" not in kernels and "libmulti" not in proc.stdout
    missing = {Path(s["path"]).name: s["reason"] for s in out["skipped"]}
    assert missing == {"libabs.so": "listed in RECORD but missing", "libup.so": "listed in RECORD but missing"}
    opened = [e for e in report["events"] if e["event"] == "open"]
    assert not [e for e in opened if str(host_lib) in e["path"]]
    hard = im.layer([im.hardlink("h", "../../../../../../.." + str(host_lib))])
    bad = im.write_docker_save(tmp_path / "hard.tar", [hard], im.config())
    report, proc, roots = audited(tmp_path, "image", str(bad), *GPU)
    assert report["exit"] == 2 and "points out of the image root" in proc.stderr
