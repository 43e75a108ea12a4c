"""Dockerfiles read into positioned instructions, the way BuildKit's parser reads them.

`parse_dockerfile(path)` / `parse_text(text)` return a `Dockerfile`: its instructions with
their keyword, parsed arguments (`value`, BuildKit's list: the JSON array, the shell string,
the key/value words), flags, heredocs and exact start and end lines; every comment with its
line (so `# wheeldoc: ignore=WD401` pragmas are data); the parser directives (`# syntax=`,
`# escape=`, `# check=`, honoured only at the top, as BuildKit does).

The stage graph and the variables in effect at each instruction live in
`dockerfile_model.py` (`analyze(dockerfile)`), BuildKit's word lexer in
`dockerfile_lex.py`, and shell commands inside RUN in `shell.py`.

This port follows `moby/buildkit` `frontend/dockerfile/parser` and is tested field by field
against the official Go parser (the `dockerfile` package, which embeds BuildKit 0.12.5) on
every fixture and on generated input. Deliberate differences, all on purpose:
- A JSON array followed by more text (`RUN ["a"] && b`) is shell form, as in current
  BuildKit (`json.Unmarshal`); BuildKit 0.12 decoded the first array and dropped the rest.
- `# check=` is a parser directive, as in current BuildKit (0.12 stopped at it).
- Flags are split as Go does (byte by byte: only ASCII blanks separate them), but their
  non-ASCII text is kept as Unicode where Go turns each byte into a Latin-1 character.
- The heredocs of an `ONBUILD RUN <<EOF` are kept on the trigger (`sub`) too; the Go
  binding reports none for ONBUILD, though BuildKit reads them (same end line).
- Input that is not UTF-8, or holds NUL bytes, is refused; Go passes the bytes through.

Bad input raises `InputError` with the line: unterminated heredoc, invalid or repeated
directives, a JSON array of non-strings, `ENV` without value, undecodable or binary bytes,
a line over BuildKit's own 64 KiB line limit, more than `MAX_INSTRUCTIONS` instructions.
"""

from __future__ import annotations

import json
import os
import re
from bisect import bisect_right
from dataclasses import dataclass

from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.dockerfile.lexer import GO_SPACE, GO_SPACE_CHARS, LexError, process_word
from wheeldoc.core.files import open_regular

MAX_DOCKERFILE_BYTES = 4 * 1024 * 1024
MAX_LINE_BYTES = 65535  # bufio.MaxScanTokenSize - 1: BuildKit refuses longer lines
MAX_INSTRUCTIONS = 10_000
MAX_LINES = 200_000

KEYWORDS = frozenset(
    "ADD ARG CMD COPY ENTRYPOINT ENV EXPOSE FROM HEALTHCHECK LABEL MAINTAINER ONBUILD RUN "
    "SHELL STOPSIGNAL USER VOLUME WORKDIR".split()
)
_HEREDOC_KEYWORDS = frozenset(("ADD", "COPY", "RUN"))
_VALID_DIRECTIVES = frozenset(("syntax", "escape", "check"))

_RE_DIRECTIVE = re.compile(r"#[\t\n\f\r ]*([a-zA-Z][a-zA-Z0-9]*)[\t\n\f\r ]*=[\t\n\f\r ]*(.+?)[\t\n\f\r ]*\Z")
_RE_ASCII_WS = re.compile(r"[\t\v\f\r ]+")
_RE_HEREDOC = re.compile(r"([0-9]*)<<(-?)([^<]*)")
_RE_LEADING_TABS = re.compile(r"^\t+", re.M)
_RE_PRAGMA = re.compile(r"wheeldoc\s*:?\s*ignore\s*=\s*([A-Za-z0-9_, ]+)")
_CONTINUATION = {
    "\\": re.compile(r"([^\\])\\[ \t]*\Z|^\\[ \t]*\Z"),
    "`": re.compile(r"([^`])`[ \t]*\Z|^`[ \t]*\Z"),
}
_BOM = "\ufeff"
# Go reads flags and the HEALTHCHECK type byte by byte: a non-ASCII character never counts
# as a space there (its lead byte is not one), unlike U+00A0 in unicode.IsSpace.
_ASCII_SPACE = frozenset(" \t\n\v\f\r")
_ASCII_SPACE_CHARS = " \t\n\v\f\r"


