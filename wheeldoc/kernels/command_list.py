"""`wheeldoc kernels --list [--format json] FILE…`: the listing of plain files, on a short path.

This is the command meant to race `cuobjdump -lelf -lptx` (bench/bench_kernels.py), so it costs
what the work costs and little more: `wheeldoc.cli` hands it the command line before building
the argument parser (`quick_listing`), and it imports only what reads and writes the listing:
kernels/listwalk.py for a usual file (one loop from the entry headers to the lines, no reader
imported), else the fatbin reader. Its text is the full path's (`kernels.command._run`) byte for byte, which tests hold; any
command line or input it does not handle as that path would (another flag, a wheel, a
directory, an unreadable or corrupt file, a project configuration) goes to the full path.
"""

from __future__ import annotations

import os
import sys

from wheeldoc.core.files import open_regular
from wheeldoc.render.jsontext import BIG, encode_string

ARCHIVES = (".whl", ".zip")
CODE = ("cubin", "ptx")  # the kinds cuobjdump lists
TEXT_FORMATS = {"--format": ("text", "full"), "--output-format": ("full",)}
JSON_FORMATS = {"--format": ("json",), "--output-format": ("json",)}


def quick_listing(argv: list[str]) -> int | None:
    """Run `kernels ARGV` here when ARGV is `--list`, the paths (one run of them, as the parser
    takes them) and at most a `--format` / `--output-format` of text or json; else None."""
    paths: list[str] = []
    flag = fmt = None
    listed = ended = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--list":
            listed = True
        elif arg in TEXT_FORMATS or arg.startswith(("--format=", "--output-format=")):
            if "=" in arg:
                flag, fmt = arg.split("=", 1)
            elif i + 1 < len(argv):
                flag, fmt = arg, argv[i + 1]
                i += 1
            else:
                return None
        elif arg.startswith("-"):
            return None  # any other flag (or `-`, `--`): the parser decides
        elif ended:
            return None  # a second run of paths: the parser's error
        else:
            paths.append(arg)
            if i + 1 == len(argv) or argv[i + 1].startswith("-"):
                ended = True
        i += 1
    if not listed or not paths or _project_config():
        return None
    if fmt is None or fmt in TEXT_FORMATS[flag]:
        run = lambda: list_text(paths, None)  # noqa: E731
    elif fmt in JSON_FORMATS[flag]:
        run = lambda: list_json(paths, None, None)  # noqa: E731
    else:
        return None
    import gc

    if not gc.isenabled():
        return run()
    gc.disable()  # no cycles here: collections would only walk the headers' records
    try:
        return run()
    finally:
        gc.enable()


def _project_config() -> bool:
    """Whether a pyproject.toml above the working directory may hold wheeldoc settings (its
    settings, e.g. a gpu or a format, then apply; see wheeldoc/core/config.py). Read as text, not
    parsed: a file TOML cannot read is left to the full path only when it names such settings."""
    d = os.getcwd()
    while True:
        candidate = os.path.join(d, "pyproject.toml")
        if os.path.isfile(candidate):
            try:
                with open_regular(candidate) as fh:
                    text = fh.read()
                return _names_settings(text)
            except OSError:
                return True
        if os.path.exists(os.path.join(d, ".git")) or os.path.dirname(d) == d:
            return False
        d = os.path.dirname(d)


def _names_settings(text: bytes) -> bool:
    """`[tool.wheeldoc]`, a dotted `tool.wheeldoc.x = …`, or `wheeldoc = {…}` in the [tool] table."""
    if b"tool.wheeldoc" in text:
        return True
    table = b""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(b"["):
            table = line.split(b"#", 1)[0].strip()
        elif table == b"[tool]" and line.startswith((b"wheeldoc", b'"wheeldoc"', b"'wheeldoc'")) and b"=" in line:
            return True
    return False


def _read(paths: list[str], sink):
    """(path, Fatbin, its sink) per input, each container handed to `sink(path)` as it is read
    (none kept); None when an input needs the full path (a wheel, a directory, an unreadable or
    corrupt file: those report skips and errors as findings)."""
    from wheeldoc.core.errors import InputError
    from wheeldoc.kernels.fatbin import open_fatbin

    out = []
    for path in paths:
        if path.endswith(ARCHIVES) or not os.path.isfile(path):
            return None
        each = sink(path)
        try:
            out.append((path, open_fatbin(path, sink=each), each))
        except InputError:
            return None
    return out


