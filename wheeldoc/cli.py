"""Command line: parses flags, builds the target, calls a command, renders. No analysis here."""

from __future__ import annotations

import sys

from wheeldoc import __version__

TYPE_CHECKING = False  # argparse and typing are imported only where a parser is built
if TYPE_CHECKING:
    import argparse
    from typing import Callable, Sequence
from wheeldoc.core.errors import InputError, UsageError

EXIT_USAGE = 2
OUTPUT_FORMATS = ("full", "concise", "json", "sarif", "github")  # docs/output.md describes each
FORMATS = ("text", *OUTPUT_FORMATS)  # --format, the old spelling: text = full
EXIT_CRASH = 3  # an internal error (a bug in wheeldoc), never a finding
ISSUES_URL = "https://github.com/wheeldoc/wheeldoc/issues"
FAIL_ON = ("error", "warning", "info", "never")


def _common(p: argparse.ArgumentParser, *, target: bool = True) -> None:
    g = p.add_argument_group("output")
    g.add_argument("--output-format", dest="format", choices=OUTPUT_FORMATS, default=None,
                   help="full (default), concise (one line per finding), json, sarif, github "
                        "(workflow annotations); docs/output.md")
    g.add_argument("--format", dest="format", choices=FORMATS, default=None,
                   help="the older name of --output-format (text = full)")
    g.add_argument("--statistics", action="store_true", default=None,
                   help="count findings per rule instead of listing them (full, concise, json)")
    g.add_argument("-q", "--quiet", action="store_true", default=None,
                   help="print only the findings: no tables, no summary, nothing on success")
    g.add_argument("--exit-zero", action="store_true", default=None,
                   help="exit 0 even when findings reach --fail-on (input errors still exit 2)")
    g.add_argument("--fail-on", choices=FAIL_ON, default=None,
                   help="exit 1 when a finding is at or above this severity (default: warning)")
    g.add_argument("--select", action="append", default=None, metavar="CODES",
                   help="only these rule codes or prefixes (comma-separated, repeatable)")
    g.add_argument("--ignore", action="append", default=None, metavar="CODES",
                   help="skip these rule codes or prefixes (comma-separated, repeatable)")
    g.add_argument("-o", "--output", default=None, help="write the report to this file")
    g.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                   help="auto: on a terminal, unless NO_COLOR is set (FORCE_COLOR forces it); "
                        "never in -o files")
    g.add_argument("--config", default=None, help="pyproject.toml to read [tool.wheeldoc] from")
    _debug(g)
    if target:
        t = p.add_argument_group("target (always explicit)")
        t.add_argument("--platform", help="linux-x86_64, linux-aarch64, … (default: from --gpu)")
        t.add_argument("--gpu", help="gb10, h200, b200, rtx5090, … or sm_121 / 12.1")
        t.add_argument("--driver", help="driver version (580.95.05), driver branch (580) or CUDA version (13.0)")
        t.add_argument("--python-version", dest="python_version", default=None,
                       help="target Python (e.g. 3.12) for marker evaluation")


def _debug(g) -> None:
    g.add_argument("--debug", action="store_true",
                   help="on an internal error, print the traceback (also WHEELDOC_DEBUG=1)")


def _index_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("index options (passed through to uv)")
    g.add_argument("--index-url", default=None)
    g.add_argument("--extra-index-url", action="append", default=[])
    g.add_argument("--find-links", "-f", action="append", default=[])
    g.add_argument("--torch-backend", default=None, help="passed to uv (cu130, cpu, auto, …)")


def _doctor_options(p: argparse.ArgumentParser, *, image: bool = False) -> None:
    g = p.add_argument_group("doctor")
    if not image:
        g.add_argument("--ld-library-path", default=None, metavar="DIRS",
                       help="the target's LD_LIBRARY_PATH (colon-separated); default: the host's, without a target")
    g.add_argument("--list", action="store_true",
                   help="every embedded GPU code entry (like cuobjdump -lelf -lptx; JSON: entries)")
    g.add_argument("--no-cache", action="store_true", help="read every library again (no cached facts)")