@dataclass(frozen=True)
class Flag:
    """One builder flag: `raw` as BuildKit reports it (`--from=builder`), split on `=`."""

    raw: str
    name: str
    value: str | None


@dataclass(frozen=True)
class Heredoc:
    """A heredoc attached to RUN/COPY/ADD. `raw_body` is the text between the opening line
    and the terminator as in the file (BuildKit's `Content`); `body` strips leading tabs when
    the heredoc is `<<-`. `expand` is False when the delimiter is quoted (`<<"EOF"`).
    Lines are those of the first body line and of the terminator."""

    name: str
    raw_body: str
    chomp: bool
    expand: bool
    fd: int
    start_line: int
    end_line: int

    @property
    def body(self) -> str:
        return _RE_LEADING_TABS.sub("", self.raw_body) if self.chomp else self.raw_body


@dataclass(frozen=True)
class Comment:
    line: int
    text: str  # after '#', stripped
    inside: bool = False  # between continued lines of an instruction


@dataclass(frozen=True)
class Directive:
    name: str  # lower-case: syntax, escape, check
    value: str
    line: int


@dataclass(frozen=True)
class ParseWarning:
    line: int
    message: str


@dataclass(frozen=True)
class Instruction:
    """One instruction. `value` is BuildKit's argument list (`("echo hi",)` for shell-form
    RUN, `("bash", "-c", "x")` for JSON form, `("K", "V", ...)` for ENV/LABEL, `("",)` for
    an unknown keyword). `original` is the logical line after joining continuations;
    `args` the argument text after keyword and flags, starting at `args_offset` in
    `original`; `segments` maps offsets in `original` to physical lines. `sub` is the
    trigger of an ONBUILD. `comments` is the comment block directly above (no blank line
    in between)."""

    index: int
    keyword: str
    written: str
    original: str
    args: str
    args_offset: int
    value: tuple[str, ...]
    json: bool
    flags: tuple[Flag, ...]
    heredocs: tuple[Heredoc, ...]
    start_line: int
    end_line: int
    segments: tuple[tuple[int, int], ...] = ()
    sub: Instruction | None = None
    comments: tuple[Comment, ...] = ()

    @property
    def trigger(self) -> Instruction:
        """The instruction that acts: the ONBUILD trigger, or this one."""
        return self.sub if self.sub is not None else self

    def flag(self, name: str) -> str | None:
        """Value of the last `--name=value` flag; '' for a bare `--name`; None if absent."""
        found = None
        for f in self.flags:
            if f.name == name:
                found = f.value if f.value is not None else ""
        return found

    def flag_values(self, name: str) -> tuple[str, ...]:
        return tuple(f.value or "" for f in self.flags if f.name == name)

    def line_at(self, offset: int) -> int:
        """Physical line of a character offset in `original`."""
        k = bisect_right(self.segments, (offset, float("inf")))
        return self.segments[k - 1][1] if k else self.start_line

    @property
    def shell(self) -> str | None:
        """The shell-form command text (RUN/CMD/ENTRYPOINT/SHELL), None in JSON form."""
        if self.json or self.keyword not in ("RUN", "CMD", "ENTRYPOINT"):
            return None
        return self.args

    @property
    def argv(self) -> tuple[str, ...] | None:
        """The JSON-form argument list, None in shell form."""
        return self.value if self.json else None