def _scanned(paths: list[str], json: bool):
    """(path, listwalk.Scan) per input when every input is a usual file (kernels/listwalk.py
    reads those straight into their lines: JSON records with `json`, else cuobjdump's); else
    None, and `_read` reads them through kernels/fatbin.py."""
    from wheeldoc.kernels.listwalk import scan

    out = []
    for path in paths:
        if path.endswith(ARCHIVES) or not os.path.isfile(path):
            return None
        found = scan(path, encode_string(path) if json else None)
        if found is None:
            return None
        out.append((path, found))
    return out


def list_text(paths: list[str], output: str | None) -> int | None:
    """cuobjdump's lines for plain files (`# name` above each when there are several)."""
    blocks, empty = [], []
    scanned = _scanned(paths, False)
    if scanned is not None:  # each has code, so lines
        blocks = [(path, scan, scan.lines) for path, scan in scanned]
    else:
        from wheeldoc.kernels.fatbin import Lister

        read = _read(paths, Lister.of)
        if read is None:
            return None
        for path, fb, lister in read:
            lines = lister.lines(fb.format)
            if lines:
                blocks.append((path, lister, lines))
            elif not lister.has_code:
                empty.append(path)
    if len(blocks) == 1:  # listing_text's one block, in pieces
        pieces = [*_joined(blocks[0][2], "\n"), "\n"]
    else:
        from wheeldoc.kernels.fatbin import listing_text

        bases = [os.path.basename(p) for p, _, _ in blocks]  # as display_names: short unless ambiguous
        pieces = [listing_text([(b if bases.count(b) == 1 else p, lines)
                                for b, (p, _, lines) in zip(bases, blocks)])]
    # What the text takes from the inputs: the paths (whose names, stems and base names it
    # prints) and the entries' identifiers; the rest is ASCII words, numbers and header words
    # that no control character is in and no looked-for secret crosses (see list_json).
    parts = [p for p, _, _ in blocks]
    for _, lister, _ in blocks:
        parts += lister.identifiers
    _write_text(pieces, output, parts)
    if empty:
        from wheeldoc.core.terminal import stderr_line

        for path in empty:
            stderr_line(f"wheeldoc: {path}: no GPU code")
    return 0


def _write_text(pieces: list[str], output: str | None, parts: list[str]) -> None:
    """The listing (`pieces` joined), control characters in file names escaped (the report's
    writer, `render.output.deliver`, does the same for every other text) and credentials masked
    as `write_text` masks them; `parts` (what of the text comes from the inputs) decides whether
    either can change anything, so a clean listing is written as it is."""
    from wheeldoc.core.redact import may_hold_secret

    if not output and all(p.isprintable() for p in parts) and not may_hold_secret("\n".join(parts)):
        write = sys.stdout.write  # str.isprintable is False for every character escape_controls escapes
        for piece in pieces:
            write(piece)
        return
    text = "".join(pieces)
    from wheeldoc.core.terminal import escape_controls

    if output:
        from wheeldoc.render.output import write_text

        write_text(escape_controls(text), output)
        return
    from wheeldoc.core.redact import redact_text

    sys.stdout.write(redact_text(escape_controls(text)))  # what write_text does for stdout


def _joined(lines: list[str], sep: str, chunk: int = 512) -> list[str]:
    """`sep.join(lines)` in pieces of `chunk` lines: a listing of megabytes is written without
    one string (and one encoded copy) of its whole size, each a fresh mapping of memory."""
    return [("" if i == 0 else sep) + sep.join(lines[i:i + chunk]) for i in range(0, len(lines), chunk)]