def _columns() -> int:
    """The terminal width as `shutil.get_terminal_size` gives it (COLUMNS, the terminal, else 80),
    without importing shutil (and with it bz2, lzma, fnmatch: ~3 ms of every start)."""
    import os

    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _parser_class() -> type:
    """argparse's parser, whose help formatter takes the width from `_columns` (argparse's own asks
    shutil, even to check an argument while the parser is built)."""
    import argparse

    class Formatter(argparse.HelpFormatter):
        def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                     width: int | None = None) -> None:
            super().__init__(prog, indent_increment, max_help_position, _columns() - 2 if width is None else width)

    class Parser(argparse.ArgumentParser):
        def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003 (argparse's own)
            kwargs.setdefault("formatter_class", Formatter)
            super().__init__(*args, **kwargs)

    return Parser


def build_parser() -> argparse.ArgumentParser:
    import argparse  # here, not above: `kernels --list` (its quick path) builds no parser

    parser = _parser_class()(
        prog="wheeldoc",
        description="A build-and-environment doctor for CUDA wheel installs.",
    )
    parser.add_argument("--version", action="version", version=f"wheeldoc {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("check", help="lockfiles (uv.lock, pylock.toml, requirements), directories, Dockerfiles")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--resolve", action="store_true",
                   help="resolve requirements.in / pyproject inputs with the real `uv pip compile` first "
                        "(from wheels only: uv --no-build); Dockerfiles: read what packages the torch-pin table "
                        "does not hold ask of torch from the index (--index-url, default PyPI: PEP 691 pages and "
                        "the METADATA of the releases an install could take; nothing is installed or built)")
    p.add_argument("--allow-build", action="store_true",
                   help="with --resolve: let uv build local source trees and sdists to read their metadata "
                        "(this runs their build backends, i.e. their code)")
    p.add_argument("--fix", action="store_true", help="apply the safe fixes (Dockerfiles)")
    p.add_argument("--diff", action="store_true", help="show the safe fixes as a diff, change nothing")
    p.add_argument("--pull-base", action="store_true",
                   help="Dockerfiles: read each base image's real config from the Docker daemon (needs the docker "
                        "extra; inspects the images the daemon has, pulls nothing: `docker pull` them first)")
    p.add_argument("--context", default=None, metavar="DIR",
                   help="Dockerfiles: the build context (default: the Dockerfile's folder); requirements files, "
                        "pyproject.toml and wheels the Dockerfile copies are read from it (never outside it)")
    p.add_argument("--stdin-filename", default=None, metavar="NAME",
                   help="with PATH `-`: read the file from stdin; NAME (Dockerfile, uv.lock, "
                        "requirements.txt, …) decides the parser and names it in the report")
    _index_options(p)
    _common(p)

    p = sub.add_parser("abi", help="symbols a wheel's extensions import vs what a torch build exports")
    p.add_argument("extension", help="a wheel, a .so, a directory, an installed distribution name, "
                                     "or a pinned requirement (vllm==0.33.0: uv picks the wheel)")
    p.add_argument("torch", nargs="?", default=None,
                   help="torch==2.11.0+cu130, a range ('torch>=2.9,<2.15'), a torch wheel, or a directory")
    p.add_argument("--python", dest="python_exe", default=None, help="another environment's interpreter")
    p.add_argument("--site-packages", default=None, help="read distributions from this folder")
    p.add_argument("--glibc", default=None, help="target glibc (default: from the wheel's manylinux tag)")
    p.add_argument("--libstdcxx", default=None, help="target GLIBCXX version (e.g. 3.4.30)")
    _index_options(p)
    p.add_argument("--no-index", action="store_true",
                   help="passed to uv: use only --find-links (and the cache), no package index")
    p.add_argument("--no-torch-index", action="store_true",
                   help="resolve and read the real torch wheel even when the torch index holds that build")
    _common(p)

    p = sub.add_parser("index", help="the offline torch ABI index: list it, or add torch wheels you have")
    p.add_argument("action", choices=("add", "list"))
    p.add_argument("wheels", nargs="*", metavar="TORCH.whl", help="torch wheels to add to the local index")
    p.add_argument("--format", choices=("text", "json"), default="text")

    p = sub.add_parser("kernels", help="GPU code in .so files vs a GPU and driver")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--list", action="store_true", help="list every embedded entry (like cuobjdump -lelf -lptx)")
    p.add_argument("--coverage", action="store_true", help="show the libraries x architectures table")
    _common(p)

    p = sub.add_parser("doctor", help="every analyzer over an installed environment")
    p.add_argument("--python", dest="python_exe", default=None,
                   help="another environment's interpreter (run once, standard library only)")
    p.add_argument("--site-packages", default=None, help="read the distributions of this folder")
    _doctor_options(p)
    _common(p)

    p = sub.add_parser("image", help="every analyzer over a container image (docker save / OCI layout)")
    p.add_argument("image", help="a `docker save` tarball, an OCI layout (folder or archive), or a reference "
                                 "the Docker daemon knows (needs the `docker` extra)")
    p.add_argument("--ref", default=None, help="the image to read when the archive holds several (name:tag)")
    _doctor_options(p, image=True)
    _common(p)

    p = sub.add_parser("cache", help="where wheeldoc's cache lives (dir), or remove it (clean)")
    p.add_argument("action", choices=("dir", "clean"),
                   help="dir: print the cache folder; clean: remove it and say what was freed")

    p = sub.add_parser("rule", help="print a rule's documentation (or all rules with --all)")
    p.add_argument("code", nargs="?")
    p.add_argument("--all", action="store_true")
    p.add_argument("--format", choices=("text", "json", "markdown"), default="text")
    _debug(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The `wheeldoc` command: `argv`, else the process's own command line (as the console
    script and `python -m wheeldoc` call it; the quick listing then ends the process itself)."""
    whole = argv is None
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["kernels"] and "--list" in argv:  # the listing that races cuobjdump
        code = _quick_listing(argv[1:])
        if code is not None:
            if whole:
                _end(code)
            return code
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    run: Callable[[argparse.Namespace], int]
    try:
        if args.command == "rule":
            from wheeldoc.verbs.rule import run
        else:
            from wheeldoc.verbs import dispatch

            run = dispatch(args.command)
        return run(args)
    except InputError as e:
        from wheeldoc.core.terminal import stderr_line

        stderr_line(f"wheeldoc: error: {e.one_line()}")
        return EXIT_USAGE
    except UsageError as e:
        from wheeldoc.core.terminal import stderr_line

        stderr_line(f"wheeldoc: error: {e}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug: its own exit code, one line, the traceback on request
        return _crash(e, debug=getattr(args, "debug", False))


def _quick_listing(argv: list[str]) -> int | None:
    """`kernels --list [--format json] FILE…` read without building the parser
    (wheeldoc/kernels/command_list.py); None when the command line needs the full one."""
    try:
        from wheeldoc.kernels.command_list import quick_listing

        return quick_listing(argv)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug, as in main
        return _crash(e, debug="--debug" in argv)


def _end(code: int) -> None:
    """End the process with `code` once what it printed is flushed, without the interpreter's
    teardown (freeing every object and module one by one: about 2 ms after a listing of
    thousands of lines, which races cuobjdump). Nothing else is pending then: the quick listing
    opens no file it leaves open and starts no thread. Where a flush fails (a closed pipe), the
    interpreter ends as usual and reports it as it would have."""
    import os

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # (AttributeError: no sys.stdout at all)
        return
    os._exit(code)


def _crash(e: Exception, *, debug: bool) -> int:
    import os

    if debug or os.environ.get("WHEELDOC_DEBUG", "") not in ("", "0"):
        import traceback

        traceback.print_exc(file=sys.stderr)
    where = f"{type(e).__name__}: {e}".splitlines()[0][:300]
    print(f"wheeldoc: internal error ({where}); this is a bug in wheeldoc {__version__}: please report it "
          f"with the command line at {_issues_url()} (rerun with --debug for the traceback)",
          file=sys.stderr)
    return EXIT_CRASH


def _issues_url() -> str:
    """The tracker from the installed metadata (Project-URL), else the project's own."""
    try:
        from importlib.metadata import metadata

        for entry in metadata("wheeldoc").get_all("Project-URL") or ():
            label, _, url = entry.partition(",")
            if label.strip().lower().replace(" ", "") in ("issues", "bugtracker", "bugs", "tracker"):
                return url.strip()
    except Exception:
        pass
    return ISSUES_URL


if __name__ == "__main__":
    raise SystemExit(main())