@dataclass(frozen=True)
class Dockerfile:
    path: str
    instructions: tuple[Instruction, ...]
    comments: tuple[Comment, ...]
    directives: tuple[Directive, ...]
    escape: str
    line_count: int
    warnings: tuple[ParseWarning, ...] = ()

    @property
    def syntax(self) -> str | None:
        for d in self.directives:
            if d.name == "syntax":
                return d.value
        return None

    def at_line(self, line: int) -> Instruction | None:
        for ins in self.instructions:
            if ins.start_line <= line <= ins.end_line:
                return ins
        return None

    def ignored_codes(self, ins: Instruction) -> frozenset[str]:
        """Codes silenced by `# wheeldoc: ignore=WD401,WD402` in the comment block directly
        above the instruction, or in a comment between its continued lines."""
        texts = [c.text for c in ins.comments]
        texts += [c.text for c in self.comments if c.inside and ins.start_line < c.line <= ins.end_line]
        codes: set[str] = set()
        for t in texts:
            m = _RE_PRAGMA.search(t)
            if m:
                codes.update(c.upper() for c in re.split(r"[, ]+", m.group(1)) if c)
        return frozenset(codes)


# -- reading ---------------------------------------------------------------------------


def parse_dockerfile(path: str | os.PathLike[str]) -> Dockerfile:
    """Read and parse one Dockerfile. Raises `InputError` / `LimitExceeded`."""
    p = os.fspath(path)
    try:
        size = os.path.getsize(p)
        if size > MAX_DOCKERFILE_BYTES:
            raise LimitExceeded(p, f"Dockerfile is {size} bytes, over the {MAX_DOCKERFILE_BYTES} byte limit")
        with open_regular(p) as fh:
            data = fh.read(MAX_DOCKERFILE_BYTES + 1)
    except OSError as e:
        raise InputError(p, f"cannot read: {e.strerror or e}") from None
    return parse_text(data, p)


def parse_text(text: str | bytes, path: str = "<string>") -> Dockerfile:
    """Parse Dockerfile text (bytes are decoded as UTF-8). Raises `InputError`."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = _decode(bytes(text), path)
    else:
        _check_text(text, path)
    return _Parser(text, path).run()


def _line_of(data: bytes | str, offset: int) -> int:
    return data.count(b"\n" if isinstance(data, bytes) else "\n", 0, offset) + 1


_LONG_BYTES = re.compile(rb"[^\n]{%d,}" % (MAX_LINE_BYTES + 1))
_LONG_CHARS = re.compile(r"[^\n]{%d,}" % (MAX_LINE_BYTES // 4 + 1))  # may be over the limit in UTF-8


def _check_lines(data: bytes | str, path: str) -> None:
    """Refuse a line longer than BuildKit's limit (in bytes), without a per-line Python loop."""
    if len(data) <= MAX_LINE_BYTES // 4:
        return
    if isinstance(data, bytes):
        m = _LONG_BYTES.search(data)
        if m:
            raise LimitExceeded(path, f"line is over BuildKit's limit of {MAX_LINE_BYTES} bytes",
                                line=_line_of(data, m.start()))
        return
    for m in _LONG_CHARS.finditer(data):
        if len(m.group().encode("utf-8", "surrogatepass")) > MAX_LINE_BYTES:
            raise LimitExceeded(path, f"line is over BuildKit's limit of {MAX_LINE_BYTES} bytes",
                                line=_line_of(data, m.start()))


