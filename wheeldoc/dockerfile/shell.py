"""Commands inside a RUN: what the shell will invoke, with their environment prefixes.

`commands_in_run(instruction)` reads a RUN in any form (shell form, JSON form such as
`["bash", "-c", "..."]`, heredoc scripts) and returns each simple command as a `Command`:
its argv (quotes removed), its `VAR=value` prefixes, the variables exported before it in the
same script, its line and its text span. It follows `&&`, `||`, `;`, `|`, `&`, newlines,
backslash continuations, subshells and `{ }` groups, `if`/`while` bodies, `$( )` and
backquote substitutions, `bash -c '...'` / `sh -c "..."` strings (recursively), shells
reading a heredoc (`bash <<EOF`), and strips wrappers (`env`, `sudo`, `exec`, `nohup`,
`time`, `command`, `nice`, `timeout`, `xargs`).
`extract_commands(text)` does the same for a bare script.

`find_installs(commands)` / `parse_install(command)` recognise package installers:
`uv pip install|sync`, `uv sync|add|run|tool install`, `pip`/`pip3`/`/opt/venv/bin/pip`
`install|wheel|download`, `python -m pip ...`, `python -m uv ...`, with their options under
canonical long names (`-r` is `--requirement`, uv's `--overrides` is `--override`, ...) and
their positional package specs, wheel paths and URLs.

Tokenizing is a small POSIX-shell scanner rather than `shlex`: it must keep offsets (to
report lines), split on operators inside words (`a&&b`), and understand `$( )`, `${ }`,
backquotes and heredocs, which `shlex` does not; for plain words it agrees with
`shlex.split` (tested). An unbalanced quote never raises: the word runs to the end of the
text and the command is marked `incomplete`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from wheeldoc.dockerfile.parser import Instruction

MAX_COMMANDS = 5000
MAX_DEPTH = 4
MAX_SHELL_VARS = 64  # shell variables followed per script; past it, a new name is marked untracked ("*")
MAX_SHELL_VALUE = 4096  # characters: a longer value is unknown (values that double line after line)

SHELLS = frozenset(("sh", "bash", "dash", "zsh", "ash", "ksh", "mksh", "busybox"))
_RESERVED_PREFIX = frozenset(("if", "then", "elif", "else", "do", "while", "until", "!", "{", "time"))
_RESERVED_ALONE = frozenset(("fi", "done", "esac", "}", "in"))
_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_WORD_END = frozenset(" \t\r\n;&|()<>")
_HEREDOC_WORD = re.compile(r"[0-9]*<<-?\S+")


@dataclass(frozen=True)
class Command:
    """One simple command.

    `line` is the line it starts on: the Dockerfile line for `commands_in_run`, else
    `line_base` + the number of newlines before it; `line_offset` is `line - line_base`
    (0 on the RUN's first line). `span` is [start, end) in the text named by `source`
    ("run" for shell-form text, "json", "heredoc:NAME", "-c" for a `sh -c` string) and
    `text` the slice. `exported` holds the `export VAR=value` seen earlier in the same
    script; `wrappers` the stripped prefixes (`sudo`, `env`, ...); `depth` counts the
    `sh -c` / `$( )` / heredoc levels above the command. `redirects` lists the output
    redirections (`(">", "/tmp/o.txt")`, `(">>", path)`) and `stdin` the text of a heredoc
    (`cat <<EOF > file`) or here-string the command reads, so callers can follow files a
    RUN writes.
    """

    argv: tuple[str, ...]
    assignments: tuple[tuple[str, str], ...]
    line: int
    line_offset: int
    span: tuple[int, int]
    text: str
    source: str = "run"
    depth: int = 0
    exported: tuple[tuple[str, str], ...] = ()
    wrappers: tuple[str, ...] = ()
    incomplete: bool = False
    redirects: tuple[tuple[str, str], ...] = ()
    stdin: str | None = None
    shell_vars: tuple[tuple[str, str | None], ...] = field(default=(), compare=False)

    @property
    def name(self) -> str:
        """The program's base name (`pip` for `/opt/venv/bin/pip`), '' for a bare assignment."""
        return self.argv[0].rsplit("/", 1)[-1] if self.argv else ""

    def env(self) -> dict[str, str]:
        """Variables this command sees from the script itself: exports, then its prefixes."""
        d = dict(self.exported)
        d.update(self.assignments)
        return d


# -- scanner --------------------------------------------------------------------------


@dataclass
class _Word:
    start: int
    end: int
    value: str
    quoted: bool


@dataclass
class _HeredocRef:
    """A `<<DELIM` redirect. `bodies` gets (text, where): `where` is the body's offset in
    the scanned text, or its first Dockerfile line when `outer` (a RUN-level heredoc)."""

    fd: int
    delim: str
    strip: bool
    outer: bool
    bodies: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class _Raw:
    """A simple command before interpretation."""

    start: int
    end: int = 0
    words: list[_Word] = field(default_factory=list)
    heredocs: list[_HeredocRef] = field(default_factory=list)
    herestrings: list[str] = field(default_factory=list)
    redirects: list[tuple[str, str]] = field(default_factory=list)
    subs: list[tuple[int, int]] = field(default_factory=list)
    incomplete: bool = False
    after_pipe: bool = False  # stdin comes from the previous command (`cat <<EOF | sh`)
    last: int = 0  # end of the last word or redirection
    ops: list[str] = field(default_factory=list)  # operators since the previous command


class _Scanner:
    def __init__(self, text: str, outer_heredocs: dict[str, list[tuple[str, int]]] | None) -> None:
        self.s = text
        self.n = len(text)
        self.outer = outer_heredocs  # Dockerfile heredoc bodies by name (RUN text has none inline)
        self.pending: list[_HeredocRef] = []
        self.incomplete = False

    # -- words ------------------------------------------------------------------------
    def _match_close(self, i: int, open_: str, close: str) -> int:
        """Index just after the `close` matching an `open_` that ends at i."""
        s, n = self.s, self.n
        depth = 1
        while i < n:
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c == "'":
                j = s.find("'", i + 1)
                i = n if j < 0 else j + 1
                continue
            if c == '"':
                i = self._skip_dquote(i + 1)
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        self.incomplete = True
        return n

    def _skip_dquote(self, i: int) -> int:
        s, n = self.s, self.n
        while i < n:
            c = s[i]
            if c == "\\":
                i += 2
                continue
            if c == '"':
                return i + 1
            if c == "$" and i + 1 < n and s[i + 1] == "(":
                i = self._match_close(i + 2, "(", ")")
                continue
            if c == "`":
                j = self._backquote_end(i + 1)
                i = j + 1
                continue
            i += 1
        self.incomplete = True
        return n

    def _backquote_end(self, i: int) -> int:
        s, n = self.s, self.n
        while i < n:
            if s[i] == "\\":
                i += 2
                continue
            if s[i] == "`":
                return i
            i += 1
        self.incomplete = True
        return n

    def _dollar(self, i: int, buf: list[str], subs: list[tuple[int, int]]) -> int:
        s, n = self.s, self.n
        if s.startswith("$((", i):
            j = self._match_close(i + 3, "(", ")")
            j = min(n, j + 1) if j < n and s[j] == ")" else j
            buf.append(s[i:j])
            return j
        if s.startswith("$(", i):
            j = self._match_close(i + 2, "(", ")")
            subs.append((i + 2, j - 1 if j <= n and s[j - 1:j] == ")" else j))
            buf.append(s[i:j])
            return j
        if s.startswith("${", i):
            j = self._match_close(i + 2, "{", "}")
            buf.append(s[i:j])
            return j
        if s.startswith("$'", i):
            j = i + 2
            while j < n and s[j] != "'":
                j += 2 if s[j] == "\\" else 1
            if j >= n:
                self.incomplete = True
            buf.append(s[i + 2:min(j, n)].encode("latin-1", "backslashreplace").decode("unicode_escape", "replace"))
            return min(j + 1, n)
        buf.append("$")
        return i + 1

    def word(self, i: int) -> tuple[_Word, list[tuple[int, int]]]:
        s, n = self.s, self.n
        start = i
        buf: list[str] = []
        subs: list[tuple[int, int]] = []
        quoted = False
        while i < n:
            c = s[i]
            if c in _WORD_END:
                break
            if c == "\\":
                if i + 1 < n:
                    if s[i + 1] != "\n":
                        buf.append(s[i + 1])
                    i += 2
                else:
                    i += 1
                continue
            if c == "'":
                quoted = True
                j = s.find("'", i + 1)
                if j < 0:
                    self.incomplete = True
                    buf.append(s[i + 1:])
                    i = n
                    break
                buf.append(s[i + 1:j])
                i = j + 1
                continue
            if c == '"':
                quoted = True
                i += 1
                while i < n and s[i] != '"':
                    d = s[i]
                    if d == "\\" and i + 1 < n:
                        e = s[i + 1]
                        if e in '$`"\\':
                            buf.append(e)
                        elif e != "\n":
                            buf.append("\\" + e)
                        i += 2
                        continue
                    if d == "$":
                        i = self._dollar(i, buf, subs)
                        continue
                    if d == "`":
                        j = self._backquote_end(i + 1)
                        subs.append((i + 1, j))
                        buf.append(s[i:j + 1])
                        i = j + 1
                        continue
                    buf.append(d)
                    i += 1
                if i >= n:
                    self.incomplete = True
                i += 1
                continue
            if c == "$":
                i = self._dollar(i, buf, subs)
                continue
            if c == "`":
                j = self._backquote_end(i + 1)
                subs.append((i + 1, j))
                buf.append(s[i:j + 1])
                i = j + 1
                continue
            buf.append(c)
            i += 1
        return _Word(start, min(i, n), "".join(buf), quoted), subs

    # -- heredoc bodies inside a script -----------------------------------------------
    def _read_bodies(self, i: int) -> int:
        """At the start of the line after a `<<DELIM`, consume each pending body."""
        s, n = self.s, self.n
        for ref in self.pending:
            delim, strip, sink = ref.delim, ref.strip, ref.bodies
            start = i
            while True:
                if i >= n:
                    sink.append((s[start:], start))
                    self.incomplete = True
                    break
                j = s.find("\n", i)
                end = n if j < 0 else j
                line = s[i:end]
                if (line.lstrip("\t") if strip else line) == delim:
                    sink.append((s[start:i], start))
                    i = end + 1
                    break
                i = end + 1
        self.pending = []
        return i

    # -- commands ---------------------------------------------------------------------
    def commands(self) -> list[_Raw]:
        s, n = self.s, self.n
        out: list[_Raw] = []
        cur = _Raw(0)
        i = 0

        def finish(at: int, pipe: bool = False, op: str = "\n") -> None:
            nonlocal cur
            ops = [op]
            if cur.words or cur.heredocs:
                cur.end = max(cur.last, cur.start)
                cur.incomplete = self.incomplete
                out.append(cur)
            else:
                ops = cur.ops + ops
                pipe = pipe or cur.after_pipe
            cur = _Raw(at, after_pipe=pipe, ops=ops)

        while i < n:
            c = s[i]
            if c == " " or c == "\t" or c == "\r":  # CRLF files: \r is noise, not part of a word
                i += 1
                continue
            if c == "\\" and i + 1 < n and s[i + 1] == "\n":
                i += 2
                continue
            if c == "\n":
                finish(i)
                i += 1
                if self.pending:
                    i = self._read_bodies(i)
                cur.start = i
                continue
            if c == "#":  # at a word start: a comment
                j = s.find("\n", i)
                i = n if j < 0 else j
                continue
            if c in ";&|()":
                two = s[i:i + 2]
                if two in ("&>",):
                    i = cur.last = self._redirect(i, cur)
                    continue
                op = two if two in ("&&", "||", ";;", "|&") else c
                finish(i, pipe=(c == "|" and two != "||"), op=op)
                i += len(op)
                cur.start = i
                continue
            if c in "<>" or (c.isdigit() and self._is_fd_redirect(i)):
                i = cur.last = self._redirect(i, cur)
                continue
            w, subs = self.word(i)
            if w.end == i:  # cannot happen: guard against a stuck scanner
                i += 1
                continue
            if not cur.words:
                cur.start = w.start
            cur.words.append(w)
            cur.subs += subs
            i = cur.last = w.end
            if len(out) > MAX_COMMANDS:
                break
        finish(n)
        return out

    def _is_fd_redirect(self, i: int) -> bool:
        j = i
        while j < self.n and self.s[j].isdigit():
            j += 1
        if j >= self.n or self.s[j] not in "<>":
            return False
        return i == 0 or self.s[i - 1] in " \t\n;&|()"

    def _redirect(self, i: int, cur: _Raw) -> int:
        s, n = self.s, self.n
        j = i
        while j < n and s[j].isdigit():
            j += 1
        fd = int(s[i:j]) if j > i else None
        for op in ("<<<", "<<-", "&>>", "<<", ">>", "<&", ">&", "<>", ">|", "&>", "<", ">"):
            if s.startswith(op, j):
                break
        else:  # pragma: no cover - callers only come here on < > &>
            return j + 1
        j += len(op)
        while j < n and s[j] in " \t":
            j += 1
        if (op in (">&", "<&")) and j < n and (s[j].isdigit() or s[j] == "-"):
            k = j
            while k < n and (s[k].isdigit() or s[k] == "-"):
                k += 1
            return k
        target, subs = self.word(j)
        cur.subs += subs
        if op in ("<<", "<<-"):
            ref = _HeredocRef(fd if fd is not None else 0, target.value, op == "<<-", self.outer is not None)
            cur.heredocs.append(ref)
            if self.outer is not None:
                queue = self.outer.get(ref.delim)
                if queue:
                    ref.bodies.append(queue.pop(0))
            else:
                self.pending.append(ref)
        elif op == "<<<":
            cur.herestrings.append(target.value)
        elif op in (">", ">>", ">|", "&>", "&>>") and fd in (None, 1):
            cur.redirects.append((">>" if op.endswith(">>") else ">", target.value))
        return max(target.end, j)


# -- interpretation -------------------------------------------------------------------


def _line_counter(text: str, base: int) -> Callable[[int], int]:
    """offset -> base + newlines before it, in O(log n) per call."""
    newlines = [m.start() for m in re.finditer("\n", text)] if "\n" in text else []
    if not newlines:
        return lambda _p: base
    return lambda p: base + bisect_right(newlines, p - 1)


def _shifted(line_of: Callable[[int], int], start: int) -> Callable[[int], int]:
    """Line lookup for a slice of a text that starts at `start`."""
    return lambda p: line_of(start + p)


def _basename(p: str) -> str:
    return p.rsplit("/", 1)[-1]


def _unwrap(argv: list[str], assignments: list[tuple[str, str]]) -> tuple[list[str], list[str]]:
    """Strip env/sudo/exec/... prefixes; their VAR=value go to `assignments`."""
    wrappers: list[str] = []
    while argv:
        name = _basename(argv[0])
        if name == "env":
            k = 1
            while k < len(argv):
                a = argv[k]
                if a in ("-u", "--unset", "-C", "--chdir", "-S", "--split-string"):
                    k += 2
                elif a.startswith("-"):
                    k += 1
                    if a == "--":
                        break
                elif _ASSIGN.match(a):
                    n_, _, v = a.partition("=")
                    assignments.append((n_, v))
                    k += 1
                else:
                    break
        elif name in ("sudo", "doas"):
            k = 1
            while k < len(argv) and argv[k].startswith("-"):
                k += 2 if argv[k] in ("-u", "-g", "-h", "-p", "-C", "-D", "-R", "-T", "-U") else 1
            while k < len(argv) and _ASSIGN.match(argv[k]):
                n_, _, v = argv[k].partition("=")
                assignments.append((n_, v))
                k += 1
        elif name == "exec":
            k = 1
            while k < len(argv) and argv[k].startswith("-"):
                k += 2 if argv[k] == "-a" else 1
        elif name in ("nohup", "command", "builtin"):
            k = 1
            while k < len(argv) and argv[k].startswith("-"):
                k += 1
        elif name == "time":
            k = 1
            while k < len(argv) and argv[k].startswith("-"):
                k += 2 if argv[k] in ("-f", "-o") else 1
        elif name == "nice":
            k = 1
            while k < len(argv) and argv[k].startswith("-"):
                k += 2 if argv[k] == "-n" else 1
        elif name == "timeout":
            k = 1
            while k < len(argv) and argv[k].startswith("-"):
                k += 2 if argv[k] in ("-s", "-k", "--signal", "--kill-after") else 1
            k += 1  # the duration
        elif name == "xargs":
            k = 1
            while k < len(argv) and argv[k].startswith("-"):
                a = argv[k]
                k += 2 if a in ("-n", "-L", "-P", "-I", "-d", "-E", "-s", "-a") else 1
        else:
            break
        wrappers.append(name)
        argv = argv[k:]
    return argv, wrappers


def _shell_script(argv: Sequence[str]) -> tuple[str | None, bool]:
    """For `bash [opts] -c SCRIPT`: (SCRIPT, True); for `bash [opts]` reading stdin:
    (None, True); for `bash file.sh` or non-shells: (None, False)."""
    if not argv or _basename(argv[0]) not in SHELLS:
        return None, False
    k = 1
    has_c = False
    while k < len(argv):
        a = argv[k]
        if a == "--":
            k += 1
            break
        if a in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            k += 2
            continue
        if a.startswith("--"):
            k += 1
            continue
        if len(a) > 1 and a[0] in "-+":
            if a[0] == "-" and "c" in a[1:]:
                has_c = True
            k += 1
            continue
        break
    if has_c:
        return (argv[k] if k < len(argv) else None), k < len(argv)
    return None, k >= len(argv)


_COMPOUND_OPEN = frozenset(("if", "while", "until", "{"))
_COMPOUND_CLOSE = frozenset(("fi", "done", "esac", "}"))
_TEST_NUMERIC = {"-eq": lambda a, b: a == b, "-ne": lambda a, b: a != b, "-gt": lambda a, b: a > b,
                 "-ge": lambda a, b: a >= b, "-lt": lambda a, b: a < b, "-le": lambda a, b: a <= b}
_LENGTH = re.compile(r"\$\{#([A-Za-z_][A-Za-z0-9_]*)\}")


class _Flow:
    """Which commands of one script surely run, surely do not, or may run: the shell's
    and-or lists (`a && b || c`) over the statuses it can know (`true`, `false`, a bare
    assignment, `[ ... ]` / `test` on known values), and whether a command sits inside a
    compound (`if`, loops, `case`, `( )`, `{ }`), where wheeldoc does not follow the branches."""

    def __init__(self) -> None:
        self.status: frozenset[bool] = frozenset((True,))
        self.compound = 0
        self.case = 0

    def enter(self, raw: _Raw) -> tuple[bool | None, bool]:
        """(runs: True / False / None for maybe, in a pipeline)."""
        conn = ";"
        for op in raw.ops:
            if op == "(":
                if not self.case:
                    self.compound += 1
            elif op == ")":
                if not self.case:
                    self.compound = max(0, self.compound - 1)
            elif op == "\n":
                if conn not in ("&&", "||", "|", "|&"):
                    conn = ";"
            else:
                conn = op
        if conn in ("&&", "||"):
            want = conn == "&&"
            if self.status == frozenset((want,)):
                runs: bool | None = True
            elif want not in self.status:
                runs = False
            else:
                runs = None
        else:
            runs = True
            if conn not in ("|", "|&"):
                self.status = frozenset((True,))
        self._conn = conn
        return runs, conn in ("|", "|&") or raw.after_pipe

    def leave(self, runs: bool | None, status: bool | None) -> None:
        st = frozenset((True, False)) if status is None else frozenset((status,))
        if runs is True:
            self.status = st
        elif runs is None:
            self.status = st | frozenset((self._conn != "&&",))

    @property
    def plain(self) -> bool:
        return self.compound == 0


class _Extractor:
    def __init__(self, line_base: int, lookup: Callable[[str], object] | None = None) -> None:
        self.line_base = line_base
        self.out: list[Command] = []
        self.lookup = lookup

    def run(self, text: str, source: str, line_of: Callable[[int], int], depth: int,
            outer: dict[str, list[tuple[str, int]]] | None, exported: dict[str, str],
            shell: dict[str, str | None] | None = None) -> None:
        if depth > MAX_DEPTH or len(self.out) > MAX_COMMANDS:
            return
        prev: _Raw | None = None
        flow = _Flow()
        shell = {} if shell is None else shell
        raws = _Scanner(text, outer).commands()
        for i, raw in enumerate(raws):
            stdin = prev.heredocs if (raw.after_pipe and prev is not None and not raw.heredocs
                                      and prev.words and _basename(prev.words[0].value) == "cat") else None
            piped_out = i + 1 < len(raws) and raws[i + 1].after_pipe
            self._command(text, raw, source, line_of, depth, exported, stdin, flow, shell, piped_out)
            prev = raw

    def _snapshot(self, shell: dict[str, str | None]) -> tuple[tuple[str, str | None], ...]:
        """The shell variables as a tuple, shared between commands while they do not change."""
        last = getattr(self, "_last", None)
        items = tuple(shell.items())
        if last is not None and last == items:
            return last
        self._last = items
        return items

    # -- what the shell can know -------------------------------------------------------
    def _lookup(self, exported: dict[str, str], shell: dict[str, str | None]):
        from wheeldoc.dockerfile.lexer import UNKNOWN

        def lookup(name: str):
            if name in shell:
                v = shell[name]
                return UNKNOWN if v is None or "$" in v else v
            if "*" in shell and name not in exported:
                return UNKNOWN  # past MAX_SHELL_VARS: the script may have set it
            if name in exported:
                v = exported[name]
                return UNKNOWN if "$" in v else v
            return self.lookup(name) if self.lookup is not None else UNKNOWN

        return lookup

    def _expand(self, word: str, exported: dict[str, str], shell: dict[str, str | None]) -> str | None:
        """The word after parameter expansion, or None when a value is not knowable (an unknown
        variable, a command substitution)."""
        if "$" not in word and "`" not in word:
            return word
        if "$(" in word or "`" in word:
            return None
        from wheeldoc.dockerfile.lexer import LexError, UNKNOWN, process_word

        known = self._lookup(exported, shell)

        def lookup(name: str):  # a long value (a variable doubled line after line) is not followed
            v = known(name)
            return UNKNOWN if isinstance(v, str) and len(v) > MAX_SHELL_VALUE else v

        unknown = False

        def length(m: re.Match) -> str:
            nonlocal unknown
            v = lookup(m[1])
            if v is UNKNOWN:
                unknown = True
                return ""
            return str(len(v or ""))

        word = _LENGTH.sub(length, word)
        if unknown:
            return None
        try:
            r = process_word(word, lookup, skip_quotes=True, raw_escapes=True)
        except LexError:
            return None
        return None if r.unknown or len(r.text) > MAX_SHELL_VALUE else r.text

    def _status(self, raw: _Raw, k: int, exported: dict[str, str], shell: dict[str, str | None]) -> bool | None:
        """The exit status of a simple command when the shell's own semantics decide it."""
        words = raw.words[k:]
        if not words:
            return True
        name = words[0].value
        if name in ("true", ":"):
            st: bool | None = True
        elif name == "false":
            st = False
        elif name in ("[", "[[", "test"):
            close = {"[": "]", "[[": "]]"}.get(name)
            args = words[1:]
            if close is not None:
                if not args or args[-1].value != close:
                    return None
                args = args[:-1]
            vals: list[str] = []
            for w in args:
                v = self._expand(w.value, exported, shell)
                if v is None:
                    return None
                if v == "" and not w.quoted and name != "[[" and "$" in w.value:
                    continue  # an unquoted empty expansion is no word at all
                vals.append(v)
            st = _test(vals)
        else:
            return None
        return st

    def _command(self, text: str, raw: _Raw, source: str, line_of: Callable[[int], int],
                 depth: int, exported: dict[str, str], piped: list[_HeredocRef] | None = None,
                 flow: _Flow | None = None, shell: dict[str, str | None] | None = None,
                 piped_out: bool = False) -> None:
        flow = flow if flow is not None else _Flow()
        shell = shell if shell is not None else {}
        runs, in_pipe = flow.enter(raw)
        in_pipe = in_pipe or piped_out
        for a, b in raw.subs:  # $( ) and backquotes run first
            self.run(text[a:b], source, _shifted(line_of, a), depth + 1, None, dict(exported), dict(shell))
        words = [w.value for w in raw.words]
        unquoted = [not w.quoted for w in raw.words]
        k = 0
        compound = False
        negate = False
        while k < len(words) and unquoted[k] and words[k] in _RESERVED_PREFIX:
            if words[k] == "!":
                negate = not negate
            else:
                if words[k] in _COMPOUND_OPEN:
                    flow.compound += 1
                compound = True
            k += 1
        if k < len(words) and unquoted[k] and words[k] in ("for", "case", "select", "function"):
            flow.compound += 1
            if words[k] == "case":
                flow.case += 1
            flow.leave(runs, None)
            return
        assignments: list[tuple[str, str]] = []
        while k < len(words) and _ASSIGN.match(raw.words[k].value) and _ASSIGN.match(
                text[raw.words[k].start:raw.words[k].end]):
            n_, _, v = words[k].partition("=")
            assignments.append((n_, v))
            k += 1
        argv = words[k:]
        if len(argv) == 1 and unquoted[k] and argv[0] in _RESERVED_ALONE:
            if argv[0] in _COMPOUND_CLOSE:
                flow.compound = max(0, flow.compound - 1)
                if argv[0] == "esac":
                    flow.case = max(0, flow.case - 1)
            flow.leave(runs, None)
            return
        status = None if compound else self._status(raw, k, exported, shell)
        if status is not None and negate:
            status = not status
        if not argv and any("$(" in v or "`" in v for _, v in assignments):
            status = None  # an assignment's status is its command substitution's
        argv, wrappers = _unwrap(argv, assignments)
        if not argv and not assignments:
            flow.leave(runs, status)
            return
        line = line_of(raw.start)
        cmd = Command(
            argv=tuple(argv),
            assignments=tuple(assignments),
            line=line,
            line_offset=line - self.line_base,
            span=(raw.start, raw.end),
            text=text[raw.start:raw.end].rstrip(),
            source=source,
            depth=depth,
            exported=tuple(exported.items()),
            wrappers=tuple(wrappers),
            incomplete=raw.incomplete,
            redirects=tuple(raw.redirects),
            stdin=_stdin_text(raw, piped),
            shell_vars=self._snapshot(shell),
        )
        self.out.append(cmd)
        if argv and argv[0] == "export":
            for a in argv[1:]:
                if _ASSIGN.match(a):
                    n_, _, v = a.partition("=")
                    exported[n_] = v
                    shell.pop(n_, None)
                elif _NAME.match(a) and a in shell:
                    v_ = shell.pop(a)
                    if v_ is not None:
                        exported[a] = v_
        elif not argv:
            for n_, v in assignments:
                if n_ in exported:
                    exported[n_] = v
                elif in_pipe or runs is False:
                    continue  # a pipeline's commands run in subshells; a skipped one sets nothing
                elif n_ not in shell and len(shell) >= MAX_SHELL_VARS:
                    shell["*"] = None  # bounded: later names are not followed, and say so
                elif runs is True and flow.plain and not compound:
                    shell[n_] = self._expand(v, exported, shell)
                else:
                    shell[n_] = None  # set or not, depending on a branch wheeldoc does not follow
        flow.leave(runs, status)
        script, is_shell = _shell_script(argv)
        if script is not None:
            self.run(script, "-c", _line_counter(script, line), depth + 1, None,
                     dict(exported) | dict(assignments))
        elif is_shell:  # the shell reads its script from stdin
            env = dict(exported) | dict(assignments)
            for ref in piped or raw.heredocs:
                if ref.fd != 0:
                    continue
                for body, where in ref.bodies:
                    if ref.strip:
                        body = re.sub(r"(?m)^\t+", "", body)
                    lo = _line_counter(body, where) if ref.outer else _shifted(line_of, where)
                    self.run(body, f"heredoc:{ref.delim}", lo, depth + 1, None, env)
            for hs in raw.herestrings:
                self.run(hs, "-c", lambda p, ln=line: ln, depth + 1, None, dict(exported))


def _test(args: list[str]) -> bool | None:
    """POSIX `test` on expanded arguments, for the forms whose answer needs no file system."""
    if not args:
        return False
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2:
        op, a = args
        if op == "!":
            return args[1] == ""
        if op == "-n":
            return a != ""
        if op == "-z":
            return a == ""
        return None
    if len(args) == 3:
        a, op, b = args
        if op in ("=", "=="):
            return None if any(c in b for c in "*?[") else a == b
        if op == "!=":
            return None if any(c in b for c in "*?[") else a != b
        f = _TEST_NUMERIC.get(op)
        if f is not None:
            try:
                return f(int(a), int(b))
            except ValueError:
                return None
        if a == "!":
            r = _test([op, b])
            return None if r is None else not r
        return None
    return None


def _stdin_text(raw: _Raw, piped: list[_HeredocRef] | None) -> str | None:
    for ref in piped or raw.heredocs:
        if ref.fd == 0 and ref.bodies:
            body = ref.bodies[0][0]
            return re.sub(r"(?m)^\t+", "", body) if ref.strip else body
    return raw.herestrings[0] + "\n" if raw.herestrings else None


def extract_commands(text: str, *, line_base: int = 1, source: str = "text") -> tuple[Command, ...]:
    """The commands of a shell script (a heredoc body, a `sh -c` string, a file)."""
    ex = _Extractor(line_base)
    ex.run(text, source, _line_counter(text, line_base), 0, None, {})
    return tuple(ex.out)


def commands_in_run(ins: Instruction, lookup: Callable[[str], object] | None = None) -> tuple[Command, ...]:
    """The commands a RUN instruction (or an ONBUILD RUN) invokes. `line` is the Dockerfile line.
    `lookup` answers the variables the RUN inherits (ARG, ENV: a value, None for unset, or
    lexer.UNKNOWN); with it, `Command.shell_vars` hold expanded values and `[ ... ]` tests on
    known values decide which branch of `a && b || c` runs."""
    ins = ins.trigger
    if ins.keyword != "RUN":
        return ()
    base = ins.start_line
    ex = _Extractor(base, lookup)
    if ins.json:
        argv = list(ins.value)
        if not argv:
            return ()
        text = " ".join(argv)
        assignments: list[tuple[str, str]] = []
        argv2, wrappers = _unwrap(argv, assignments)
        cmd = Command(tuple(argv2), tuple(assignments), base, 0, (0, len(text)), text, "json", 0, (),
                      tuple(wrappers))
        ex.out.append(cmd)
        script, _ = _shell_script(argv2)
        if script is not None:
            ex.run(script, "-c", _line_counter(script, base), 1, None, dict(assignments))
        return tuple(ex.out)
    args = ins.args
    if ins.heredocs and _single_heredoc(args):
        h = ins.heredocs[0]
        body = h.body
        interpreter = _shebang(body)
        if interpreter is not None and interpreter not in SHELLS:
            return ()  # a script for another interpreter (python, perl, ...)
        ex.run(body, f"heredoc:{h.name}", _line_counter(body, h.start_line), 0, None, {})
        return tuple(ex.out)
    by_name: dict[str, list[tuple[str, int]]] = {}
    for h in ins.heredocs:
        by_name.setdefault(h.name, []).append((h.body, h.start_line))
    off = ins.args_offset
    ex.run(args, "run", lambda p: ins.line_at(off + p), 0, by_name if ins.heredocs else None, {})
    return tuple(ex.out)


def _shebang(body: str) -> str | None:
    """The interpreter a `#!` line names (`python3` for `#!/usr/bin/env python3`)."""
    if not body.startswith("#!"):
        return None
    words = body.split("\n", 1)[0][2:].split()
    if not words:
        return None
    if _basename(words[0]) == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        return _basename(rest[0]) if rest else "env"
    return _basename(words[0])


def _single_heredoc(args: str) -> bool:
    """`RUN <<EOF` alone: BuildKit runs the body itself as the script."""
    return _HEREDOC_WORD.fullmatch(args.strip()) is not None


# -- installers -----------------------------------------------------------------------

# Options that take a value, under their canonical names; aliases map to these.
_VALUE_OPTIONS = frozenset(
    """--requirement --constraint --override --build-constraint --editable --index-url
    --extra-index-url --index --default-index --find-links --index-strategy --keyring-provider
    --torch-backend --python --target --prefix --root --src --extra --group --no-group
    --only-group --package --link-mode --prerelease --resolution --exclude-newer --config-setting
    --no-build-isolation-package --no-binary --only-binary --reinstall-package --refresh-package
    --upgrade-package --python-platform --python-version --platform --implementation --abi
    --with --with-requirements --with-editable --from --env-file --script --cache-dir --directory
    --project --config-file --allow-insecure-host --trusted-host --exclude --no-install-package
    --fork-strategy --upgrade-strategy --progress-bar --root-user-action --report --global-option
    --proxy --retries --timeout --cert --client-cert --log --exists-action --use-feature
    --use-deprecated --wheel-dir --dest --color --python-preference --output-file --hash
    --group --all-groups-except --dependency-metadata --emit-index-annotation""".split()
)
_ALIASES = {
    "-r": "--requirement", "--requirements": "--requirement",
    "-c": "--constraint", "--constraints": "--constraint",
    "--overrides": "--override",
    "-b": "--build-constraint", "--build-constraints": "--build-constraint",
    "-e": "--editable",
    "-i": "--index-url",
    "-f": "--find-links",
    "-t": "--target",
    "-p": "--python",
    "-P": "--upgrade-package",
    "-C": "--config-setting", "--config-settings": "--config-setting",
    "-U": "--upgrade", "-I": "--ignore-installed",
    "-q": "--quiet", "-v": "--verbose", "-n": "--dry-run",
    "-w": "--wheel-dir", "-d": "--dest",
    "-o": "--output-file",
    "--user": "--user",
}
_UV_ACTIONS = {
    ("pip", "install"): "pip install", ("pip", "sync"): "pip sync", ("sync",): "sync",
    ("add",): "add", ("run",): "run", ("tool", "install"): "tool install",
}
_PIP_ACTIONS = frozenset(("install", "wheel", "download"))
_PIP_NAME = re.compile(r"pip(?:[0-9]+(?:\.[0-9]+)*)?(?:\.exe)?\Z")
_PYTHON_NAME = re.compile(r"python(?:[0-9]+(?:\.[0-9]+)*)?[a-z]?(?:\.exe)?\Z")
_PYTHON_VALUE_OPTIONS = frozenset(("-X", "-W", "--check-hash-based-pycs"))


def _canonical(opt: str) -> str:
    return _ALIASES.get(opt, opt)


@dataclass(frozen=True)
class Install:
    """A package-installer invocation.

    `tool` is "uv" or "pip"; `action` "pip install", "pip sync", "sync", "add", "run",
    "tool install" for uv, "install", "wheel", "download" for pip. `options` holds every
    option in order under its canonical long name (value None for a flag); `packages` the
    positional arguments: requirement specs, wheel files, paths, URLs (for `uv pip sync`,
    the requirement files). `run_argv` is the command `uv run` executes. `via` is how the
    tool was reached: the program path, or `python3 -m pip`.
    """

    command: Command
    tool: str
    action: str
    options: tuple[tuple[str, str | None], ...]
    packages: tuple[str, ...]
    via: str
    run_argv: tuple[str, ...] = ()

    def values(self, name: str) -> tuple[str, ...]:
        name = _canonical(name)
        return tuple(v for k, v in self.options if k == name and v is not None)

    def option(self, name: str) -> str | None:
        vals = self.values(name)
        return vals[-1] if vals else None

    def has(self, name: str) -> bool:
        name = _canonical(name)
        return any(k == name for k, _ in self.options)

    @property
    def index_url(self) -> str | None:
        return self.option("--index-url") or self.option("--default-index")

    @property
    def extra_index_urls(self) -> tuple[str, ...]:
        return self.values("--extra-index-url") + self.values("--index")

    @property
    def torch_backend(self) -> str | None:
        return self.option("--torch-backend")

    @property
    def requirements(self) -> tuple[str, ...]:
        return self.values("--requirement")

    @property
    def constraints(self) -> tuple[str, ...]:
        return self.values("--constraint")

    @property
    def overrides(self) -> tuple[str, ...]:
        return self.values("--override")

    @property
    def find_links(self) -> tuple[str, ...]:
        return self.values("--find-links")

    @property
    def editables(self) -> tuple[str, ...]:
        return self.values("--editable")

    @property
    def system(self) -> bool:
        return self.has("--system")

    @property
    def no_build_isolation(self) -> bool:
        return self.has("--no-build-isolation")

    @property
    def wheels(self) -> tuple[str, ...]:
        return tuple(p for p in self.packages if p.endswith(".whl"))


def _parse_options(args: Sequence[str], stop_at_positional: bool = False
                   ) -> tuple[list[tuple[str, str | None]], list[str], int]:
    """(options, positionals, index where parsing stopped)."""
    opts: list[tuple[str, str | None]] = []
    pos: list[str] = []
    i = 0
    n = len(args)
    while i < n:
        a = args[i]
        if a == "--":
            if stop_at_positional:
                return opts, pos, i + 1
            pos += args[i + 1:]
            return opts, pos, n
        if a.startswith("--") and len(a) > 2:
            name, eq, val = a.partition("=")
            name = _canonical(name)
            if eq:
                opts.append((name, val))
            elif name in _VALUE_OPTIONS:
                opts.append((name, args[i + 1] if i + 1 < n else None))
                i += 1
            else:
                opts.append((name, None))
        elif a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                name = _canonical("-" + a[j])
                if name in _VALUE_OPTIONS:
                    if j + 1 < len(a):
                        opts.append((name, a[j + 1:].lstrip("=")))
                    else:
                        opts.append((name, args[i + 1] if i + 1 < n else None))
                        i += 1
                    break
                opts.append((name, None))
                j += 1
        else:
            if stop_at_positional:
                return opts, pos, i
            pos.append(a)
        i += 1
    return opts, pos, n


def _uv(cmd: Command, argv: Sequence[str], via: str) -> Install | None:
    gopts, _, k = _parse_options(argv, stop_at_positional=True)
    rest = list(argv[k:])
    for words, action in _UV_ACTIONS.items():
        if tuple(rest[: len(words)]) == words:
            args = rest[len(words):]
            if action == "run":
                opts, _, m = _parse_options(args, stop_at_positional=True)
                return Install(cmd, "uv", action, tuple(gopts + opts), (), via, tuple(args[m:]))
            opts, pos, _ = _parse_options(args)
            return Install(cmd, "uv", action, tuple(gopts + opts), tuple(pos), via)
    return None


def _pip(cmd: Command, argv: Sequence[str], via: str) -> Install | None:
    gopts, _, k = _parse_options(argv, stop_at_positional=True)
    if k >= len(argv) or argv[k] not in _PIP_ACTIONS:
        return None
    opts, pos, _ = _parse_options(argv[k + 1:])
    return Install(cmd, "pip", argv[k], tuple(gopts + opts), tuple(pos), via)


def _recognize(cmd: Command, argv: Sequence[str]) -> Install | None:
    if not argv:
        return None
    name = _basename(argv[0])
    if name in ("uv", "uv.exe"):
        return _uv(cmd, argv[1:], argv[0])
    if _PIP_NAME.match(name):
        return _pip(cmd, argv[1:], argv[0])
    if _PYTHON_NAME.match(name):
        k = 1
        while k < len(argv) and argv[k].startswith("-") and argv[k] != "-m" and not argv[k].startswith("-m"):
            if argv[k] == "-c":
                return None
            k += 2 if argv[k] in _PYTHON_VALUE_OPTIONS else 1
        if k >= len(argv):
            return None
        if argv[k] == "-m":
            module, k = (argv[k + 1] if k + 1 < len(argv) else ""), k + 2
        elif argv[k].startswith("-m"):
            module, k = argv[k][2:], k + 1
        else:
            return None
        via = f"{argv[0]} -m {module}"
        if module == "pip":
            return _pip(cmd, argv[k:], via)
        if module == "uv":
            return _uv(cmd, argv[k:], via)
    return None


def parse_install(cmd: Command) -> Install | None:
    """The installer invocation in a command, or None. `uv run ... pip install` is seen
    through: the Install returned is then the inner one."""
    inst = _recognize(cmd, cmd.argv)
    if inst is not None and inst.action == "run" and inst.run_argv:
        inner = _recognize(cmd, inst.run_argv)
        if inner is not None:
            return inner
    return inst


def find_installs(commands: Iterable[Command]) -> tuple[Install, ...]:
    """Every installer invocation among `commands`, in order."""
    out = []
    for c in commands:
        inst = parse_install(c)
        if inst is not None:
            out.append(inst)
    return tuple(out)
