"""The build graph of a parsed Dockerfile: stages, edges, and the variables at each instruction.

`analyze(dockerfile, build_args=None)` follows BuildKit's `dockerfile2llb`:
- ARGs before the first FROM are global: visible in FROM lines (base image, `--platform`)
  only, unless a stage redeclares them with `ARG NAME`, which takes the global value.
  BuildKit's platform ARGs (BUILDPLATFORM, TARGETARCH, ...) are global too, value unknown.
- A stage `FROM <earlier stage>` inherits that stage's ENV, ARGs, WORKDIR and SHELL.
  `COPY --from` and `RUN --mount=from=` bring files only, never variables.
- ENV and ARG write one environment, last write wins (BuildKit's `AddEnv`): that is what
  expansion sees and what a RUN runs with. An `ARG NAME` with no value and no global or
  build-arg value declares the name but sets nothing.
- Words of ENV/ARG/FROM/COPY/ADD/WORKDIR/LABEL/USER/... are expanded like BuildKit does
  (`dockerfile_lex`); all words of one ENV see the environment from before it.

Values the Dockerfile cannot know are kept apart: an ARG with no default (only
`--build-arg` sets it), a platform ARG, a variable the external base image may define. They
stay as written in expanded text and are listed in `Expansion.unknown`.

Instructions BuildKit refuses at this stage (unknown keyword, a non-ARG instruction before
the first FROM, `FROM` with a bad argument count or stage name) raise `InputError`.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, Mapping

from wheeldoc.core.errors import InputError
from wheeldoc.dockerfile.parser import KEYWORDS, Dockerfile, Instruction
from wheeldoc.dockerfile.lexer import UNKNOWN, LexError, process_word

PLATFORM_ARGS = (
    "BUILDPLATFORM", "BUILDOS", "BUILDARCH", "BUILDVARIANT",
    "TARGETPLATFORM", "TARGETOS", "TARGETARCH", "TARGETVARIANT",
)
DEFAULT_SHELL = ("/bin/sh", "-c")
_EXPANDING = frozenset(
    "ADD COPY ENV EXPOSE FROM LABEL STOPSIGNAL USER VOLUME WORKDIR".split()
)
_EMPTY: Mapping[str, "Binding"] = MappingProxyType({})
_STAGE_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")

BindingKind = Literal["env", "arg", "global", "platform"]


@dataclass(frozen=True)
class Binding:
    """A variable as set by one instruction.

    `kind`: "env" (ENV), "arg" (ARG inside a stage), "global" (ARG before the first FROM),
    "platform" (BuildKit's automatic platform ARGs). `value` is None when nothing known
    sets it: an ARG without default (only `--build-arg` would), a platform ARG.
    `line`/`stage` say where it was set (None for platform ARGs / the global scope).
    `unknown` names the variables left unexpanded inside `value`. `build_arg` is True when
    the value came from the `build_args` given to `analyze`.
    """

    name: str
    value: str | None
    kind: BindingKind
    line: int | None
    stage: int | None
    unknown: frozenset[str] = frozenset()
    build_arg: bool = False

    @property
    def known(self) -> bool:
        return self.value is not None and not self.unknown


@dataclass(frozen=True)
class Expansion:
    """A word after BuildKit substitution. `unknown`: variables left as written;
    `unset`: referenced, not set (expanded to '' or to their default); `used`: set and used."""

    raw: str
    text: str
    used: frozenset[str] = frozenset()
    unset: frozenset[str] = frozenset()
    unknown: frozenset[str] = frozenset()
    error: str | None = None

    @property
    def complete(self) -> bool:
        return not self.unknown and self.error is None


@dataclass(frozen=True)
class Scope:
    """What one instruction sees.

    `vars`: the environment expansion uses and a RUN runs with (ENV and ARG, last write
    wins). `env`: the ENV subset (persisted in the image). `args`: every ARG in scope,
    with a None value for those only `--build-arg` would set. `image_env_unknown`: the
    stage chain starts at an external image, whose own ENV (PATH, CUDA_VERSION, ...) is
    not known here. `workdir` is None while unknown (inherited from an external image).
    """

    stage: int | None
    vars: Mapping[str, Binding]
    env: Mapping[str, Binding]
    args: Mapping[str, Binding]
    image_env_unknown: bool
    workdir: str | None = None
    shell: tuple[str, ...] = DEFAULT_SHELL

    def lookup(self, name: str) -> Binding | None:
        return self.vars.get(name)

    def value(self, name: str) -> str | None:
        b = self.vars.get(name)
        return b.value if b is not None else None

    def _resolve(self, name: str) -> str | None | object:
        b = self.vars.get(name)
        if b is not None:
            return b.value if b.known else UNKNOWN
        a = self.args.get(name)
        if a is not None:  # declared; only --build-arg sets it
            return UNKNOWN
        return UNKNOWN if self.image_env_unknown else None

    def expand(self, word: str, escape: str = "\\") -> Expansion:
        """Expand one word as BuildKit does for ENV/COPY/WORKDIR/... (quotes removed)."""
        if "$" not in word and "'" not in word and '"' not in word and escape not in word:
            return Expansion(word, word)
        try:
            r = process_word(word, self._resolve, escape=escape)  # type: ignore[arg-type]
        except LexError as e:
            return Expansion(word, word, error=str(e))
        return Expansion(word, r.text, r.matched, r.unmatched, r.unknown)


@dataclass(frozen=True)
class Stage:
    """One build stage. `base` is the FROM image after global-ARG expansion (`base_raw` as
    written); `parent` the index of the earlier stage it is built FROM (None for an
    external image); `platform` the expanded `--platform`. `instructions` are indexes into
    `Dockerfile.instructions`, FROM included."""

    index: int
    name: str | None
    base: str
    base_raw: str
    parent: int | None
    platform: str | None
    line: int
    end_line: int
    instructions: tuple[int, ...]
    base_unknown: frozenset[str] = frozenset()

    @property
    def label(self) -> str:
        return self.name if self.name is not None else str(self.index)

    @property
    def is_scratch(self) -> bool:
        return self.parent is None and self.base.lower() == "scratch"


@dataclass(frozen=True)
class Edge:
    """A dependency of `stage` on `source`: "from" (base stage), "copy" (`COPY --from`),
    "mount" (`RUN --mount=from=`). `source_stage` is None when `source` names an image."""

    kind: Literal["from", "copy", "mount"]
    stage: int
    source: str
    source_stage: int | None
    line: int
    instruction: int


@dataclass(frozen=True)
class BuildGraph:
    dockerfile: Dockerfile
    global_args: Mapping[str, Binding]
    stages: tuple[Stage, ...]
    edges: tuple[Edge, ...]
    scopes: tuple[Scope, ...]  # one per instruction: what it sees (before it runs)
    stage_of: tuple[int | None, ...]  # per instruction; None before the first FROM
    final_scopes: tuple[Scope, ...]  # per stage: the scope after its last instruction
    bindings: tuple[Binding, ...]  # every ENV/ARG binding, in file order
    global_scope: Scope  # what FROM lines see: global and platform ARGs
    build_args: Mapping[str, str] = field(default_factory=dict)

    @property
    def instructions(self) -> tuple[Instruction, ...]:
        return self.dockerfile.instructions

    def scope(self, ins: Instruction | int) -> Scope:
        return self.scopes[ins if isinstance(ins, int) else ins.index]

    def stage(self, ref: str | int) -> Stage | None:
        """A stage by index or by (case-insensitive) name; the last one of that name wins."""
        if isinstance(ref, int):
            return self.stages[ref] if 0 <= ref < len(self.stages) else None
        found = None
        for s in self.stages:
            if s.name is not None and s.name == ref.lower():
                found = s
        return found

    def stage_for(self, ins: Instruction | int) -> Stage | None:
        i = self.stage_of[ins if isinstance(ins, int) else ins.index]
        return self.stages[i] if i is not None else None

    def ancestors(self, stage: Stage | int) -> tuple[Stage, ...]:
        """The FROM chain above a stage, nearest first."""
        s = self.stages[stage if isinstance(stage, int) else stage.index]
        out = []
        while s.parent is not None:
            s = self.stages[s.parent]
            out.append(s)
        return tuple(out)

    def root(self, stage: Stage | int) -> Stage:
        chain = self.ancestors(stage)
        return chain[-1] if chain else self.stages[stage if isinstance(stage, int) else stage.index]

    def final_scope(self, stage: Stage | int) -> Scope:
        """The scope after the stage's last instruction."""
        st = self.stages[stage if isinstance(stage, int) else stage.index]
        return self.final_scopes[st.index]

    def setters(self, name: str) -> tuple[Binding, ...]:
        """Every ENV/ARG instruction (any stage, global scope included) that sets `name`."""
        return tuple(b for b in self.bindings if b.name == name)

    def expand(self, word: str, ins: Instruction | int) -> Expansion:
        return self.scope(ins).expand(word, self.dockerfile.escape)

    def expanded_args(self, ins: Instruction | int) -> tuple[Expansion, ...] | None:
        """The instruction's `value` words expanded as BuildKit does, or None for keywords
        BuildKit does not expand (RUN, CMD, ENTRYPOINT, SHELL, HEALTHCHECK, ARG, ONBUILD)."""
        ins = self.instructions[ins] if isinstance(ins, int) else ins
        if ins.keyword not in _EXPANDING:
            return None
        sc = self.scope(ins)
        esc = self.dockerfile.escape
        if ins.keyword == "FROM":
            sc = self.global_scope
        return tuple(sc.expand(w, esc) for w in ins.value)


@dataclass
class _StageState:
    vars: dict[str, Binding]
    env: dict[str, Binding]
    args: dict[str, Binding]
    image_env_unknown: bool
    workdir: str | None
    shell: tuple[str, ...]
    snapshot: Scope | None = None

    def scope(self, index: int) -> Scope:
        if self.snapshot is None:
            self.snapshot = Scope(index, MappingProxyType(dict(self.vars)), MappingProxyType(dict(self.env)),
                                  MappingProxyType(dict(self.args)), self.image_env_unknown, self.workdir,
                                  self.shell)
        return self.snapshot

    def clone(self) -> _StageState:
        return _StageState(dict(self.vars), dict(self.env), dict(self.args), self.image_env_unknown,
                           self.workdir, self.shell)


def _fail(df: Dockerfile, ins: Instruction, message: str) -> InputError:
    return InputError(df.path, message, line=ins.start_line)


def _stage_name(df: Dockerfile, ins: Instruction) -> tuple[str, str | None]:
    v = ins.value
    if len(v) == 3 and v[1].lower() == "as":
        name = v[2].lower()
        if not (name[:1].isascii() and name[:1].isalpha() and set(name) <= _STAGE_NAME_CHARS):
            raise _fail(df, ins, f'invalid name for build stage: "{v[2]}", '
                                 "name can't start with a number or contain symbols")
        return v[0], name
    if len(v) != 1:
        raise _fail(df, ins, "FROM requires either one or three arguments")
    return v[0], None


def _from_value(sc: Scope, name: str, value: str | None, escape: str) -> tuple[str | None, frozenset[str], str | None]:
    if value is None:
        return None, frozenset(), None
    e = sc.expand(value, escape)
    return e.text, e.unknown, e.error


def _parse_mount(spec: str) -> dict[str, str]:
    """`type=cache,target=/x,from=builder` (BuildKit reads it as one CSV record)."""
    import csv

    try:
        fields = next(csv.reader([spec]))
    except (csv.Error, StopIteration):
        fields = spec.split(",")
    out: dict[str, str] = {}
    for f in fields:
        k, eq, v = f.partition("=")
        out[k.strip().lower()] = v if eq else "true"
    return out


def mounts(ins: Instruction) -> tuple[dict[str, str], ...]:
    """The `--mount` specs of a RUN, each as a dict (`type` defaults to "bind")."""
    out = []
    for spec in ins.flag_values("mount"):
        d = _parse_mount(spec)
        d.setdefault("type", "bind")
        out.append(d)
    return tuple(out)


def analyze(df: Dockerfile, build_args: Mapping[str, str] | None = None) -> BuildGraph:
    """Build the stage graph and per-instruction scopes. Raises `InputError`."""
    build_args = dict(build_args or {})
    esc = df.escape
    instructions = df.instructions
    all_bindings: list[Binding] = []

    # -- global scope: platform ARGs, then the ARGs before the first FROM -------------
    gvars: dict[str, Binding] = {}
    for name in PLATFORM_ARGS:
        v = build_args.get(name)
        gvars[name] = Binding(name, v, "platform", None, None, build_arg=v is not None)
    gargs: dict[str, Binding] = {}
    gscope = Scope(None, MappingProxyType(dict(gvars)), _EMPTY, _EMPTY, False)
    scopes: list[Scope] = []
    stage_of: list[int | None] = []
    first_from = next((i for i, ins in enumerate(instructions) if ins.keyword == "FROM"), None)
    if first_from is None:
        raise InputError(df.path, "no build stage: the Dockerfile has no FROM", line=instructions[0].start_line)
    for ins in instructions[:first_from]:
        if ins.keyword != "ARG":
            raise _fail(df, ins, f"no build stage in current context: {ins.keyword} before the first FROM")
        scopes.append(gscope)
        stage_of.append(None)
        for word in ins.value:
            name, eq, raw = word.partition("=")
            if not name:
                raise _fail(df, ins, "ARG names can not be blank")
            if name in build_args:
                b = Binding(name, build_args[name], "global", ins.start_line, None, build_arg=True)
            elif eq:
                value, unknown, _err = _from_value(gscope, name, raw, esc)
                b = Binding(name, value, "global", ins.start_line, None, unknown)
            else:
                b = Binding(name, None, "global", ins.start_line, None)
            gargs[name] = b
            if b.value is not None:
                gvars[name] = b
            all_bindings.append(b)
            gscope = Scope(None, MappingProxyType(dict(gvars)), _EMPTY, MappingProxyType(dict(gargs)), False)
    global_scope = Scope(None, MappingProxyType(dict(gvars)), _EMPTY, MappingProxyType(dict(gargs)), False)

    # -- stages ---------------------------------------------------------------------
    stages: list[Stage] = []
    edges: list[Edge] = []
    names: dict[str, int] = {}
    after: list[Scope] = []
    st: _StageState | None = None
    cur: dict | None = None
    finals: dict[int, _StageState] = {}

    def close_stage() -> None:
        if cur is None or st is None:
            return
        idx = cur.pop("instructions_list")
        stages.append(Stage(**cur, end_line=instructions[idx[-1]].end_line, instructions=tuple(idx)))
        finals[cur["index"]] = st
        after.append(st.scope(cur["index"]))

    for ins in instructions[first_from:]:
        kw = ins.keyword
        if kw not in KEYWORDS:
            raise _fail(df, ins, f"unknown instruction: {ins.written}")
        if kw == "FROM":
            close_stage()
            base_raw, name = _stage_name(df, ins)
            be = global_scope.expand(base_raw, esc)
            if be.error or be.text == "":
                if be.error:
                    raise _fail(df, ins, f"base name ({base_raw}): {be.error}")
                raise _fail(df, ins, f"base name ({base_raw}) should not be blank")
            platform_raw = ins.flag("platform")
            platform = global_scope.expand(platform_raw, esc).text if platform_raw else None
            index = len(stages)
            parent = names.get(be.text) if not be.unknown else None
            if parent is not None:
                st = finals[parent].clone()
            else:
                scratch = be.text.lower() == "scratch"
                st = _StageState({}, {}, {}, not scratch, "/" if scratch else None, DEFAULT_SHELL)
            cur = {"index": index, "name": name, "base": be.text, "base_raw": base_raw, "parent": parent,
                   "platform": platform, "line": ins.start_line, "base_unknown": be.unknown,
                   "instructions_list": [ins.index]}
            if parent is not None:
                edges.append(Edge("from", index, base_raw, parent, ins.start_line, ins.index))
            scopes.append(global_scope)
            stage_of.append(index)
            if name is not None:
                names[name] = index
            st.snapshot = None
            continue
        assert st is not None and cur is not None
        index = cur["index"]
        cur["instructions_list"].append(ins.index)
        stage_of.append(index)
        scopes.append(st.scope(index))
        if kw == "ENV":
            sc = st.scope(index)
            v = ins.value
            new = []
            for k in range(0, len(v) - 1, 2):
                key = sc.expand(v[k], esc).text
                val = sc.expand(v[k + 1], esc)
                new.append(Binding(key, val.text, "env", ins.start_line, index, val.unknown))
            for b in new:
                st.vars[b.name] = b
                st.env[b.name] = b
                all_bindings.append(b)
            st.snapshot = None
        elif kw == "ARG":
            for word in ins.value:
                name_, eq, raw = word.partition("=")
                if not name_:
                    raise _fail(df, ins, "ARG names can not be blank")
                sc = st.scope(index)
                if name_ in build_args:
                    b = Binding(name_, build_args[name_], "arg", ins.start_line, index, build_arg=True)
                elif eq:
                    value, unknown, _err = _from_value(sc, name_, raw, esc)
                    b = Binding(name_, value, "arg", ins.start_line, index, unknown)
                else:
                    g = global_scope.vars.get(name_)
                    if g is not None:
                        b = Binding(name_, g.value, "arg", ins.start_line, index, g.unknown, g.build_arg)
                    else:
                        b = Binding(name_, None, "arg", ins.start_line, index)
                st.args[name_] = b
                if b.value is not None:
                    st.vars[name_] = b
                all_bindings.append(b)
                st.snapshot = None
        elif kw == "WORKDIR":
            e = st.scope(index).expand(ins.args, esc)
            path = e.text if e.complete else None
            if path is not None and not path.startswith("/"):
                path = posixpath.join(st.workdir, path) if st.workdir is not None else None
            st.workdir = posixpath.normpath(path) if path else None
            st.snapshot = None
        elif kw == "SHELL" and ins.json and ins.value:
            st.shell = ins.value
            st.snapshot = None
        elif kw == "COPY" or kw == "ADD":
            src = ins.flag("from") if kw == "COPY" else None
            if src:
                edges.append(Edge("copy", index, src, None, ins.start_line, ins.index))
        elif kw == "RUN":
            for m in mounts(ins):
                src = m.get("from")
                if src:
                    edges.append(Edge("mount", index, src, None, ins.start_line, ins.index))
    close_stage()

    # BuildKit resolves --from once every stage is known (a later one is a build error)
    all_names: dict[str, int] = {}
    for s in stages:
        if s.name is not None:
            all_names[s.name] = s.index
    edges = [e if e.kind == "from" else Edge(e.kind, e.stage, e.source,
                                             _resolve_stage(e.source, all_names, len(stages)), e.line, e.instruction)
             for e in edges]

    return BuildGraph(df, MappingProxyType(dict(gargs)), tuple(stages), tuple(edges), tuple(scopes),
                      tuple(stage_of), tuple(after), tuple(all_bindings), global_scope,
                      MappingProxyType(build_args))


def _resolve_stage(ref: str, names: Mapping[str, int], count: int) -> int | None:
    if ref.isdecimal() and ref.isascii():
        return int(ref) if len(ref) <= 9 and int(ref) < count else None
    return names.get(ref.lower())