def _decode(data: bytes, path: str) -> str:
    if len(data) > MAX_DOCKERFILE_BYTES:
        raise LimitExceeded(path, f"Dockerfile is over the {MAX_DOCKERFILE_BYTES} byte limit")
    nul = data.find(b"\0")
    if nul >= 0:
        raise InputError(path, "binary data (NUL byte), not a Dockerfile", line=_line_of(data, nul), offset=nul)
    _check_lines(data, path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(path, "not UTF-8 text", line=_line_of(data, e.start), offset=e.start) from None


def _check_text(text: str, path: str) -> None:
    if len(text) > MAX_DOCKERFILE_BYTES:
        raise LimitExceeded(path, f"Dockerfile is over the {MAX_DOCKERFILE_BYTES} byte limit")
    nul = text.find("\0")
    if nul >= 0:
        raise InputError(path, "binary data (NUL byte), not a Dockerfile", line=_line_of(text, nul))
    _check_lines(text, path)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(path, "not UTF-8 text (lone surrogate)", line=_line_of(text, e.start)) from None


# -- line helpers (parser.go) ----------------------------------------------------------


def _is_comment(raw: str) -> bool:
    return raw.lstrip(GO_SPACE_CHARS).startswith("#")


def _trim_newline(raw: str) -> str:
    return raw.rstrip("\r\n")


class _Directives:
    __slots__ = ("done", "seen", "escape", "found")

    def __init__(self) -> None:
        self.done = False
        self.seen: set[str] = set()
        self.escape = "\\"
        self.found: list[tuple[str, str]] = []

    def check(self, token: str) -> bool:
        """possibleParserDirective: True when `token` is a directive line. Raises ValueError."""
        if self.done:
            return False
        m = _RE_DIRECTIVE.match(token)
        if not m:
            self.done = True
            return False
        key = m.group(1).lower()
        if key not in _VALID_DIRECTIVES:
            self.done = True
            return False
        if key in self.seen:
            raise ValueError(f"only one {key} parser directive can be used")
        self.seen.add(key)
        value = m.group(2)
        if key == "escape":
            if value not in ("`", "\\"):
                raise ValueError(f"invalid escape token '{value}' does not match ` or \\")
            self.escape = value
        self.found.append((key, value))
        return True


# -- argument parsers (line_parsers.go, split_command.go) ------------------------------


def _extract_flags(line: str) -> tuple[str, list[str], int]:
    """extractBuilderFlags: (remaining text, flags, offset of remaining text in line)."""
    n = len(line)
    stripped = line.lstrip(_ASCII_SPACE_CHARS)
    if not stripped.startswith("--"):
        return stripped, [], n - len(stripped)
    words: list[str] = []
    word: list[str] = []
    in_spaces, in_word, in_quote = 0, 1, 2
    phase = in_spaces
    quote = ""
    blank_ok = False
    pos = 0
    while pos <= n:
        ch = line[pos] if pos < n else ""
        if phase == in_spaces:
            if pos == n:
                break
            if ch in _ASCII_SPACE:
                pos += 1
                continue
            if ch != "-" or pos + 1 == n or line[pos + 1] != "-":
                return line[pos:], words, pos
            phase = in_word
        if pos == n:  # in_word or in_quote at end of input
            w = "".join(word)
            if w != "--" and (blank_ok or w):
                words.append(w)
            break
        if phase == in_word:
            if ch in _ASCII_SPACE:
                phase = in_spaces
                w = "".join(word)
                if w == "--":
                    return line[pos:], words, pos
                if blank_ok or w:
                    words.append(w)
                word = []
                blank_ok = False
                pos += 1
                continue
            if ch == "'" or ch == '"':
                quote = ch
                blank_ok = True
                phase = in_quote
                pos += 1
                continue
            if ch == "\\":
                if pos + 1 == n:
                    pos += 1
                    continue
                pos += 1
                ch = line[pos]
            word.append(ch)
            pos += 1
            continue
        # in_quote
        if ch == quote:
            phase = in_word
            pos += 1
            continue
        if ch == "\\":
            if pos + 1 == n:
                phase = in_word
                pos += 1
                continue
            pos += 1
            ch = line[pos]
        word.append(ch)
        pos += 1
    return "", words, n


def _parse_words(rest: str, escape: str) -> list[str]:
    """parseWords: split on spaces, keeping quotes and escapes in the words."""
    words: list[str] = []
    word: list[str] = []
    in_spaces, in_word, in_quote = 0, 1, 2
    phase = in_spaces
    quote = ""
    blank_ok = False
    n = len(rest)
    pos = 0
    while pos <= n:
        ch = rest[pos] if pos < n else ""
        if phase == in_spaces:
            if pos == n:
                break
            if ch in GO_SPACE:
                pos += 1
                continue
            phase = in_word
        if pos == n:
            if blank_ok or word:
                words.append("".join(word))
            break
        if phase == in_word:
            if ch in GO_SPACE:
                phase = in_spaces
                if blank_ok or word:
                    words.append("".join(word))
                word = []
                blank_ok = False
                pos += 1
                continue
            if ch == "'" or ch == '"':
                quote = ch
                blank_ok = True
                phase = in_quote
            if ch == escape:
                if pos + 1 == n:
                    pos += 1
                    continue
                word.append(ch)
                pos += 1
                ch = rest[pos]
            word.append(ch)
            pos += 1
            continue
        # in_quote
        if ch == quote:
            phase = in_word
        if ch == escape and quote != "'":
            if pos + 1 == n:
                phase = in_word
                pos += 1
                continue
            pos += 1
            word.append(ch)
            ch = rest[pos]
        word.append(ch)
        pos += 1
    return words


class _NotJSON(Exception):
    pass


def _parse_json(rest: str) -> list[str]:
    """parseJSON: a JSON array of strings; `_NotJSON` when it is not an array."""
    rest = rest.lstrip(GO_SPACE_CHARS)
    if not rest.startswith("["):
        raise _NotJSON
    try:
        data = json.loads(rest)
    except (ValueError, RecursionError):  # as BuildKit: what does not decode is the shell form
        raise _NotJSON from None
    if not isinstance(data, list):
        raise _NotJSON
    for item in data:
        if not isinstance(item, str):
            raise ValueError("when using JSON array syntax, arrays must be comprised of strings only")
    # Go's decoder turns lone surrogates into U+FFFD
    return [s.encode("utf-16", "surrogatepass").decode("utf-16", "replace") if _has_surrogate(s) else s
            for s in data]


def _has_surrogate(s: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in s)


def _ws_list(rest: str) -> list[str] | None:
    if rest == "":
        return None
    return _RE_ASCII_WS.split(rest)


def _maybe_json(rest: str) -> tuple[list[str] | None, bool]:
    if rest == "":
        return None, False
    try:
        return _parse_json(rest), True
    except _NotJSON:
        return [rest], False


def _maybe_json_list(rest: str) -> tuple[list[str] | None, bool]:
    try:
        return _parse_json(rest), True
    except _NotJSON:
        return _ws_list(rest), False


def _name_val(rest: str, key: str, escape: str) -> list[str] | None:
    words = _parse_words(rest, escape)
    if not words:
        return None
    if "=" not in words[0]:
        parts = _RE_ASCII_WS.split(rest, maxsplit=1)
        if len(parts) < 2:
            raise ValueError(f"{key} must have two arguments")
        return [parts[0], parts[1]]
    out: list[str] = []
    for w in words:
        if "=" not in w:
            raise ValueError(f'Syntax error - can\'t find = in "{w}". Must be of the form: name=value')
        k, _, v = w.partition("=")
        out += (k, v)
    return out


def _health(rest: str) -> tuple[list[str] | None, bool]:
    sep = 0
    n = len(rest)
    while sep < n and rest[sep] not in _ASCII_SPACE:
        sep += 1
    nxt = sep
    while nxt < n and rest[nxt] in _ASCII_SPACE:
        nxt += 1
    if sep == 0:
        return None, False
    cmd, is_json = _maybe_json(rest[nxt:])
    return [rest[:sep]] + (cmd or []), is_json


def _parse_heredoc_word(src: str) -> tuple[str, int, bool, bool] | None:
    """ParseHeredoc: (name, fd, chomp, expand) for a word like `<<-"EOF"`, else None."""
    m = _RE_HEREDOC.fullmatch(src)
    if not m:
        return None
    fd = int(m.group(1)) if m.group(1) else 0
    if fd >= 1 << 64:
        fd = 0
    rest = m.group(3)
    if not rest:
        return None
    words = process_word(rest, skip_unset=True).words
    if len(words) != 1:
        return None
    raw = process_word(rest, raw_quotes=True, skip_unset=True).words
    if len(raw) != len(words):
        raise ValueError(f"internal lexing of heredoc produced inconsistent results: {rest}")
    quotes = words[0].count("'") + words[0].count('"')
    raw_quotes = raw[0].count("'") + raw[0].count('"')
    return words[0], fd, m.group(2) == "-", quotes == raw_quotes


def _heredocs_from_line(line: str) -> list[tuple[str, int, bool, bool]]:
    try:
        words = process_word(line, raw_quotes=True, raw_escapes=True, skip_unset=True).words
    except LexError:
        return []
    docs = []
    for w in words:
        if "<<" in w:
            try:
                h = _parse_heredoc_word(w)
            except LexError as e:
                raise ValueError(str(e)) from None
            if h is not None:
                docs.append(h)
    return docs


@dataclass
class _Node:
    written: str
    flags: list[str]
    args: str
    args_offset: int
    value: list[str] | None
    json: bool
    sub: _Node | None


def _split_command(line: str) -> tuple[str, str, int]:
    """(keyword as written, rest, offset of rest in line)."""
    lead = len(line) - len(line.lstrip(GO_SPACE_CHARS))
    s = line[lead:].rstrip(GO_SPACE_CHARS)
    m = _RE_ASCII_WS.search(s)
    if not m:
        return s, "", len(line)
    return s[: m.start()], s[m.end():], lead + m.end()


def _new_node(line: str, escape: str, _depth: int = 0) -> _Node:
    cmd, rest, rest_off = _split_command(line)
    if rest:
        remaining, flags, off = _extract_flags(rest)
    else:
        remaining, flags, off = "", [], 0
    lead = len(remaining) - len(remaining.lstrip(GO_SPACE_CHARS))
    args = remaining.strip(GO_SPACE_CHARS)
    args_offset = rest_off + off + lead if args else len(line)
    kw = cmd.upper()
    sub = None
    is_json = False
    value: list[str] | None
    if kw in ("RUN", "CMD", "ENTRYPOINT", "SHELL"):
        value, is_json = _maybe_json(args)
    elif kw in ("ADD", "COPY", "VOLUME"):
        value, is_json = _maybe_json_list(args)
    elif kw in ("FROM", "EXPOSE"):
        value = _ws_list(args)
    elif kw in ("ENV", "LABEL"):
        value = _name_val(args, kw, escape)
    elif kw == "ARG":
        value = _parse_words(args, escape) or None
    elif kw in ("MAINTAINER", "STOPSIGNAL", "USER", "WORKDIR"):
        value = [args] if args else None
    elif kw == "HEALTHCHECK":
        value, is_json = _health(args)
    elif kw == "ONBUILD":
        value = None
        if args:  # Go's AST: an empty node holding the trigger
            value = [""]
            if _depth >= MAX_ONBUILD_NESTING:  # Go's parser recurses without a bound; Python cannot
                raise ValueError("Chaining ONBUILD via `ONBUILD ONBUILD` isn't allowed "
                                 f"(nested more than {MAX_ONBUILD_NESTING} deep here)")
            sub = _new_node(args, escape, _depth + 1)
            sub.args_offset += args_offset
    else:
        value = [""]
    return _Node(cmd, flags, args, args_offset, value, is_json, sub)


def _flag(raw: str) -> Flag:
    body = raw[2:] if raw.startswith("--") else raw
    name, eq, value = body.partition("=")
    return Flag(raw, name, value if eq else None)


MAX_ONBUILD_NESTING = 16  # BuildKit refuses `ONBUILD ONBUILD` when it builds; its parser nests them


class _Parser:
    def __init__(self, text: str, path: str) -> None:
        self.path = path
        if text.startswith(_BOM):
            text = text[1:]
        parts = text.split("\n")
        if len(parts) > MAX_LINES + 1:
            raise LimitExceeded(path, f"more than {MAX_LINES} lines", line=MAX_LINES + 1)
        self.lines = [p + "\n" for p in parts[:-1]]
        if parts[-1]:
            self.lines.append(parts[-1])

    def fail(self, message: str, line: int | None) -> InputError:
        return InputError(self.path, message, line=line)

    def run(self) -> Dockerfile:
        lines = self.lines
        n = len(lines)
        d = _Directives()
        instructions: list[Instruction] = []
        comments: list[Comment] = []
        directive_lines: list[int] = []
        warnings: list[ParseWarning] = []
        pending: list[Comment] = []
        i = 0
        current = 0
        while i < n:
            raw = lines[i]
            i += 1
            token = _trim_newline(raw).lstrip(GO_SPACE_CHARS)
            try:
                is_directive = d.check(token)
            except ValueError as e:
                raise self.fail(str(e), current + 1) from None
            current += 1
            start = current
            if is_directive:
                directive_lines.append(current)
                continue
            if token.startswith("#"):
                c = Comment(current, token[1:].strip(GO_SPACE_CHARS))
                comments.append(c)
                pending.append(c)
                continue
            cont = _CONTINUATION[d.escape]
            m = cont.search(token)
            if m:
                token = token[: m.start()] + (m.group(1) or "")
            if not m and token == "":
                pending = []
                continue
            pieces = [token]
            segments = [(0, start)]
            offset = len(token)
            empty_continuation = False
            eol = m is None
            while not eol and i < n:
                raw = lines[i]
                i += 1
                token = _trim_newline(raw)
                try:
                    d.check(token)
                except ValueError as e:
                    raise self.fail(str(e), current + 1) from None
                current += 1
                if _is_comment(raw):
                    comments.append(Comment(current, token.lstrip(GO_SPACE_CHARS)[1:].strip(GO_SPACE_CHARS), True))
                    continue
                if token.strip(GO_SPACE_CHARS) == "":
                    empty_continuation = True
                    continue
                m = cont.search(token)
                if m:
                    token = token[: m.start()] + (m.group(1) or "")
                eol = m is None
                segments.append((offset, current))
                pieces.append(token)
                offset += len(token)
            line = "".join(pieces)
            if empty_continuation:
                warnings.append(ParseWarning(start, "empty continuation line"))
            try:
                node = _new_node(line, d.escape)
                heredocs = self._heredocs(node, line, i, current)
            except ValueError as e:
                raise self.fail(str(e), start) from None
            if heredocs:
                i += heredocs[-1].end_line - current
                current = heredocs[-1].end_line
            instructions.append(self._instruction(len(instructions), node, line, heredocs, start, current,
                                                  tuple(segments), tuple(pending)))
            pending = []
            if len(instructions) > MAX_INSTRUCTIONS:
                raise LimitExceeded(self.path, f"more than {MAX_INSTRUCTIONS} instructions", line=start)
        if not instructions:
            raise self.fail("no instructions (empty Dockerfile)", current or None)
        directives = tuple(Directive(k, v, ln) for (k, v), ln in zip(d.found, directive_lines))
        return Dockerfile(self.path, tuple(instructions), tuple(comments), directives, d.escape,
                          current, tuple(warnings))

    def _heredocs(self, node: _Node, line: str, i: int, current: int) -> tuple[Heredoc, ...]:
        target = node.sub if node.written.upper() == "ONBUILD" and node.sub is not None else node
        if target.written.upper() not in _HEREDOC_KEYWORDS or target.json or "<<" not in line:
            return ()
        out: list[Heredoc] = []
        lines = self.lines
        for name, fd, chomp, expand in _heredocs_from_line(line):
            body: list[str] = []
            first = current + 1
            while True:
                if i >= len(lines):
                    raise ValueError(f"unterminated heredoc {name!r} (opened here; the file ends at line {current})")
                raw = lines[i]
                i += 1
                current += 1
                term = raw.rstrip("\r\n")
                if chomp:
                    term = term.lstrip("\t")
                if term == name:
                    break
                body.append(raw)
            out.append(Heredoc(name, "".join(body), chomp, expand, fd, first, current))
        return tuple(out)

    def _instruction(self, index: int, node: _Node, line: str, heredocs: tuple[Heredoc, ...], start: int,
                     end: int, segments: tuple[tuple[int, int], ...], comments: tuple[Comment, ...]) -> Instruction:
        sub = None
        if node.sub is not None:
            sub = self._instruction(index, node.sub, line, heredocs, start, end, segments, ())
        return Instruction(
            index=index,
            keyword=node.written.upper(),
            written=node.written,
            original=line,
            args=node.args,
            args_offset=node.args_offset,
            value=tuple(node.value) if node.value is not None else (),
            json=node.json,
            flags=tuple(_flag(f) for f in node.flags),
            heredocs=heredocs,
            start_line=start,
            end_line=end,
            segments=segments,
            sub=sub,
            comments=comments,
        )