class _Records:
    """One library's `entries` records as JSON, rendered as its containers are read (the
    `sink` of `open_fatbin`): each record by one f-string, as the C encoder writes it (kind,
    arch, ISA and compression are ASCII words from the header); its containers that hold code
    and its entries counted; the entries themselves kept only while few (BIG or less: the
    document then holds them indented, as `dumps` writes a short array)."""

    __slots__ = ("lib", "lines", "mids", "ids", "containers", "count", "few")

    def __init__(self, path: str) -> None:
        self.lib = f'{{"library": {encode_string(path)}, "container": '
        self.lines: list[str] = []
        self.mids: dict = {}  # the fields the header decides, per (kind, sm, flags, ISA, codec)
        self.ids: dict = {}  # encoded identifiers
        self.containers = self.count = 0
        self.few: list | None = []

    def __call__(self, container) -> None:
        entries = container.entries
        self.count += len(entries)
        if self.few is not None:
            self.few.extend(entries)
            if len(self.few) > BIG:
                self.few = None
        code = False  # whether the container holds code cuobjdump lists
        mids, ids, append = self.mids, self.ids, self.lines.append
        lib = f'{self.lib}{container.index}, "index": '  # the container of every entry in it
        for (_c, index, _off, kind, kind_code, sm, suffix, version, flags, _hsize, _poff, psize,
             _csize, dsize, compression, identifier, _opts, _accel, parent) in entries:
            if not code and kind in CODE:
                code = True
            mid = mids.get((kind_code, sm, flags, version, compression))
            if mid is None:  # what the entry's arch, ptx_isa and size properties say
                isa = f'"{version[0]}.{version[1]}"' if kind == "ptx" else "null"
                codec = "null" if compression is None else f'"{compression}"'
                mid = mids[kind_code, sm, flags, version, compression] = (
                    f', "kind": "{kind}", "arch": "sm_{sm}{suffix}", "ptx_isa": {isa}, '
                    f'"compression": {codec}, "size": ')
            size = psize if dsize is None else dsize
            if identifier is None and parent is None:
                append(f'{lib}{index}{mid}{size}, "identifier": null, "concat": false}}')
                continue
            if identifier is None:
                ident = "null"
            else:
                ident = ids.get(identifier)
                if ident is None:
                    ident = ids[identifier] = encode_string(identifier)
            append(f'{lib}{index}{mid}{size}, "identifier": {ident}, '
                   f'"concat": {"false" if parent is None else "true"}}}')
        if code:
            self.containers += 1


def list_json(paths: list[str], output: str | None, fail_on: str | None) -> int | None:
    """`--list --format json` of plain files, without the report machinery: the document the
    full path prints for a listing without a target (no rule runs then, so no finding), built
    field for field as `report_to_dict` and `entry_record` / `library_record` do (a test holds
    the two byte for byte)."""
    from wheeldoc import __version__
    from wheeldoc.render.jsontext import dumps

    scanned = _scanned(paths, True)
    if scanned is not None and sum(scan.count for _, scan in scanned) > BIG:
        read = [(path, scan, scan) for path, scan in scanned]  # (each has code)
    else:  # a few entries are kept to be written indented: _Records keeps them
        read = _read(paths, _Records)
        if read is None:
            return None
    read = [(path, fb, rec) for path, fb, rec in read if rec.containers]  # the full path
    libraries = [  # reports no library for a file without GPU code either
        {"library": path, "path": path, "member": None, "format": fb.format,
         "section": fb.section, "containers": rec.containers, "entries": rec.count, "load": None}
        for path, fb, rec in read]
    total = sum(rec.count for _, _, rec in read)
    entries = [] if total > BIG else [
        {"library": path, "container": e.container, "index": e.index, "kind": e.kind,
         "arch": e.arch, "ptx_isa": e.ptx_isa, "compression": e.compression, "size": e.size,
         "identifier": e.identifier, "concat": e.parent is not None}
        for path, _, rec in read for e in rec.few]
    doc = {"schema_version": 1, "tool": {"name": "wheeldoc", "version": __version__},
           "command": "kernels",
           "target": {"platform": None, "gpu": None, "driver": None, "python": None,
                      "source": "flags"},
           "inputs": list(paths), "findings": [], "skipped": [],
           "summary": {"error": 0, "warning": 0, "info": 0, "total": 0, "skipped": 0,
                       "fail_on": fail_on or "warning", "exit_code": 0},
           "entries": entries, "libraries": libraries}
    # What may hold a secret (core.redact looks for URL userinfo and token-like words): the
    # paths and identifiers, as encoded; the rest is field names, numbers and header words
    # (cubin, sm_90a, 9.0, zstd), each between quotes, commas or blanks, which no looked-for
    # word crosses. So the text needs the redaction exactly when these parts do (one look over
    # them instead of two over a listing of megabytes).
    parts = [encode_string(path) for path, _, _ in read]
    if total > BIG:  # the records rendered while reading
        lines: list[str] = []
        for _, _, rec in read:
            lines += rec.lines
            parts.extend(rec.ids.values())
            parts.extend(rec.mids.values())
        doc["entries"] = "\0entries"
        head = dumps(doc)
        parts.extend((head, lines[0] if lines else ""))
        before, after = head.split('"\\u0000entries"', 1)
        pieces = [before + "[\n    ", *_joined(lines, ",\n    "), "\n  ]" + after]
    else:
        pieces = [dumps(doc)]
        parts = pieces
    from wheeldoc.core.redact import may_hold_secret

    if output or may_hold_secret("\n".join(parts)):
        from wheeldoc.core.redact import redact_json_text
        from wheeldoc.render.output import write_text

        write_text(redact_json_text("".join(pieces)), output)  # as `render.output.deliver` does
    else:
        write = sys.stdout.write  # nothing either redaction would change
        for piece in pieces:
            write(piece)
    return 0
