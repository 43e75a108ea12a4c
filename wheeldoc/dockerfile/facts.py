"""What the Dockerfile rules (WD4xx) read, computed once per file.

`DockerFacts(dockerfile, graph, target, context)` gives:
- `steps`: every command of every RUN (ONBUILD triggers excluded: they run in other
  images), with the installer invocation (`shell.parse_install`), why it compiles code, and
  its argv with shell variables expanded from what the RUN sees;
- `var(step, NAME)`: the value a command sees for a variable and where it came from: an
  inline `NAME=v cmd` or an earlier `export`, else the stage's ENV/ARG (inherited through
  `FROM <stage>`, never through `COPY --from`);
- `file_text(step, path)`: the text of a file in the image at that step, when the
  Dockerfile shows where it came from: a `COPY <<EOF` heredoc, `echo`/`printf`/`cat >`
  redirections of earlier commands, a `COPY`/`ADD`/bind mount from the build context (read
  from disk, at most 1 MiB, never outside the context), or `COPY --from` another stage;
- `requirements(step, path)`: a requirements/overrides/constraints file read through
  `file_text`, its `-r`/`-c` includes followed;
- `base_cuda(stage)`: the CUDA version of the stage's base image (`nvidia/cuda:12.8.1-…`,
  `pytorch/pytorch:2.9.0-cuda12.8-…`, NGC `nvcr.io/nvidia/pytorch:YY.MM`);
- `torch_sources(step)`: what decides which torch build an install takes (pins with a
  local tag, indexes, `--torch-backend`, overrides, constraints).

The build context is the Dockerfile's folder unless given. Nothing is executed.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterator

from wheeldoc.data.tool_env import ToolEnv, tool_env
from wheeldoc.dockerfile.parser import Dockerfile, Instruction
from wheeldoc.dockerfile.lexer import UNKNOWN, LexError, process_word
from wheeldoc.dockerfile.stages import BuildGraph, Stage, mounts
from wheeldoc.dockerfile.shell import Command, Install, commands_in_run, parse_install

MAX_CONTEXT_FILE = 1 << 20
BASE_WORKDIR = "/<base-workdir>"  # the base image's WORKDIR, when the Dockerfile sets none
MAX_INCLUDE_DEPTH = 4
_SDIST = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".zip")
_NAME = re.compile(r"^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[[^\]]*\])?\s*(.*)$")
_LOCAL_TAG = re.compile(r"(?:\+|%2[Bb])(cu\d{2,3}|cpu(?:\.[a-z0-9]+)*|rocm[\d.]+|xpu)\b")
_INDEX_VARIANT = re.compile(r"/whl/(?:nightly/|test/)?(cpu|cu\d{2,3}|rocm[\d.]+|xpu)(?:/|$)")
_INDEX_CU_COMPUTED = re.compile(r"/whl/(?:nightly/|test/)?cu[$`]")
_CUDA_IMAGE = re.compile(r"(?:^|/)nvidia/cuda:(\d{1,4})\.(\d{1,4})(?!\d)", re.ASCII)
_PYTORCH_IMAGE = re.compile(r"(?:^|/)pytorch/pytorch:[^-]*-cuda(\d{1,4})\.(\d{1,4})(?!\d)", re.ASCII)
_NGC_PYTORCH = re.compile(r"(?:^|/)nvidia/pytorch:(\d{2}\.\d{2})")
_PIP_INSTALLS = frozenset(("install", "wheel", "download"))
_UV_INSTALLS = frozenset(("pip install", "pip sync", "sync", "add", "tool install"))


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def variant_cuda(variant: str) -> tuple[int, int] | None:
    """"cu130" -> (13, 0); "cu128" -> (12, 8); None for cpu/rocm/xpu."""
    m = re.fullmatch(r"cu(\d{2,3})", variant)
    if not m:
        return None
    d = m[1]
    return int(d[:-1]), int(d[-1])


def index_variant(url: str) -> str | None:
    """The PyTorch variant an index URL serves (`cu130`, `cpu`, `rocm6.4`, `xpu`); `cu?` for a
    CUDA index whose version the build computes (`/whl/cu$(echo $CUDA_VERSION | …)`); or None."""
    m = _INDEX_VARIANT.search(url.rstrip("/") + "/")
    if m:
        return m[1]
    return "cu?" if _INDEX_CU_COMPUTED.search(url) else None


def cuda_str(cuda: tuple[int, int]) -> str:
    return f"{cuda[0]}.{cuda[1]}"


@dataclass(frozen=True)
class VarValue:
    """A variable as one command sees it. `value` is None when only `--build-arg` would set
    it (an ARG without default) or when it holds variables the Dockerfile cannot know."""

    name: str
    value: str | None
    origin: str  # "ENV", "ARG", "global ARG", "inline", "export"
    line: int | None
    stage: int | None = None


@dataclass(frozen=True)
class Step:
    """One command of a RUN: the installer it runs (if any), why it compiles code (if it
    does), its argv with shell variables expanded."""

    index: int
    ins: Instruction
    stage: Stage
    command: Command
    install: Install | None
    build: str | None
    argv: tuple[str, ...]

    @property
    def line(self) -> int:
        return self.command.line

    @property
    def tool(self) -> str | None:
        return self.install.tool if self.install is not None else None

    @property
    def network(self) -> bool:
        i = self.install
        return i is not None and not i.has("--offline") and not i.has("--no-index")

    @property
    def is_install(self) -> bool:
        i = self.install
        if i is None:
            return False
        return i.action in (_UV_INSTALLS if i.tool == "uv" else _PIP_INSTALLS)

    @property
    def installs_packages(self) -> bool:
        """An install that resolves and installs packages (not `pip download`)."""
        i = self.install
        return self.is_install and i is not None and i.action in ("install", "wheel", "pip install", "pip sync")

    def text(self) -> str:
        t = " ".join(self.command.text.split())
        return t if len(t) <= 100 else t[:97] + "..."


@dataclass(frozen=True)
class Requirement:
    name: str  # normalized
    spec: str  # the rest of the line after the name and extras
    line: str  # as written

    @property
    def local(self) -> str | None:
        m = _LOCAL_TAG.search(self.spec)
        return m[1] if m else None


@dataclass(frozen=True)
class ReqFile:
    path: str
    origin: str
    requirements: tuple[Requirement, ...]
    index_urls: tuple[str, ...]
    includes: tuple[str, ...]  # paths of -r / -c files that could not be read


@dataclass(frozen=True)
class TorchSource:
    """One thing that decides which torch build an install takes."""

    kind: str  # "pin", "index", "backend", "override", "constraint"
    variant: str | None  # "cu130", "cpu", "auto", "rocm6.4", None when unknown
    why: str  # human words: "torch==2.11.0+cu130 in /tmp/overrides.txt (COPY heredoc, line 68)"

    @property
    def cuda(self) -> tuple[int, int] | None:
        return variant_cuda(self.variant) if self.variant else None

    @property
    def is_cuda(self) -> bool:
        """A CUDA build, of a known version (`cu130`) or one the build computes (`cu?`)."""
        return self.cuda is not None or self.variant == "cu?"


@dataclass(frozen=True)
class _File:
    path: str  # in the image
    text: str | None = None  # known content
    context: str | None = None  # a path in the build context (file or directory)
    from_stage: int | None = None  # COPY --from: `source` in that stage
    source: str | None = None
    is_dir: bool = False  # `path` is a directory that `context`/`source` fill
    origin: str = ""
    order: tuple[int, int] = (0, 0)  # (instruction index, command index) that wrote it
    wheelhouse: int | None = None  # the `pip wheel -w`/`pip download -d` step that fills `path` with wheels


class DockerFacts:
    def __init__(self, dockerfile: Dockerfile, graph: BuildGraph, target=None, context: str | None = None,
                 text: str | None = None, env: ToolEnv | None = None, bases: dict | None = None) -> None:
        self.df = dockerfile
        self.bases = bases or {}  # image ref -> BaseImage from the Docker daemon (`--pull-base`)
        self._text = text
        self.graph = graph
        self.target = target
        self.path = dockerfile.path
        self.context = Path(context) if context is not None else Path(os.path.dirname(self.path) or ".")
        self.env = env or tool_env()
        self._req_cache: dict[tuple[int, str], ReqFile | None] = {}

    @cached_property
    def lines(self) -> list[str]:
        """The file's physical lines (for edits), BOM removed."""
        text = self._text
        if text is None:
            from wheeldoc.core.files import read_text

            text = read_text(self.path)
        parts = text.lstrip("\ufeff").split("\n")  # lines as BuildKit counts them (not splitlines)
        if parts and parts[-1] == "":
            parts.pop()
        return [p[:-1] if p.endswith("\r") else p for p in parts]

    # -- steps -------------------------------------------------------------------------
    @cached_property
    def steps(self) -> tuple[Step, ...]:
        out: list[Step] = []
        for ins in self.df.instructions:
            if ins.keyword != "RUN":
                continue
            stage = self.graph.stage_for(ins)
            if stage is None:
                continue
            for cmd in commands_in_run(ins, self._lookup(ins, None)):
                argv = self._expand_argv(ins, cmd)
                inst = parse_install(_with_argv(cmd, argv)) if argv else None
                out.append(Step(len(out), ins, stage, cmd, inst, _build_reason(argv, inst), argv))
        return tuple(out)

    def steps_in(self, stage: Stage | int) -> tuple[Step, ...]:
        idx = stage if isinstance(stage, int) else stage.index
        return tuple(s for s in self.steps if s.stage.index == idx)

    def chain(self, stage: Stage) -> tuple[Stage, ...]:
        """The stage and its FROM ancestors, root first."""
        return (*reversed(self.graph.ancestors(stage)), stage)

    # -- variables ---------------------------------------------------------------------
    def var(self, step: Step, name: str) -> VarValue | None:
        cmd = step.command
        for k, v in reversed(cmd.assignments):
            if k == name:
                return VarValue(name, self._expand_text(step.ins, cmd, v, skip=name), "inline", cmd.line)
        for k, v in reversed(cmd.exported):
            if k == name:
                return VarValue(name, self._expand_text(step.ins, cmd, v, skip=name), "export", None)
        return self.scope_var(step.ins, name)

    def scope_var(self, ins: Instruction, name: str) -> VarValue | None:
        sc = self.graph.scope(ins)
        b = sc.vars.get(name)
        if b is None:
            b = sc.args.get(name)
            if b is None:
                return None
        origin = {"env": "ENV", "arg": "ARG", "global": "global ARG", "platform": "platform ARG"}[b.kind]
        return VarValue(name, b.value if b.known else None, origin, b.line, b.stage)

    def _lookup(self, ins: Instruction, cmd: Command | None, skip: str | None = None):
        sc = self.graph.scope(ins)
        local = cmd.env() if cmd is not None else {}
        shell = dict(cmd.shell_vars) if cmd is not None else {}

        def lookup(name: str):
            if name in local and name != skip:
                return local[name] if "$" not in local[name] else UNKNOWN
            if name in shell and name != skip:  # a shell variable set earlier in the RUN
                v = shell[name]
                return v if v is not None and "$" not in v else UNKNOWN
            if "*" in shell:
                return UNKNOWN  # the RUN set more shell variables than are followed: it may have set this one
            b = sc.vars.get(name)
            if b is not None:
                return b.value if b.known else UNKNOWN
            if name in sc.args or sc.image_env_unknown:
                return UNKNOWN
            return None

        return lookup

    def _expand_text(self, ins: Instruction, cmd: Command | None, word: str, skip: str | None = None) -> str | None:
        """Shell expansion of an already unquoted word; None when it holds unknown variables."""
        if "$" not in word:
            return word
        try:
            r = process_word(word, self._lookup(ins, cmd, skip), skip_quotes=True, raw_escapes=True)
        except LexError:
            return None
        return None if r.unknown else r.text

    def _expand_argv(self, ins: Instruction, cmd: Command) -> tuple[str, ...]:
        out = []
        for w in cmd.argv:
            if "$" in w:
                try:
                    w = process_word(w, self._lookup(ins, cmd), skip_quotes=True, raw_escapes=True).text
                except LexError:
                    pass
            out.append(w)
        return tuple(out)

    def expand(self, step: Step, word: str) -> str | None:
        return self._expand_text(step.ins, step.command, word)

    # -- platform and base images ------------------------------------------------------
    def platform(self, stage: Stage) -> str | None:
        """"aarch64" / "x86_64" from the root stage's `--platform`, else from the target."""
        root = self.graph.root(stage)
        for p in (root.platform, stage.platform):
            if p and "$" not in p:
                arch = p.split("/")[1] if "/" in p else p
                return {"arm64": "aarch64", "aarch64": "aarch64", "amd64": "x86_64", "x86_64": "x86_64"}.get(arch)
        plat = getattr(self.target, "platform", None)
        if plat and plat.startswith("linux-"):
            return plat.split("-", 1)[1]
        return None

    def base_image(self, ref: str):
        """What the base image `ref` brings: the daemon's config (`--pull-base`) over the table's
        row (`wheeldoc.data.base_images`); None when neither knows it."""
        img = self.bases.get(ref)
        if img is not None:
            return img
        from wheeldoc.data.base_images import base_image

        return base_image(ref)

    def base_cuda(self, stage: Stage) -> tuple[tuple[int, int], str] | None:
        """(CUDA version, image) of the stage's base image, when its config (`--pull-base`) or tag says it."""
        root = self.graph.root(stage)
        if root.base_unknown:
            return None
        image = root.base
        daemon = self.bases.get(image)
        if daemon is not None and daemon.sources.get("cuda") == "daemon" and daemon.cuda is not None:
            return daemon.cuda, image
        if m := (_CUDA_IMAGE.search(image) or _PYTORCH_IMAGE.search(image)):
            return (int(m[1]), int(m[2])), image
        if m := _NGC_PYTORCH.search(image):
            cuda = self.env.ngc_pytorch.get(m[1])
            return (cuda, image) if cuda else None
        return None

    # -- files -------------------------------------------------------------------------
    def abs_path(self, ins: Instruction, path: str) -> str | None:
        """`path` made absolute against the WORKDIR in effect; with none set in the Dockerfile, against
        a stand-in for the base image's working directory (`/<base-workdir>`), so that `COPY f .` and a
        later `pip install -r f` in the same stage chain meet at one path."""
        if path.startswith("/"):
            return posixpath.normpath(path)
        wd = self.graph.scope(ins).workdir or BASE_WORKDIR
        return posixpath.normpath(posixpath.join(wd, path))

    @cached_property
    def _writes(self) -> dict[int, list[_File]]:
        """Per stage, the files its own instructions put in place, in order."""
        out: dict[int, list[_File]] = {s.index: [] for s in self.graph.stages}
        for ins in self.df.instructions:
            stage = self.graph.stage_for(ins)
            if stage is None or ins.keyword not in ("COPY", "ADD"):
                continue
            out[stage.index].extend(self._copy_files(ins))
        for step in self.steps:
            out[step.stage.index].extend(self._command_files(step))
            out[step.stage.index].extend(self._wheelhouse_files(step))
        for files in out.values():
            files.sort(key=lambda f: f.order)
        return out

    @cached_property
    def _workdirs(self) -> dict[int, set[str]]:
        """Per stage, every WORKDIR it sets: a directory (a `COPY f /workspace` that precedes
        `WORKDIR /workspace` copies into it, or the build would fail at the WORKDIR)."""
        out: dict[int, set[str]] = {}
        for ins in self.df.instructions:
            stage = self.graph.stage_for(ins)
            if stage is None or ins.keyword != "WORKDIR":
                continue
            words = [e.text for e in (self.graph.expanded_args(ins) or ())]
            path = self.abs_path(ins, words[0]) if len(words) == 1 else None
            if path is not None:
                out.setdefault(stage.index, set()).add(path)
        return out

    def _copy_files(self, ins: Instruction) -> Iterator[_File]:
        exp = self.graph.expanded_args(ins) or ()
        words = [e.text for e in exp]
        if len(words) < 2 and not ins.heredocs:
            return
        dest_raw = words[-1] if words else ""
        dest = self.abs_path(ins, dest_raw)
        if dest is None:
            return
        order = (ins.index, -1)
        names = {h.name for h in ins.heredocs}
        sources = [w for w in words[:-1] if w.lstrip("<-") not in names and not w.startswith("<<")]
        into_dir = (dest_raw.endswith("/") or len(words) > 2 or dest_raw in (".", "./")
                    or dest in self._workdirs.get(self.graph.stage_for(ins).index, ()))  # type: ignore[union-attr]
        for h in ins.heredocs:
            path = posixpath.join(dest, h.name) if into_dir else dest
            text = h.body
            if h.expand:
                e = self.graph.expand(text, ins)
                text = e.text if e.complete else None
            yield _File(path, text=text, origin=f"COPY <<{h.name} heredoc, line {ins.start_line}", order=order)
        src_stage = ins.flag("from")
        for src in sources:
            if "://" in src or any(c in src for c in "*?["):
                continue
            if src_stage is not None:
                st = self.graph.stage(stage_ref(src_stage))
                if st is None:
                    continue
                target = posixpath.join(dest, posixpath.basename(src.rstrip("/"))) if into_dir else dest
                yield _File(target, from_stage=st.index, source=src, origin=f"COPY --from={src_stage}, line "
                            f"{ins.start_line}", order=order, is_dir=True)
                continue
            rel = posixpath.normpath(src.lstrip("/"))
            local = self.context / rel
            if local.is_dir():
                yield _File(dest, context=rel, is_dir=True, origin=f"{ins.keyword} {src} (build context), line "
                            f"{ins.start_line}", order=order)
            else:
                target = posixpath.join(dest, posixpath.basename(rel)) if into_dir else dest
                yield _File(target, context=rel, origin=f"{ins.keyword} {src} (build context), line "
                            f"{ins.start_line}", order=order)

    def _command_files(self, step: Step) -> Iterator[_File]:
        cmd = step.command
        if not cmd.redirects:
            return
        name = cmd.name
        if name == "echo":
            args = list(step.argv[1:])
            newline = True
            while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
                newline = newline and "n" not in args[0]
                args.pop(0)
            text = " ".join(args) + ("\n" if newline else "")
            if "-e" in step.argv[1:3]:
                text = text.replace("\\n", "\n")
        elif name == "printf" and len(step.argv) >= 2:
            fmt = step.argv[1].replace("\\n", "\n")
            args = step.argv[2:]
            if "%s" in fmt and args:
                text = "".join(fmt.replace("%s", a, 1) for a in args)
            else:
                text = fmt
        elif name in ("cat", "tee") and len(step.argv) == 1 and cmd.stdin is not None:
            text = cmd.stdin
        else:
            text = None
        for op, target in cmd.redirects:
            path = self.abs_path(step.ins, self._expand_text(step.ins, cmd, target) or target)
            if path is None:
                continue
            yield _File(path, text=text, source=op, origin=f"written by `{step.text()}`, line {step.line}",
                        order=(step.ins.index, step.index))

    def _wheelhouse_files(self, step: Step) -> Iterator[_File]:
        """The folder `pip wheel -w DIR` (or `pip download -d DIR`) fills with the wheels it resolves."""
        inst = step.install
        if inst is None or inst.tool != "pip" or inst.action not in ("wheel", "download"):
            return
        where = inst.option("--wheel-dir" if inst.action == "wheel" else "--dest")
        path = self.abs_path(step.ins, where or ".")  # both default to the working directory
        if path is not None and "$" not in path:
            yield _File(path, is_dir=True, origin=f"`{step.text()}`, line {step.line}",
                        order=(step.ins.index, step.index), wheelhouse=step.index)

    def wheelhouse(self, step: Step, spec: str) -> Step | None:
        """The `pip wheel`/`pip download` step whose wheels an install names with a glob into their
        folder (`pip install /wheels/*`, `/wheels/*.whl`), through `COPY --from` of that folder;
        None when the folder holds anything else, or is not known."""
        head, _, tail = spec.rstrip().rpartition("/")
        if tail not in ("*", "*.whl") or not head or any(c in head for c in "*?[$"):
            return None
        path = self.abs_path(step.ins, head)
        return None if path is None else self._wheels_in(step.stage, path, (step.ins.index, step.index), 0)

    def _wheels_in(self, stage: Stage, path: str, before: tuple[int, int] | None, depth: int) -> Step | None:
        last: _File | None = None
        for st in self.chain(stage):
            limit = before if st.index == stage.index else None
            for f in self._writes[st.index]:
                if limit is not None and f.order >= limit:
                    break
                covers = f.path == path or (f.is_dir and path.startswith(f.path.rstrip("/") + "/"))
                if (f.wheelhouse is not None and f.path == path) or (f.from_stage is not None and covers):
                    last = f  # the latest write of the whole folder decides what it holds
                elif covers or f.path.startswith(path.rstrip("/") + "/"):
                    last = None  # anything else written there: what the folder holds is not known
        if last is None:
            return None
        if last.wheelhouse is not None:
            return self.steps[last.wheelhouse]
        if last.from_stage is not None and depth < 3:
            src = posixpath.normpath("/" + (last.source or "").lstrip("/"))
            inner = posixpath.join(src, posixpath.relpath(path, last.path)) if path != last.path else src
            return self._wheels_in(self.graph.stages[last.from_stage], posixpath.normpath(inner), None, depth + 1)
        return None

    def _lookup_file(self, stage: Stage, path: str, before: tuple[int, int] | None, depth: int = 0
                     ) -> tuple[str | None, str] | None:
        """(text, origin) of `path` in `stage` before `before` (or at its end)."""
        found: list[_File] = []
        for st in self.chain(stage):
            limit = before if st.index == stage.index else None
            for f in self._writes[st.index]:
                if limit is not None and f.order >= limit:
                    break
                if f.wheelhouse is not None:
                    continue
                if f.path == path or (f.is_dir and path.startswith(f.path.rstrip("/") + "/")):
                    found.append(f)
        text: str | None = None
        origin = ""
        for f in found:  # oldest first: a later write replaces, `>>` appends
            if f.text is not None or f.source in (">", ">>"):
                if f.source == ">>" and text is not None and f.text is not None:
                    text += f.text
                else:
                    text = f.text
                origin = f.origin
                continue
            if f.context is not None:
                rel = f.context if not f.is_dir else posixpath.join(f.context, posixpath.relpath(path, f.path))
                text, origin = self._context_text(rel), f.origin
            elif f.from_stage is not None and depth < 3:
                src = f.source or ""
                inner = posixpath.join(src, posixpath.relpath(path, f.path)) if path != f.path else src
                got = self._lookup_file(self.graph.stages[f.from_stage], posixpath.normpath(inner), None, depth + 1)
                text, origin = (got[0], f"{got[1]} via {f.origin}") if got else (None, f.origin)
        if not found:
            return None
        return text, origin

    def context_file(self, rel: str) -> Path | None:
        """The regular file `rel` names in the build context, or None: never outside the context
        (`..`, absolute paths, symlinks that resolve outside it), never a FIFO, device or folder."""
        import stat

        rel = posixpath.normpath(rel.lstrip("/") if rel.startswith("/") else rel)
        if rel.startswith("..") or posixpath.isabs(rel) or "\0" in rel:
            return None
        try:
            root = os.path.realpath(self.context)
            real = os.path.realpath(self.context / rel)
            if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
                return None  # a symlink out of the build context: docker build would not follow it either
            st = os.stat(real)
        except (OSError, ValueError):
            return None
        return Path(real) if stat.S_ISREG(st.st_mode) else None

    def context_dir(self, rel: str) -> Path | None:
        """The folder `rel` names inside the build context (symlinks resolved, never outside it)."""
        rel = posixpath.normpath(rel or ".")
        if rel.startswith("..") or posixpath.isabs(rel):
            return None
        try:
            root = os.path.realpath(self.context)
            real = os.path.realpath(self.context / rel)
        except (OSError, ValueError):
            return None
        if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
            return None
        return Path(real) if os.path.isdir(real) else None

    def _context_text(self, rel: str) -> str | None:
        p = self.context_file(rel)
        if p is None:
            return None
        try:
            from wheeldoc.core.files import open_regular

            with open_regular(p) as fh:  # O_NONBLOCK and a regular-file check on the open descriptor
                data = fh.read(MAX_CONTEXT_FILE + 1)
            if len(data) > MAX_CONTEXT_FILE:
                return None
            return data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def file_text(self, step: Step, path: str) -> tuple[str | None, str] | None:
        """(text or None, where it came from) of a file at `step`; None when nothing in the
        Dockerfile puts a file there."""
        ab = self.abs_path(step.ins, path)
        if ab is None:
            return None
        for m in mounts(step.ins):
            if m.get("type") != "bind":
                continue
            target = self.abs_path(step.ins, m.get("target") or m.get("dst") or m.get("destination") or "")
            if target and (ab == target or ab.startswith(target.rstrip("/") + "/")):
                src = m.get("source", m.get("src", "."))
                rel = src if ab == target else posixpath.join(src, posixpath.relpath(ab, target))
                if "from" in m:
                    st = self.graph.stage(m["from"])
                    got = self._lookup_file(st, "/" + rel.lstrip("/"), None) if st else None
                    return got or (None, f"bind mount from {m['from']}, line {step.ins.start_line}")
                return self._context_text(rel), f"bind mount of {rel} (build context), line {step.ins.start_line}"
        return self._lookup_file(step.stage, ab, (step.ins.index, step.index))

    def clone_at(self, step: Step, path: str) -> tuple[str, str, int, bool] | None:
        """(repository name, clone directory, line, at a ref) when `path` lies in a `git clone` that
        an earlier command of the stage chain made (its directory made absolute against the WORKDIR,
        or the `cd` of the same RUN, in effect then) and nothing the Dockerfile shows wrote the file
        since. The clone's contents are not known; its name says which project it is. "At a ref":
        cloned with `-b`/`--branch`, or a later `git checkout`/`switch`/`reset` in it (not the
        default branch, so not "at least the newest release")."""
        ab = self.abs_path(step.ins, path)
        if ab is None or self.file_text(step, path) is not None:
            return None
        chain = {s.index for s in self.chain(step.stage)}
        found = None
        cwd: dict[int, str] = {}
        for s in self.steps[: step.index + 1]:
            if s.stage.index not in chain:
                continue
            argv = s.argv
            here = cwd.get(s.ins.index) or self.abs_path(s.ins, ".") or "/"
            if len(argv) >= 2 and argv[0] == "cd" and "$" not in argv[1]:
                cwd[s.ins.index] = posixpath.normpath(posixpath.join(here, argv[1]))
                continue
            if found is not None and s.index != step.index and len(argv) >= 2 and argv[0] == "git":
                where = posixpath.normpath(posixpath.join(here, argv[2])) if argv[1] == "-C" and len(argv) > 3 else here
                verb = argv[3] if argv[1] == "-C" and len(argv) > 3 else argv[1]
                inside = where == found[1] or where.startswith(found[1].rstrip("/") + "/")
                rest = argv[4:] if argv[1] == "-C" else argv[2:]
                if inside and verb in ("checkout", "switch", "reset") and not (
                        rest and set(rest) <= {"main", "master", "HEAD", "origin/main", "origin/master"}):
                    found = (*found[:3], True)  # another ref than the default branch
            if s.index == step.index or len(argv) < 3 or argv[0] != "git" or argv[1] != "clone":
                continue
            pos, k, ref = [], 2, False
            while k < len(argv):
                a = argv[k]
                if a in ("-b", "--branch", "--depth", "-o", "--origin", "-c", "--config", "--reference",
                         "--separate-git-dir", "-j", "--jobs", "--filter", "-u", "--upload-pack", "--template"):
                    ref = ref or a in ("-b", "--branch")
                    k += 2
                    continue
                ref = ref or a.startswith("--branch=")
                if not a.startswith("-"):
                    pos.append(a)
                k += 1
            if not pos or "$" in "".join(pos):
                continue
            name = posixpath.basename(pos[0].rstrip("/")).removesuffix(".git")
            target = posixpath.normpath(posixpath.join(here, pos[1] if len(pos) > 1 else name))
            if ab == target or ab.startswith(target.rstrip("/") + "/"):
                found = (name, target, s.line, ref)
        return found

    def requirements(self, step: Step, path: str, depth: int = 0) -> ReqFile | None:
        key = (step.index, path)
        if key in self._req_cache:
            return self._req_cache[key]
        got = self.file_text(step, path)
        out = None
        if got is not None and got[0] is not None:
            out = self._parse_requirements(step, path, got[0], got[1], depth)
        self._req_cache[key] = out
        return out

    def _parse_requirements(self, step: Step, path: str, text: str, origin: str, depth: int) -> ReqFile:
        reqs: list[Requirement] = []
        indexes: list[str] = []
        missing: list[str] = []
        base = posixpath.dirname(self.abs_path(step.ins, path) or path)
        for raw in re.sub(r"\\\r?\n", " ", text).splitlines():
            line = re.sub(r"(^|\s)#.*$", "", raw).strip()
            if not line:
                continue
            if line.startswith("-"):
                opt, _, val = line.replace("=", " ", 1).partition(" ")
                val = val.strip()
                if opt in ("-i", "--index-url", "--extra-index-url", "--index", "--default-index", "-f",
                           "--find-links"):
                    indexes.append(val)
                elif opt in ("-r", "--requirement", "-c", "--constraint") and depth < MAX_INCLUDE_DEPTH:
                    inner = posixpath.join(base, val)
                    sub = self.requirements(step, inner, depth + 1)
                    if sub is None:
                        missing.append(inner)
                    else:
                        reqs.extend(sub.requirements)
                        indexes.extend(sub.index_urls)
                        missing.extend(sub.includes)
                continue
            m = _NAME.match(line)
            if m:
                reqs.append(Requirement(normalize(m[1]), m[3], line))
        return ReqFile(path, origin, tuple(reqs), tuple(indexes), tuple(missing))

    # -- torch -------------------------------------------------------------------------
    def torch_sources(self, step: Step) -> tuple[TorchSource, ...]:
        """What decides the torch build of an install, strongest first."""
        inst = step.install
        if inst is None:
            return ()
        out: list[TorchSource] = []
        for spec in inst.packages:
            r = _requirement(spec)
            if r is not None and r.name in ("torch", "torchvision", "torchaudio") and r.local:
                out.append(TorchSource("pin", r.local, f"{spec} on the command line"))
        for kind, opt, env_names in (("override", "--override", ("UV_OVERRIDE",)),
                                     ("constraint", "--constraint", ("UV_CONSTRAINT", "PIP_CONSTRAINT"))):
            files = list(inst.values(opt))
            for n in env_names:
                v = self.var(step, n)
                if v is not None and (inst.tool == "uv") == n.startswith("UV_"):
                    if v.value is not None and not v.value.strip():
                        continue  # set to empty: no constraint (how NGC images' PIP_CONSTRAINT is cleared)
                    files += v.value.split() if v.value else [f"${n}"]
            for f in files:
                rf = self.requirements(step, f) if not f.startswith("$") else None
                if rf is None:
                    out.append(TorchSource(kind, None, f"{opt} {f} (contents not in the Dockerfile or context)"))
                    continue
                pins = [r for r in rf.requirements if r.name == "torch"]
                for r in pins:
                    out.append(TorchSource(kind if r.local else f"{kind}-unpinned", r.local,
                                           f"{r.line} in {f} ({rf.origin})"))
        for f in inst.requirements + (inst.packages if inst.action == "pip sync" else ()):
            rf = self.requirements(step, f)
            if rf is None:
                continue
            for r in rf.requirements:
                if r.name in ("torch", "torchvision", "torchaudio") and r.local:
                    out.append(TorchSource("pin", r.local, f"{r.line} in {f} ({rf.origin})"))
            for u in rf.index_urls:
                out.append(TorchSource("index", index_variant(u), f"{u} in {f}"))
        backend = inst.torch_backend
        if backend is not None:
            out.append(TorchSource("backend", backend.lower(), f"--torch-backend {backend}"))
        elif inst.tool == "uv":
            v = self.var(step, "UV_TORCH_BACKEND")
            if v is not None and v.value:
                out.append(TorchSource("backend", v.value.lower(), _var_words(v)))
        urls = [(u, f"{o} {u}") for o in ("--index-url", "--default-index", "--extra-index-url", "--index",
                                          "--find-links") for u in inst.values(o)]
        env_urls = ("UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_EXTRA_INDEX_URL", "UV_INDEX", "UV_FIND_LINKS") \
            if inst.tool == "uv" else ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS")
        for n in env_urls:
            v = self.var(step, n)
            if v is not None and v.value:
                urls += [(u, _var_words(v)) for u in v.value.split()]
        for u, why in urls:
            out.append(TorchSource("index", index_variant(u), why))
        return tuple(out)

    def torch_needs(self, step: Step) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(torch-dependent packages the install names, local wheels/paths of unknown content)."""
        inst = step.install
        if inst is None:
            return (), ()
        dependents = self.env.torch_dependents
        needs: list[str] = []
        unknown: list[str] = []
        for spec in inst.packages + inst.editables:
            if spec.endswith(".whl"):
                name = normalize(posixpath.basename(spec).split("-", 1)[0])
                if name in dependents:
                    needs.append(spec)
                elif not re.fullmatch(r"[A-Za-z0-9_.]+", posixpath.basename(spec).split("-", 1)[0]):
                    unknown.append(spec)
                continue
            r = _requirement(spec)
            if r is not None and "/" not in spec and r.name in dependents:
                needs.append(spec)
            elif _is_path(spec) or "://" in spec:
                name = _name_in_url(spec)
                if name in dependents:
                    needs.append(spec)
                else:
                    unknown.append(spec)
        for f in inst.requirements:
            rf = self.requirements(step, f)
            if rf is not None:
                needs += [f"{r.line} (in {f})" for r in rf.requirements if r.name in dependents]
        return tuple(needs), tuple(unknown)

    @cached_property
    def uses_torch(self) -> bool:
        """Something in the file installs torch or a package that needs it."""
        return any(self.torch_needs(s)[0] for s in self.steps if s.installs_packages)


# -- helpers -------------------------------------------------------------------------------


def _var_words(v: VarValue) -> str:
    where = f", line {v.line}" if v.line else ""
    return f"{v.origin} {v.name}={v.value}{where}"


def _with_argv(cmd: Command, argv: tuple[str, ...]) -> Command:
    if argv == cmd.argv:
        return cmd
    from dataclasses import replace

    return replace(cmd, argv=argv)


def requirement(spec: str) -> Requirement | None:
    """A requirement as written on an install line (`vllm==0.9.1`, `flash-attn>=2`); None for a path,
    an option or what does not parse."""
    return _requirement(spec)


def _requirement(spec: str) -> Requirement | None:
    if _is_path(spec) or spec.startswith("-"):
        return None
    m = _NAME.match(spec)
    if not m:
        return None
    rest = m[3]
    if rest.startswith("@"):  # name @ URL: the local tag is in the file name
        return Requirement(normalize(m[1]), rest, spec)
    return Requirement(normalize(m[1]), rest, spec)


_WHEEL_LISTING = re.compile(r"^(?:\$\(|`)\s*(?:ls|find|echo)\s[^)`]*\.whl[^)`]*(?:\)|`)$")


def _lists_wheels(spec: str) -> bool:
    """`$(ls /wheels/*.whl)` (or `find … -name '*.whl'`, a `| grep -v …` filter, backquotes): a
    command substitution that prints wheel files, which install without compiling anything."""
    return bool(_WHEEL_LISTING.match(spec.strip()))


def _is_path(spec: str) -> bool:
    return spec.startswith((".", "/", "~")) or (("/" in spec or spec.endswith(_SDIST)) and "://" not in spec
                                               and " @ " not in spec and "@" not in spec)


def _name_in_url(spec: str) -> str | None:
    base = posixpath.basename(spec.split("#", 1)[0].split("@", 1)[0].rstrip("/"))
    base = re.sub(r"\.git$", "", base)
    for suffix in _SDIST:
        if base.endswith(suffix):
            base = base[: -len(suffix)].rsplit("-", 1)[0]
    return normalize(base) if base else None


def _build_reason(argv: tuple[str, ...], inst: Install | None) -> str | None:
    """Why a command compiles code, or None."""
    if inst is not None:
        if inst.tool == "pip" and inst.action == "download":
            return None
        if inst.tool == "uv" and inst.action not in ("pip install", "tool install", "add"):
            return None
        for spec in inst.editables:
            return f"editable install of {spec}"
        for spec in inst.packages:
            if spec.endswith(".whl") or _lists_wheels(spec):
                continue
            if spec.endswith(_SDIST):
                return f"source distribution {spec}"
            if spec.startswith("git+") or "@ git+" in spec or "@git+" in spec:
                return f"VCS URL {spec}"
            if _is_path(spec):
                return f"local path {spec}"
        if inst.has("--no-binary"):
            return f"--no-binary {inst.option('--no-binary')}"
        if inst.no_build_isolation and not (inst.packages and not inst.requirements and all(
                spec.endswith(".whl") or _lists_wheels(spec) for spec in inst.packages)):
            return "--no-build-isolation"  # (wheel files alone are installed, not built)
        return None
    if not argv:
        return None
    name = argv[0].rsplit("/", 1)[-1]
    if name in ("cmake", "ninja", "nvcc") and not any(a in ("--version", "-V", "--help") for a in argv[1:]):
        return name
    if re.match(r"python[0-9.]*$", name):
        rest = argv[1:]
        if rest and rest[0].endswith("setup.py") and any(a.startswith(("build", "bdist", "install", "develop"))
                                                         for a in rest[1:]):
            return "python setup.py"
        if rest[:2] == ("-m", "build"):
            return "python -m build"
    if name == "uv" and argv[1:2] == ("build",):
        return "uv build"
    return None


def stage_ref(ref: str) -> str | int:
    """`COPY --from=` names a stage by name or by index: an index only as ASCII digits of a sane
    length (`²` and 5,000-digit numbers are names that match nothing, never an int() error)."""
    from wheeldoc.core.safeload import small_int

    n = small_int(ref, 9)
    return ref if n is None else n
