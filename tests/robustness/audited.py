"""Run the wheeldoc CLI under an audit hook (PEP 578) and write what it did to a JSON file.

    python tests/robustness/audited.py REPORT.json -- wheeldoc args...

The hook is installed before wheeldoc is imported and records every event that could run,
load, import or write something: `subprocess.Popen`, `os.system` / `os.exec` / `os.posix_spawn`
/ `os.spawn` / `os.fork`, `ctypes.dlopen`, `compile` and `exec`, `import`, `open` with a
write mode or flags, and the file-changing `os.*` / `shutil.*` events, plus `socket.connect`.
It only records; the test (`test_nothing_runs.py`) judges. The report is written after the
CLI returns, with recording switched off.
"""

from __future__ import annotations

import json
import os
import sys
import types

RECORDING = True
EVENTS: list[dict] = []
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_WATCH = {"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
          "ctypes.dlopen", "compile", "exec", "import", "open", "os.mkdir", "os.rename", "os.remove",
          "os.rmdir", "os.symlink", "os.link", "os.chmod", "os.chown", "os.truncate", "os.utime",
          "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree", "shutil.move",
          "shutil.rmtree", "shutil.unpack_archive", "socket.connect", "socket.getaddrinfo", "tempfile.mkstemp",
          "tempfile.mkdtemp"}


def _text(value: object, limit: int = 400) -> str | None:
    if value is None:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return str(value)[:limit]


def _consts(code: types.CodeType) -> list[str]:
    out = []
    for c in code.co_consts:
        if isinstance(c, (str, bytes)):
            out.append(_text(c, 2000))
        elif isinstance(c, types.CodeType):
            out += _consts(c)
    return out


def hook(event: str, args: tuple) -> None:
    if not RECORDING or event not in _WATCH:
        return
    rec: dict = {"event": event}
    if event == "open":
        path, mode, flags = args
        if isinstance(path, int):
            return
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool((flags or 0) & _WRITE_FLAGS)
        if not writes:
            return
        rec.update(path=os.fsdecode(path), mode=mode, flags=flags)
    elif event == "compile":
        source, filename = args
        caller = sys._getframe(1)
        rec.update(source=_text(source, 4000), filename=_text(filename),
                   caller=f"{caller.f_globals.get('__name__')}.{caller.f_code.co_name}")
    elif event == "exec":
        code = args[0]
        rec.update(filename=code.co_filename, consts=_consts(code) if isinstance(code, types.CodeType) else [])
    elif event == "import":
        rec.update(module=args[0], filename=_text(args[1]))
    elif event == "subprocess.Popen":
        executable, argv = args[0], args[1]
        rec.update(executable=_text(executable), argv=[os.fsdecode(a) for a in argv] if argv else [])
    elif event == "ctypes.dlopen":
        rec.update(name=_text(args[0]))
    else:
        rec.update(args=[_text(os.fsdecode(a) if isinstance(a, bytes) else a) for a in args[:3]])
    EVENTS.append(rec)


def main() -> int:
    global RECORDING
    report, sep, *argv = sys.argv[1:]
    assert sep == "--", "usage: audited.py REPORT -- ARGS"
    sys.addaudithook(hook)
    from wheeldoc.cli import main as cli

    try:
        code = cli(argv)
    except SystemExit as e:  # argparse
        code = e.code if isinstance(e.code, int) else 2
    RECORDING = False
    modules = {name: getattr(m, "__file__", None) for name, m in list(sys.modules.items())}
    with open(report, "w") as fh:
        json.dump({"exit": code, "events": EVENTS, "modules": modules}, fh)
    return code


if __name__ == "__main__":
    sys.exit(main())
