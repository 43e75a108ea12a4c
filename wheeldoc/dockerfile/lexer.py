"""BuildKit's word lexer (`frontend/dockerfile/shell/lex.go`) in Python.

One pass over a word does quote removal, escape handling and variable substitution the way
BuildKit does for ENV, ARG, FROM, COPY, WORKDIR, LABEL and the other expanding
instructions: `$VAR`, `${VAR}`, `${VAR:-d}`, `${VAR-d}`, `${VAR:+a}`, `${VAR+a}`,
`${VAR:?msg}`, `${VAR?msg}`, `${VAR#pat}`, `${VAR##pat}`, `${VAR%pat}`, `${VAR%%pat}`,
`${VAR/pat/repl}`, `${VAR//pat/repl}`. The parser also uses it, with raw quotes and escapes,
to find heredoc words.

A lookup answers, for a name, its value (a string), `None` (unset), or `UNKNOWN`: a variable
whose value cannot be known statically (an ARG without default, a variable the base image
may set). An unknown variable is left in the text as written (`${VAR:-d}` stays
`${VAR:-d}`) and its name is reported in `WordResult.unknown`, so callers can tell a
complete expansion from a partial one.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable, Iterator, Union

# Go's unicode.IsSpace: Python's str.isspace() also accepts U+001C..U+001F, Go does not.
GO_SPACE = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
GO_SPACE_CHARS = "".join(sorted(GO_SPACE))
_SPECIAL_PARAMS = frozenset("@*#?-$!0")


class _Unknown:
    __slots__ = ()

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()
Lookup = Callable[[str], Union[str, None, _Unknown]]


MAX_NESTING = 64  # `${A:-${A:-...}}` depth (BuildKit recurses without a bound; we refuse)
_BUDGET: ContextVar[list[int] | None] = ContextVar("wheeldoc_expansion_budget", default=None)


class ExpansionLimit(Exception):
    """Variable expansion past the budget `expansion_budget` set for one Dockerfile. Not a
    LexError: callers that treat a lex error as "unknown" must not swallow it."""


@contextmanager
def expansion_budget(size: int) -> Iterator[None]:
    """Bound every expansion done while analyzing one Dockerfile of `size` bytes: one word
    expands to at most EXPANSION_FACTOR x size + 64 KiB characters, all words together to
    TOTAL_FACTOR x size + 16 MiB (an `ENV A2=${A1}${A1}` chain doubles with every line)."""
    token = _BUDGET.set([EXPANSION_FACTOR * size + (1 << 16), TOTAL_FACTOR * size + (16 << 20)])
    try:
        yield
    finally:
        _BUDGET.reset(token)


EXPANSION_FACTOR = 4
TOTAL_FACTOR = 64


class LexError(ValueError):
    """A word BuildKit refuses: unbalanced quote, bad substitution, `${X:?}` on an unset X."""


@dataclass(frozen=True)
class WordResult:
    text: str
    words: tuple[str, ...]
    matched: frozenset[str]
    unmatched: frozenset[str]
    unknown: frozenset[str]

    @property
    def complete(self) -> bool:
        """True when no unknown variable was left in the text."""
        return not self.unknown


def _no_env(_name: str) -> None:
    return None


def go_trim_space(s: str) -> str:
    return s.strip(GO_SPACE_CHARS)


class _Words:
    __slots__ = ("word", "words", "in_word")

    def __init__(self) -> None:
        self.word: list[str] = []
        self.words: list[str] = []
        self.in_word = False

    def add_char(self, ch: str) -> None:
        if ch in GO_SPACE:
            if self.in_word and self.word:
                self.words.append("".join(self.word))
                self.word = []
                self.in_word = False
        else:
            self.word.append(ch)
            self.in_word = True

    def add_raw_char(self, ch: str) -> None:
        self.word.append(ch)
        self.in_word = True

    def add_string(self, s: str) -> None:
        for ch in s:
            self.add_char(ch)

    def add_raw_string(self, s: str) -> None:
        self.word.append(s)
        self.in_word = True

    def get(self) -> list[str]:
        if self.word:
            w = "".join(self.word)
            if w:
                self.words.append(w)
            self.word = []
            self.in_word = False
        return self.words


class _Lexer:
    __slots__ = (
        "s", "n", "pos", "escape", "raw_quotes", "raw_escapes", "skip_unset", "skip_quotes",
        "lookup", "matched", "unmatched", "unknown", "depth", "spent", "budget",
    )

    def __init__(self, s: str, lookup: Lookup, escape: str, raw_quotes: bool,
                 raw_escapes: bool, skip_unset: bool, skip_quotes: bool) -> None:
        self.s = s
        self.n = len(s)
        self.pos = 0
        self.escape = escape
        self.raw_quotes = raw_quotes
        self.raw_escapes = raw_escapes
        self.skip_unset = skip_unset
        self.skip_quotes = skip_quotes
        self.lookup = lookup
        self.matched: set[str] = set()
        self.unmatched: set[str] = set()
        self.unknown: set[str] = set()
        self.depth = 0
        self.spent = 0
        self.budget = _BUDGET.get()

    # -- scanner -------------------------------------------------------------
    def peek(self) -> str:
        return self.s[self.pos] if self.pos < self.n else ""

    def next(self) -> str:
        if self.pos < self.n:
            ch = self.s[self.pos]
            self.pos += 1
            return ch
        return ""

    def get_env(self, name: str) -> tuple[str, bool, bool]:
        """(value, set, unknown)."""
        v = self.lookup(name)
        if v is UNKNOWN:
            self.unknown.add(name)
            return "", False, True
        if v is None:
            self.unmatched.add(name)
            return "", False, False
        self.matched.add(name)
        if self.budget is not None and v:
            self.spent += len(v)  # type: ignore[arg-type]
            self.budget[1] -= len(v)  # type: ignore[arg-type]
            if self.spent > self.budget[0] or self.budget[1] < 0:
                per_word = self.spent > self.budget[0]
                raise ExpansionLimit(
                    f"expanding ${name} " + (f"makes one word longer than the limit of {self.budget[0]:,} "
                    f"characters ({EXPANSION_FACTOR}x the Dockerfile + 65,536)" if per_word else
                    f"exceeds the limit on all expansions ({TOTAL_FACTOR}x the Dockerfile + 16 MiB)")
                    + ": variables that double with every line?")
        return v, True, False  # type: ignore[return-value]

    # -- grammar -------------------------------------------------------------
    def process_stop_on(self, stop: str, raw_escapes: bool) -> tuple[str, list[str]]:
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise LexError(f"substitutions nested deeper than {MAX_NESTING} (limit MAX_NESTING)")
            return self._process_stop_on(stop, raw_escapes)
        finally:
            self.depth -= 1

    def _process_stop_on(self, stop: str, raw_escapes: bool) -> tuple[str, list[str]]:
        result: list[str] = []
        words = _Words()
        saved = self.raw_escapes
        self.raw_escapes = raw_escapes
        try:
            s, esc = self.s, self.escape
            while self.pos < self.n:
                ch = s[self.pos]
                if stop and ch == stop:
                    self.pos += 1
                    return "".join(result), words.get()
                if ch == "$":
                    tmp = self.process_dollar()
                    result.append(tmp)
                    words.add_string(tmp)
                elif (ch == "'" or ch == '"') and not self.skip_quotes:
                    tmp = self.process_single_quote() if ch == "'" else self.process_double_quote()
                    result.append(tmp)
                    words.add_raw_string(tmp)
                else:
                    self.pos += 1
                    if ch == esc:
                        if self.raw_escapes:
                            words.add_raw_char(ch)
                            result.append(ch)
                        if self.pos >= self.n:
                            break
                        ch = s[self.pos]
                        self.pos += 1
                        words.add_raw_char(ch)
                    else:
                        words.add_char(ch)
                    result.append(ch)
            if stop:
                raise LexError(f"unexpected end of statement while looking for matching {stop}")
            return "".join(result), words.get()
        finally:
            self.raw_escapes = saved

    def process_single_quote(self) -> str:
        result: list[str] = []
        ch = self.next()
        if self.raw_quotes:
            result.append(ch)
        end = self.s.find("'", self.pos)
        if end < 0:
            raise LexError("unexpected end of statement while looking for matching single-quote")
        result.append(self.s[self.pos:end])
        self.pos = end + 1
        if self.raw_quotes:
            result.append("'")
        return "".join(result)

    def process_double_quote(self) -> str:
        result: list[str] = []
        ch = self.next()
        if self.raw_quotes:
            result.append(ch)
        esc = self.escape
        while True:
            p = self.peek()
            if p == "":
                raise LexError("unexpected end of statement while looking for matching double-quote")
            if p == '"':
                self.next()
                if self.raw_quotes:
                    result.append('"')
                return "".join(result)
            if p == "$":
                result.append(self.process_dollar())
                continue
            ch = self.next()
            if ch == esc:
                if self.raw_escapes:
                    result.append(ch)
                q = self.peek()
                if q == "":
                    continue
                if q == '"' or q == "$" or q == esc:
                    ch = self.next()
            result.append(ch)

    def process_name(self) -> str:
        s, start = self.s, self.pos
        if start >= self.n:
            return ""
        ch = s[start]
        if ch.isdecimal():
            end = start
            while end < self.n and s[end].isdecimal():
                end += 1
            self.pos = end
            return s[start:end]
        if ch in _SPECIAL_PARAMS:
            self.pos += 1
            return ch
        end = start
        while end < self.n:
            c = s[end]
            if not (c.isalpha() or c.isdecimal() or c == "_"):
                break
            end += 1
        self.pos = end
        return s[start:end]

    def process_dollar(self) -> str:
        start = self.pos
        self.next()  # '$'
        if self.peek() != "{":
            name = self.process_name()
            if not name:
                return "$"
            value, found, unknown = self.get_env(name)
            if unknown or (not found and self.skip_unset):
                return "$" + name
            return value
        self.next()  # '{'
        p = self.peek()
        if p == "":
            raise LexError("syntax error: missing '}'")
        if p in "{}:":
            raise LexError("syntax error: bad substitution")
        name = self.process_name()
        ch = self.next()
        chs = ch
        if ch == "}":
            value, found, unknown = self.get_env(name)
            if unknown or (not found and self.skip_unset):
                return self.s[start:self.pos] if unknown else "${" + name + "}"
            return value
        null_is_unset = False
        if ch == ":":
            null_is_unset = True
            ch = self.next()
            chs += ch
            if ch not in ("+", "-", "?", "#", "%"):
                raise LexError(f"unsupported modifier ({chs}) in substitution")
        if ch in ("+", "-", "?", "#", "%"):
            try:
                word, _ = self.process_stop_on("}", ch in "#%")
            except LexError:
                if self.peek() == "":
                    raise LexError("syntax error: missing '}'") from None
                raise
            value, is_set, unknown = self.get_env(name)
            if unknown:
                return self.s[start:self.pos]
            if self.skip_unset and not is_set:
                return "${" + name + chs + word + "}"
            if ch == "-":
                return word if (not is_set or (null_is_unset and value == "")) else value
            if ch == "+":
                return "" if (not is_set or (null_is_unset and value == "")) else word
            if ch == "?":
                if not is_set:
                    raise LexError(f"{name}: {word or 'is not allowed to be unset'}")
                if null_is_unset and value == "":
                    raise LexError(f"{name}: {word or 'is not allowed to be empty'}")
                return value
            greedy = False
            if word and word[0] == ch:
                greedy = True
                word = word[1:]
            if ch == "%":
                return _trim_suffix(word, value, greedy)
            return _trim_prefix(word, value, greedy)
        if ch == "/":
            replace_all = self.peek() == "/"
            if replace_all:
                self.next()
            try:
                pattern, _ = self.process_stop_on("/", True)
            except LexError:
                if self.peek() == "":
                    raise LexError("syntax error: missing '/' in ${}") from None
                raise
            try:
                replacement, _ = self.process_stop_on("}", True)
            except LexError:
                if self.peek() == "":
                    raise LexError("syntax error: missing '}'") from None
                raise
            value, is_set, unknown = self.get_env(name)
            if unknown:
                return self.s[start:self.pos]
            if self.skip_unset and not is_set:
                return "${" + name + "/" + pattern + "/" + replacement + "}"
            rx = _shell_pattern(pattern, True, False)
            if replace_all:
                return rx.sub(lambda _m: replacement, value)
            return rx.sub(lambda _m: replacement, value, count=1)
        raise LexError(f"unsupported modifier ({chs}) in substitution")


def _shell_pattern(pattern: str, greedy: bool, anchored: bool) -> re.Pattern[str]:
    out = ["^"] if anchored else []
    star = ".*" if greedy else ".*?"
    i, n = 0, len(pattern)
    while i < n:
        tok = pattern[i]
        i += 1
        if tok == "*":
            out.append(star)
        elif tok == "?":
            out.append(".")
        elif tok == "\\":
            nxt = pattern[i] if i < n else ""
            if nxt in ("}", "/"):
                continue
            if nxt not in ("*", "?", "\\"):
                raise LexError(f"invalid pattern ({pattern}) in substitution: invalid escape '\\{nxt}'")
            out.append("\\" + nxt)
            i += 1
        else:
            out.append(re.escape(tok))
    return re.compile("".join(out))


def _trim_prefix(pattern: str, value: str, greedy: bool) -> str:
    m = _shell_pattern(pattern, greedy, True).search(value)
    return value[m.end():] if m else value


def _reverse_pattern(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern[i] == "\\" and i != n - 1:
            out.append(pattern[i] + pattern[i + 1])
            i += 2
        else:
            out.append(pattern[i])
            i += 1
    return "".join(reversed(out))


def _trim_suffix(pattern: str, value: str, greedy: bool) -> str:
    return _trim_prefix(_reverse_pattern(pattern), value[::-1], greedy)[::-1]


def process_word(
    word: str,
    lookup: Lookup = _no_env,
    *,
    escape: str = "\\",
    raw_quotes: bool = False,
    raw_escapes: bool = False,
    skip_unset: bool = False,
    skip_quotes: bool = False,
) -> WordResult:
    """BuildKit's `Lex.ProcessWord`/`ProcessWords` on one word. Raises `LexError`."""
    lx = _Lexer(word, lookup, escape, raw_quotes, raw_escapes, skip_unset, skip_quotes)
    text, words = lx.process_stop_on("", raw_escapes)
    return WordResult(text, tuple(words), frozenset(lx.matched), frozenset(lx.unmatched),
                      frozenset(lx.unknown))


def referenced_names(word: str, *, escape: str = "\\") -> frozenset[str]:
    """Names a word refers to with `$X` / `${X...}` (outside single quotes); empty on a lex error."""
    if "$" not in word:
        return frozenset()
    try:
        r = process_word(word, lambda _n: UNKNOWN, escape=escape)
    except LexError:
        return frozenset()
    return r.unknown
