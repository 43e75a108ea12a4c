"""WD4xx: Dockerfiles. Variables that never reach the stage that needs them, torch builds that a
`docker build` silently gets wrong, base images and GPU architecture lists against the target.

Facts come from `wheeldoc.dockerfile.facts.DockerFacts`; edits from `dockerfix`.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

from wheeldoc.dockerfile.facts import DockerFacts, Step, TorchSource, stage_ref, cuda_str, normalize, variant_cuda
from wheeldoc.data.tool_env import ToolVar
from wheeldoc.core.engine import Context
from wheeldoc.core.redact import has_secret
from wheeldoc.core.model import Finding, Fix, Location, Severity
from wheeldoc.core.registry import Example, rule
from wheeldoc.dockerfile.fixes import env_assignment, from_line, insert_after_from, replace_in_lines
from wheeldoc.dockerfile.lexer import referenced_names
from wheeldoc.dockerfile.stages import PLATFORM_ARGS, Stage
from wheeldoc.dockerfile.shell import SHELLS, commands_in_run

D = "fixtures/dockerfiles"
R = "fixtures/dockerfiles/rules"
REF = "dockerfiles"
SEVERITY = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFO}
TORCH_FAMILY = ("torch", "torchvision", "torchaudio")
TORCH_INDEX = "https://download.pytorch.org/whl/{variant}"


def _where(stage: Stage) -> str:
    return f"stage {stage.name!r}" if stage.name else f"stage {stage.index}"


def _loc(facts: DockerFacts, line: int | None) -> Location:
    return Location(facts.path, line)


def _no_gpu_during_build(step: Step) -> bool:
    """No GPU is visible to a RUN unless it asks for a device (`RUN --device=nvidia.com/gpu=all`)."""
    return step.ins.flag("device") is None


def _variant_for(facts: DockerFacts, stage: Stage, ctx: Context) -> tuple[str, str] | None:
    """The CUDA variant of torch to name in a fix, and why: the base image's CUDA, else the driver's."""
    from wheeldoc.data.torch import torch_table

    known = sorted({v for s in torch_table().series.values() for v in s.cuda}, key=lambda v: variant_cuda(v))
    base = facts.base_cuda(stage)
    driver = getattr(ctx.target, "driver", None)
    for cuda, why in ((base[0] if base else None, f"the base image {base[1]} is CUDA" if base else ""),
                      (driver.cuda if driver else None, "the target driver supports CUDA")):
        if cuda is None:
            continue
        fits = [v for v in known if variant_cuda(v)[0] == cuda[0] and variant_cuda(v) <= cuda]
        if fits:
            return fits[-1], f"{why} {cuda_str(cuda)}"
    return None


# -- WD401 ---------------------------------------------------------------------------------------

# Values a tool uses when the variable is unset: setting them changes nothing. torch's
# cpp_extension looks for CUDA in /usr/local/cuda when CUDA_HOME and CUDA_PATH are unset
# (`_find_cuda_home`, after `which nvcc`).
_TOOL_DEFAULTS = {"CUDA_HOME": "/usr/local/cuda", "CUDA_PATH": "/usr/local/cuda"}


@dataclass(frozen=True)
class _Setter:
    name: str
    value: str | None
    kind: str  # "ENV", "ARG", "global ARG", "inline"
    line: int | None
    stage: Stage | None

    def words(self) -> str:
        where = "the global scope" if self.stage is None else _where(self.stage)
        value = self.value if self.value is not None else "(a value not known here)"
        return f"{where} sets {self.name}={value} ({self.kind}, line {self.line})"


# Variables whose need is a property of the base image's Python (externally managed or not):
# a stage that ran the tool without one, on the same base, shows the base does not need it.
_BASE_PROPERTY = frozenset({"PIP_BREAK_SYSTEM_PACKAGES", "UV_BREAK_SYSTEM_PACKAGES"})


def _ran_without(facts: DockerFacts, setter: _Setter, var: ToolVar, step: Step) -> bool:
    """The setter's stage ran the same tool before setting the variable, from the same base image
    as `step`'s stage (so that tool works there without it)."""
    if setter.stage is None:
        return False
    root, mine = facts.graph.root(setter.stage), facts.graph.root(step.stage)
    if root.base_unknown != mine.base_unknown or root.base != mine.base:
        return False
    chain = {st.index for st in facts.chain(setter.stage)}
    return any(t.stage.index in chain and t.line < (setter.line or 0) and _reads(facts, t, var)
               and not _covered(facts, t, var) for t in facts.steps)


# Build variables one project's build reads and others do not (their setup.py / CMake files)
_PROJECT_VARIABLES = {
    "FLASHINFER_CUDA_ARCH_LIST": frozenset({"flashinfer", "flashinfer-python"}),
    "FLASH_ATTENTION_FORCE_BUILD": frozenset({"flash-attn", "flash-attention"}),
    "VLLM_TARGET_DEVICE": frozenset({"vllm"}),
}
# CMake's spellings of the architecture list: moot where torch's (TORCH_CUDA_ARCH_LIST) is in effect
_CMAKE_ARCHS = frozenset({"CMAKE_CUDA_ARCHITECTURES", "CUDAARCHS"})


def _reads(facts: DockerFacts, step: Step, var: ToolVar) -> bool:
    if var.tool == "build":  # only a build that compiles native code reads MAX_JOBS, TORCH_CUDA_ARCH_LIST, …
        if step.build is None or _cuda_build_skipped(step) or not _compiles_native(facts, step):
            return False
        only = _PROJECT_VARIABLES.get(min(var.names))
        if only is not None and _build_project(facts, step) not in only:
            return False  # that project's own variable: asked only of a build known to be that project
        if set(var.names) & _CMAKE_ARCHS and facts.var(step, "TORCH_CUDA_ARCH_LIST") is not None:
            return False  # the build has its architecture list already
        return True
    inst = step.install
    if inst is None or inst.tool != var.tool or not step.is_install:
        return False
    if var.network and (not step.network or _resolves_nothing(inst)):
        return False
    if var.torch_only and not _involves_torch(facts, step):
        return False
    if var.tool == "uv":
        if var.when == "pip-install":
            return inst.action in ("pip install", "pip sync")
        if var.when == "sync":
            return inst.action in ("sync", "add")
    return True


def _resolves_nothing(inst) -> bool:
    """`pip install --no-deps .` / `uv pip install --no-deps ./dist/x.whl`: local paths and wheel
    files only, dependencies off: nothing is chosen from an index (a source tree's build backend at
    most, a small download from the default index), so index, timeout and retry settings do not
    change what it installs."""
    if not inst.has("--no-deps") or inst.requirements or not (inst.packages or inst.editables):
        return False
    return all(p.startswith((".", "/", "~")) or p.endswith(".whl") for p in (*inst.packages, *inst.editables))


def _cuda_build_skipped(step: Step) -> bool:
    """`MAMBA_SKIP_CUDA_BUILD=TRUE pip install …`: the project's switch that turns its CUDA build off."""
    return any(k.endswith("SKIP_CUDA_BUILD") and v.strip("\"'").lower() in ("1", "true", "yes", "on")
               for k, v in (*step.command.assignments, *step.command.exported))


def _involves_torch(facts: DockerFacts, step: Step) -> bool:
    inst = step.install
    needs, unknown = facts.torch_needs(step)
    return bool(needs or unknown or (inst is not None and (inst.requirements or inst.action == "pip sync")))


def _covered(facts: DockerFacts, step: Step, var: ToolVar) -> bool:
    if any(facts.var(step, n) is not None for n in var.names):
        return True
    inst = step.install
    return inst is not None and any(inst.has(f) for f in var.flags)


def _setters(facts: DockerFacts, var: ToolVar) -> list[_Setter]:
    out: list[_Setter] = []
    for n in var.names:
        for b in facts.graph.setters(n):
            if b.value is None:
                continue
            kind = {"env": "ENV", "arg": "ARG", "global": "global ARG"}.get(b.kind, b.kind)
            stage = facts.graph.stages[b.stage] if b.stage is not None else None
            out.append(_Setter(n, b.value if b.known else None, kind, b.line, stage))
    return out


def _env_fix(facts: DockerFacts, stage: Stage, var: ToolVar, setters: list[_Setter]) -> Fix:
    where = _where(stage)
    glob = [s for s in setters if s.kind == "global ARG"]
    if glob:
        g = glob[0]
        return Fix(f"Redeclare `ARG {g.name}` in {where} to use the global value",
                   "safe", edits=(insert_after_from(facts, stage, f"ARG {g.name}"),))
    known = [s for s in setters if s.value is not None]
    if not known:
        s = setters[0]
        return Fix(f"Set {s.name} in {where} too, as {_where(s.stage) if s.stage else 'elsewhere'} does "
                   f"(line {s.line})", "display-only")
    values = [s.value for s in known]
    best = max(known, key=lambda s: (values.count(s.value), s.kind == "ENV", -(s.line or 0)))
    if any(has_secret(v) for v in values):
        # Never copy a credential into another stage (it would ship in the image's config):
        # hand it to the RUN that needs it as a build secret, or as an ARG given at build time.
        sid = best.name.lower()
        return Fix(f"Pass {best.name} to {where} as a build secret, never as an ENV copied from "
                   f"{_where(best.stage) if best.stage else 'another stage'}: "
                   f"`RUN --mount=type=secret,id={sid},env={best.name} …` and "
                   f"`docker build --secret id={sid},env={best.name}` (or `ARG {best.name}` in {where}, "
                   f"given with --build-arg; ARG values stay in the image history)", "display-only")
    text = f"ENV {env_assignment(best.name, best.value or '', facts.df.escape)}"
    pathlike = "/" in (best.value or "") and "://" not in (best.value or "")
    return Fix(f"Add `{text}` after the FROM of {where}", "unsafe" if pathlike else "safe",
               edits=(insert_after_from(facts, stage, text),))


@rule("WD401", "stage-env-gap", title="a variable set in another stage never reaches this one",
      severity=Severity.ERROR, fix="safe",
      examples=(Example(("check", f"{R}/wd401-story.Dockerfile"), True),
                Example(("check", f"{D}/vllm-gb10-multistage.Dockerfile"), True),
                Example(("check", f"{D}/monorepo-ten-stages.Dockerfile"), True),
                Example(("check", f"{R}/wd401-global-arg.Dockerfile"), True),
                Example(("check", f"{D}/vllm-upstream-style.Dockerfile"), True),
                Example(("check", f"{R}/wd401-story-fixed.Dockerfile"), False),
                Example(("check", f"{D}/uv-project-sync.Dockerfile"), False),
                Example(("check", f"{REF}/vllm-gb10.Dockerfile"), False)))
def stage_env_gap(facts: DockerFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Finds a stage that runs a tool which reads an environment variable that another stage
    (or the global scope) sets, while this stage never gets it: uv (`UV_HTTP_TIMEOUT`,
    `UV_INDEX_URL`, `UV_EXTRA_INDEX_URL`, `UV_INDEX_STRATEGY`, `UV_TORCH_BACKEND`,
    `UV_LINK_MODE`, …), pip (`PIP_INDEX_URL`, `PIP_EXTRA_INDEX_URL`, `PIP_DEFAULT_TIMEOUT`, …)
    and, for commands that compile native code (a known CUDA extension, a CUDA build switch,
    nvcc in the base image, or a `--no-build-isolation` build in a file that installs torch),
    the build variables (`TORCH_CUDA_ARCH_LIST`, `CUDA_HOME`, `MAX_JOBS`, …; one project's own,
    such as `FLASHINFER_CUDA_ARCH_LIST`, only of that project's build; CMake's spellings of the
    architecture list not where `TORCH_CUDA_ARCH_LIST` is in effect). Which tool reads
    which variable is data (`wheeldoc/data/tool_env.json`, each row with its source); a
    constraints or overrides variable (`PIP_CONSTRAINT`, `UV_CONSTRAINT`, `UV_OVERRIDE`) counts
    only for installs that involve torch. A variable counts as present when the stage sets it
    (ENV or ARG, inherited through `FROM <stage>`), the command sets it inline or through
    `export`, or the command passes the flag that replaces it. An install of local paths or
    wheel files with `--no-deps` resolves nothing from an index: no index, timeout or retry
    variable is asked of it. Only a setter written before the
    stage counts (the global scope, or an earlier stage): a later stage that sets a variable for
    its own builds says nothing about an earlier one. `PIP_BREAK_SYSTEM_PACKAGES` (and uv's) is
    not asked of a stage when a stage from the same base image ran the tool without it (the
    base's Python is then not externally managed). The severity is the variable's, from the
    same table: an error for a missing index, a warning for a missing timeout, information for
    tuning knobs; a build variable asked of a build that only the base image's nvcc says may
    compile native code (a local project whose content is not known) is information.

    ## Why is this bad?
    Every `FROM` starts from its base image's environment. ENV and ARG of other stages never
    reach it, and `COPY --from` copies files, not variables; a global `ARG` before the first
    `FROM` is visible to `FROM` lines only. The tool then silently runs with its defaults:
    in the field report the runner stage downloaded a 517 MB cuBLAS wheel with uv's default
    30 s timeout and failed, because only the base stage set `UV_HTTP_TIMEOUT=600`. A missing
    index variable is worse: the install succeeds from another index.

    ## Example
    ```dockerfile
    FROM nvidia/cuda:13.0.1-devel-ubuntu24.04 AS base
    ENV UV_HTTP_TIMEOUT=600
    RUN uv pip install --system torch
    FROM nvidia/cuda:13.0.1-runtime-ubuntu24.04 AS runner
    RUN uv pip install --system nvidia-cublas   # runs with the 30 s default
    ```

    ## Fix
    Set the variable in the stage that runs the tool: `ENV UV_HTTP_TIMEOUT=600` right after its
    `FROM` (a safe fix; `--fix` applies it), or `ARG NAME` there when the value is a global
    `ARG`. Values that are paths (`UV_PYTHON=/opt/venv/bin/python`) are offered as unsafe fixes:
    the path may not exist in that stage. A value that carries a credential
    (`UV_INDEX_URL=https://user:token@…`) is never copied into another stage, where it would ship
    in the image's config: that fix (display-only) is a build secret for the RUN that needs it
    (`RUN --mount=type=secret,id=uv_index_url,env=UV_INDEX_URL …`), or an `ARG` given at build time.
    """
    done: set[tuple[int, str]] = set()
    extra_lines: dict[tuple[int, str], list[int]] = {}
    variables = facts.env.variables.values()
    for step in facts.steps:
        for var in variables:
            if not _reads(facts, step, var) or _covered(facts, step, var):
                continue
            key = (step.stage.index, min(var.names))
            if key in done:
                extra_lines.setdefault(key, []).append(step.line)
                continue
            chain = {st.index for st in facts.chain(step.stage)}
            # a setter later in this stage (or its base stages) is not another stage's: the command
            # runs before it on purpose; nor is a stage written after this one (a variable is
            # "carried over" only from what came before: a later stage sets it for its own builds)
            setters = [st for st in _setters(facts, var)
                       if not (st.stage is not None and st.stage.index in chain and (st.line or 0) > step.line)
                       and not (st.stage is not None and st.stage.index > step.stage.index)]
            if min(var.names) in _BASE_PROPERTY:
                setters = [st for st in setters if not _ran_without(facts, st, var, step)]
            if not setters:
                continue
            default = _TOOL_DEFAULTS.get(min(var.names))
            if default is not None and all((s.value or "").rstrip("/") == default for s in setters):
                continue  # every stage that sets it sets the value the tool uses anyway
            done.add(key)
            where = _where(step.stage)
            first = setters[0]
            name = first.name
            if first.kind == "global ARG":
                origin = f"the global ARG {first.name} (line {first.line}) is visible to FROM lines only"
            else:
                origin = first.words()
            severity, maybe = SEVERITY[var.severity], ""
            if var.tool == "build" and not _compiles_native(facts, step, nvcc=False):
                # only the base image's nvcc says this build may compile native code (as WD409 reads it)
                severity = Severity.INFO
                maybe = (" Whether this build compiles native code is not known here: only the base image's nvcc "
                         "says it may.")
            yield Finding(
                rule="WD401", title="a variable set in another stage never reaches this one",
                severity=severity, location=_loc(facts, step.line),
                message=f"`{step.text()}` (line {step.line}) in {where} reads {name}, which {where} does "
                        f"not set: {origin}. A FROM starts from its base image's environment; ENV and ARG of "
                        f"other stages never reach it.{maybe}",
                evidence=(f"{name}: {var.what}", *(s.words() for s in setters[1:4]),
                          f"source: {facts.env.sources[var.source].split(';')[0]}"),
                fix=_env_fix(facts, step.stage, var, setters),
                data={"variable": name, "stage": step.stage.label, "tool": var.tool,
                      "set_at": [s.line for s in setters], "needed_at": step.line},
            )


# -- WD402 ---------------------------------------------------------------------------------------

_SHELL_REF = re.compile(r"(?<![\\$])\$(?:\{([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_]*))")
_SHELL_SETS = re.compile(r"\b(?:for|read(?:\s+-[a-zA-Z]+)*|local|declare(?:\s+-[a-zA-Z]+)*|export|unset)"
                         r"\s+([A-Za-z_][A-Za-z0-9_]*)")
_IMAGE_ENV = {"nvidia/cuda": ("CUDA_VERSION",), "python": ("PYTHON_VERSION",)}


def _run_refs(ins) -> tuple[dict[str, int], set[str]]:
    """Names a RUN references (first line of each) and names its own script sets."""
    refs: dict[str, int] = {}
    texts: list[tuple[str, int]] = []
    t = ins.trigger
    if t.json:  # exec form: no shell expands anything, unless it runs `sh -c SCRIPT`
        argv = list(t.value)
        if argv and argv[0].rsplit("/", 1)[-1] in SHELLS and any(a.startswith("-") and "c" in a for a in argv[1:-1]):
            texts.append((argv[-1], t.start_line))
    else:
        off = t.args_offset
        for m in _SHELL_REF.finditer(t.args):
            refs.setdefault(m[1] or m[2], t.line_at(off + m.start()))
        texts += [(h.body, h.start_line) for h in t.heredocs]
    for text, first in texts:
        for m in _SHELL_REF.finditer(text):
            refs.setdefault(m[1] or m[2], first + text.count("\n", 0, m.start()))
    sets: set[str] = set()
    for c in commands_in_run(ins):
        sets.update(k for k, _ in c.assignments)
        sets.update(k for k, _ in c.exported)
    for text in [t.args, *(h.body for h in t.heredocs)]:
        sets.update(_SHELL_SETS.findall(text))
    return refs, sets


def _refs(facts: DockerFacts, ins) -> tuple[dict[str, int], set[str]]:
    if ins.keyword == "RUN":
        return _run_refs(ins)
    refs: dict[str, int] = {}
    words = list(ins.value)
    if ins.keyword == "ARG":
        words = [w.partition("=")[2] for w in words]
    if ins.keyword in ("COPY", "ADD"):
        words += [h.body for h in ins.heredocs if h.expand]
    for w in words:
        for name in referenced_names(w, escape=facts.df.escape):
            refs.setdefault(name, ins.start_line)
    return refs, set()


@rule("WD402", "global-arg-not-in-stage", title="a global ARG used in a stage that does not redeclare it",
      severity=Severity.WARNING, fix="safe",
      examples=(Example(("check", f"{R}/wd402-global-arg.Dockerfile"), True),
                Example(("check", f"{D}/global-args.Dockerfile"), True),
                Example(("check", f"{R}/wd402-redeclared.Dockerfile"), False),
                Example(("check", f"{D}/pytorch-source-build.Dockerfile"), False),
                Example(("check", f"{REF}/vllm-gb10.Dockerfile"), False)))
def global_arg_not_in_stage(facts: DockerFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Finds `$NAME` / `${NAME}` inside a stage (a RUN script, a heredoc, an ENV, COPY, WORKDIR,
    LABEL, ARG default, …) where `NAME` is an `ARG` declared only before the first `FROM`, or
    one of BuildKit's automatic platform ARGs (`TARGETARCH`, `TARGETPLATFORM`, `BUILDPLATFORM`,
    …), and the stage never redeclares it with `ARG NAME`.

    ## Why is this bad?
    An ARG before the first `FROM` is in the global scope: `FROM` lines see it, instructions
    inside a stage do not. There, `$NAME` expands to an empty string (or the base image's own
    variable of that name), with no warning: `TORCH_CUDA_ARCH_LIST=$TORCH_CUDA_ARCH_LIST` builds
    for no architecture, `curl …/uv-$TARGETARCH` downloads the wrong file.

    ## Example
    ```dockerfile
    ARG TORCH_CUDA_ARCH_LIST=12.1
    FROM nvidia/cuda:13.0.1-devel-ubuntu24.04
    RUN TORCH_CUDA_ARCH_LIST="$TORCH_CUDA_ARCH_LIST" pip install --no-build-isolation .
    ```

    ## Fix
    Add `ARG NAME` (no value) after the stage's `FROM`: it takes the global default and any
    `--build-arg`. A safe fix; `--fix` applies it.
    """
    graph = facts.graph
    global_names = set(graph.global_args) | set(PLATFORM_ARGS)
    done: set[tuple[int, str]] = set()
    for ins in facts.df.instructions:
        stage = graph.stage_for(ins)
        if stage is None or ins.keyword in ("FROM", "ONBUILD"):
            continue
        refs, own = _refs(facts, ins)
        if not refs:
            continue
        sc = graph.scope(ins)
        for name, line in refs.items():
            if name not in global_names or name in own or name in sc.vars or name in sc.args:
                continue
            if (stage.index, name) in done:
                continue
            done.add((stage.index, name))
            g = graph.global_args.get(name)
            if g is not None:
                what = f"the global ARG {name} (line {g.line}" + (f", default {g.value!r})" if g.value is not None
                                                                  else ", no default)")
            else:
                what = f"BuildKit's platform ARG {name} (global scope)"
            base = graph.root(stage).base
            shadow = [n for img, names in _IMAGE_ENV.items() if re.search(rf"(^|/){re.escape(img)}:", base)
                      for n in names if n == name]
            note = (f"the base image {base} sets its own {name}, which is what this stage sees" if shadow
                    else f"here it expands to an empty string")
            yield Finding(
                rule="WD402", title="a global ARG used in a stage that does not redeclare it",
                severity=Severity.INFO if shadow else Severity.WARNING, location=_loc(facts, line),
                message=f"{ins.keyword} on line {line} in {_where(stage)} uses ${name}: {what} is visible to FROM "
                        f"lines only, and {_where(stage)} does not declare `ARG {name}`; {note}.",
                evidence=(f"{_where(stage)} starts at line {stage.line}",),
                fix=Fix(f"Add `ARG {name}` after the FROM of {_where(stage)}", "safe",
                        edits=(insert_after_from(facts, stage, f"ARG {name}"),)),
                data={"arg": name, "stage": stage.label, "declared_at": g.line if g else None},
            )


# -- WD403 / WD404 -------------------------------------------------------------------------------


def _gpu_packages(facts: DockerFacts) -> frozenset[str]:
    from wheeldoc.data.torch import torch_table

    return torch_table().gpu_packages | facts.env.cuda_extensions


def _torch_earlier(facts: DockerFacts, step: Step) -> Step | None:
    """An earlier install in the stage chain that took a CUDA torch: pinned (local tag,
    override, constraint, backend), or torch-dependent packages installed with a CUDA index."""
    chain = {s.index for s in facts.chain(step.stage)}
    for s in facts.steps[: step.index]:
        if s.stage.index not in chain or not s.installs_packages:
            continue
        sources = facts.torch_sources(s)
        if any(t.is_cuda and t.kind in ("pin", "override", "constraint", "backend") for t in sources):
            return s
        needs, unknown = facts.torch_needs(s)
        if (needs or unknown) and any(t.is_cuda and t.kind == "index" for t in sources):
            return s
    return None


def _cuda_intent(facts: DockerFacts, ctx: Context) -> str | None:
    """Why this Dockerfile evidently wants CUDA, or None."""
    if getattr(ctx.target, "gpu", None) is not None:
        return f"the target GPU is {ctx.target.gpu.name}"
    for stage in facts.graph.stages:
        base = facts.base_cuda(stage)
        if base is not None:
            return f"the base image {base[1]} is CUDA {cuda_str(base[0])}"
    for s in facts.steps:
        if s.installs_packages:
            for t in facts.torch_sources(s):
                if t.is_cuda:
                    return f"line {s.line} uses {t.why}"
    gpu = _gpu_packages(facts)
    for s in facts.steps:
        if s.installs_packages:
            needs, _ = facts.torch_needs(s)
            for n in needs:
                if normalize(re.split(r"[=<>!~;\[ @(]", n.split("/")[-1], maxsplit=1)[0]) in gpu:
                    return f"line {s.line} installs {n}"
    return None


def _upgrades(step: Step) -> bool:
    inst = step.install
    return inst is not None and any(inst.has(f) for f in ("--upgrade", "--reinstall", "--force-reinstall"))


def _cuda_fix(facts: DockerFacts, step: Step, ctx: Context) -> Fix:
    inst = step.install
    assert inst is not None
    chosen = _variant_for(facts, step.stage, ctx)
    variant, why = chosen if chosen else ("cu130", "choose the variant of your base image; cu130 is CUDA 13.0")
    first, last = step.ins.start_line, step.ins.end_line
    if inst.tool == "uv":
        title = f"Pin the CUDA build: add `--torch-backend {variant}` ({why}), or an overrides file " \
                f"holding `torch==<version>+{variant}` passed with `--override`"
        edit = replace_in_lines(facts, first, last, re.compile(r"\bpip install\b"),
                                f"pip install --torch-backend {variant}")
    else:
        title = f"Pin the CUDA build: add `--extra-index-url {TORCH_INDEX.format(variant=variant)}` ({why}) and " \
                f"a constraint `torch==<version>+{variant}`"
        edit = replace_in_lines(facts, first, last, re.compile(r"\bpip3? install\b"),
                                lambda m: f"{m[0]} --extra-index-url {TORCH_INDEX.format(variant=variant)}")
    return Fix(title, "unsafe" if edit else "display-only", edits=(edit,) if edit else ())


@rule("WD403", "torch-may-be-cpu", title="a torch-dependent install that can silently take a CPU torch",
      severity=Severity.ERROR, fix="unsafe",
      examples=(Example(("check", f"{R}/wd403-trap1.Dockerfile"), True),
                Example(("check", f"{R}/wd403-trap1-fixed.Dockerfile"), False),
                Example(("check", f"{R}/wd403-unpinned.Dockerfile"), True),
                Example(("check", f"{R}/wd403-cpu-index.Dockerfile"), True),
                Example(("check", f"{D}/json-shell-forms.Dockerfile"), False),
                Example(("check", f"{R}/wd403-pinned.Dockerfile"), False),
                Example(("check", f"{D}/vllm-gb10-multistage.Dockerfile"), False),
                Example(("check", f"{REF}/vllm-gb10.Dockerfile"), False)))
def torch_may_be_cpu(facts: DockerFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Models what pip and uv do with a torch that is already in the image: they keep it only
    while every requirement of the new install admits it. The torch in the image comes from the
    base image (`wheeldoc/data/base_images.json`: `pytorch/pytorch:<v>-cuda<c>-…` ships torch
    `<v>`, `vllm/vllm-openai:v<x>` the torch vLLM `<x>` pins, NGC `nvcr.io/nvidia/pytorch` a
    pre-release build, NGC `nvcr.io/nvidia/vllm` one too, under the vLLM its release ships: an
    install that this vLLM satisfies keeps it) or from an earlier install in the stage chain (`torch==2.11.0+cu130`,
    an uninstall removes it; `conda install pytorch … -c pytorch`, or with `pytorch-cuda`: the
    PyTorch conda channel's torch, at most 2.5, pytorch/pytorch#138506; conda-forge's is not
    known). The new requirement comes from the torch-pin table built from the
    packages' own metadata on PyPI (`wheeldoc/data/torch_pins.json.gz`: vllm 0.9.1 requires
    torch==2.7.0; sglang's `srt` extra; xformers; torchvision, torchaudio; sentence-transformers,
    lightning, pytorch-lightning, accelerate, peft, timm, bitsandbytes, torchmetrics, ultralytics,
    diffusers, open-clip-torch, kornia, torch-geometric; deepspeed publishes no wheel, so its
    requirement stays unknown), for a version given on the command line, in a wheel's file name,
    or, with no version, the release pip and uv pick: the newest whose Requires-Python admits the
    image's Python (from the interpreter that runs the install, uv `--python`, a `python:X.Y` tag,
    the cpXY tag of a torch wheel installed earlier, or the Pythons the PyPI torch release has
    wheels for; when none says, every Python counts, and it is an error only when the pick for
    every Python fails). One level of dependency is followed (lightning -> pytorch-lightning ->
    torch). A pre-release NGC torch is bounded by the image's date (at most two series past the
    newest torch on PyPI then). When the requirement does not admit the torch that is there and nothing holds torch
    (`--no-deps`, an uv `--override` or a pip/uv constraint naming torch, torch named in the same
    command), it is an error; when either side is not known, an info saying so; when a later
    install in the stage names an exact torch on purpose, or a later command moves a saved copy of
    the torch package back into site-packages by hand, an info. An exact torch pin (command
    line or requirements file) over a torch the base image ships is a deliberate choice, but it
    swaps out the image's build under the packages the image built against it: a warning, unless
    the same install also replaces torchvision/torchaudio; so is one over the exact torch an
    earlier line installed (two exact pins disagree: the earlier line's version and index are
    undone), a warning too. An unpinned torchvision/torchaudio over
    a torch an earlier line installed, which no release of it admits (a local `2.2.0a0+git…`
    build), is an error even where the companion may already be there.

    A clone of a known package's default branch installed from its folder (`git clone …/vllm.git
    && cd vllm && pip install -e .`), or its repository URL (`pip install "unsloth @ git+https://…"`),
    counts as at least its newest release: its torch floor and its dependencies with no upper bound
    hold (sources do not go back); a clone at a tag, branch or commit is not judged. A requirement
    through a dependency at its newest release moves torch with pip (its resolver picks torch again
    to fit the dependency); uv may keep the installed torch and take an older release of the
    dependency, so with uv that is not judged. Where a dependency's marker names the machine and the
    build's platform is not given, the machine on which torch moves is named, as a warning. `pip install
    --ignore-installed` resolves as if nothing were installed: it puts PyPI's newest admitted torch
    over the image's (without uninstalling it) even where the image's torch fits. So does `pip wheel
    -w DIR` (and `pip download -d DIR`): it installs nothing, but the folder holds the newest torch
    its requirements admit, and an install of every wheel in it (`pip install /wheels/*`, the folder
    copied from a builder stage with `COPY --from`) puts that torch over the image's.

    The requirements also come from the build context (the Dockerfile's folder, or `check
    --context DIR`): the requirements files an install names (`-r`, with their includes), and the
    `[project]` dependencies (extras included; `dynamic` dependencies from the files
    `[tool.setuptools.dynamic]` names) of a local project it installs (`pip install .`, `-e .`,
    `uv pip install ./pkg`), read statically (1 MiB a file, regular files only, never outside the
    context; nothing built or run). A file the Dockerfile copies in but that is not there is an
    info, never more; a `setup.py`-only project stays unknown. torchvision and torchaudio count as
    torch-dependent installs too (their torch requirement is read from their wheels on PyPI): an
    unpinned one takes the newest release, unless a PyTorch index decides it (pip `--index-url`,
    any uv index) or it is already there and not upgraded; where the base's package list is not
    known (NGC) it may be, and that is an info. A base image the table does not know gets one info
    per stage chain when torch-dependent packages are installed over it; a tag that names only the
    torch series (runpod/pytorch `X.Y.Z-py…-cuda…`) gives a range, judged when every torch in the
    range fails the requirement.

    With no torch in the image (a known base that ships none), it also finds installs of
    torch-dependent packages where nothing decides the build: a CPU index next to GPU packages is
    an error; an unpinned PyPI torch is a warning on an aarch64 target (PyPI may serve a CPU
    build there) and info elsewhere (PyPI's linux x86-64 torch is a CUDA build).

    ## Why is this bad?
    A CUDA torch installed earlier is not protection: it is what gets replaced. In the field
    report a vLLM wheel was installed over `torch 2.11.0+cu130` and the resolver put in another
    torch (`2.10.0+cpu` from the index it used): no error, `torch.version.cuda` is `None`. On an
    NGC image pip instead refuses (its `/etc/pip/constraint.txt` pins the image's torch) and the
    build fails; uv ignores that file and replaces torch.

    ## Example
    ```dockerfile
    FROM vllm/vllm-openai:v0.7.3            # torch 2.5.1 (vllm 0.7.3 pins it)
    RUN uv pip install --system vllm==0.9.1   # requires torch==2.7.0: torch is replaced
    ```

    ## Fix
    Keep the torch that is there: an overrides file holding it, passed with `--override` (uv),
    or a constraint with `-c` (pip): `python -c "import importlib.metadata as m;
    print('torch==' + m.version('torch'))" > /tmp/torch.txt` then `uv pip install --override
    /tmp/torch.txt …` / `pip install -c /tmp/torch.txt …`. If the package was built against
    another torch, check the ABI first (`wheeldoc abi`). Or install the torch the package pins,
    from a CUDA index, on purpose.
    """
    from wheeldoc.dockerfile import torch_state as ts

    gpu = _gpu_packages(facts)
    intent = _cuda_intent(facts, ctx)
    unknown_seen: set[int] = set()
    for step in facts.steps:
        inst = step.install
        if inst is None or not step.installs_packages or not step.network:
            continue
        state = ts.state_before(facts, step)
        if state.present is not False and inst.tool == "pip" and inst.action == "wheel":
            continue  # builds wheels, installs nothing: judged where they are installed
        if state.present:
            got = _replaced(facts, step, state, ctx)
            if got is not None:
                yield got
            continue  # a torch is there: requirements that admit it keep it
        if state.present is None:
            got = _unknown_base(facts, step, state, unknown_seen)
            if got is not None:
                yield got
            continue  # the base image may hold a torch: nothing more to judge
        if intent is None:
            continue
        needs, unknown = facts.torch_needs(step)
        if inst.has("--no-deps"):
            needs = tuple(n for n in needs if normalize(re.split(r"[=<>!~;\[ @]", n, maxsplit=1)[0]) in TORCH_FAMILY)
            unknown = ()
        if not needs and not (unknown and facts.uses_torch):
            continue
        sources = facts.torch_sources(step)
        if any(s.variant == "auto" for s in sources if s.kind == "backend"):
            continue  # WD404
        if any(s.is_cuda for s in sources) or any(s.kind in ("override", "constraint") and s.variant is None
                                                  for s in sources):
            continue
        if any(s.variant and (s.variant.startswith("rocm") or s.variant == "xpu") for s in sources):
            continue
        cpu = [s for s in sources if s.variant == "cpu" or (s.variant or "").startswith("cpu")]
        names = {normalize(re.split(r"[=<>!~;\[ @(]", n.split("/")[-1], maxsplit=1)[0]) for n in needs}
        wants_gpu = bool(names & gpu) or any(n.endswith(".whl") and normalize(n.split("/")[-1].split("-")[0]) in gpu
                                             for n in needs)
        if cpu and not wants_gpu:
            continue  # an explicit CPU install
        platform = facts.platform(step.stage)
        what = ", ".join((needs + unknown)[:4]) + ("…" if len(needs + unknown) > 4 else "")
        if cpu:
            severity = Severity.ERROR
            why = f"a CPU index is in effect ({cpu[0].why}): torch comes from it as a +cpu build"
        else:
            # PyPI's linux x86-64 torch is a CUDA build; only an aarch64 target makes a CPU build likely
            severity = Severity.WARNING if platform == "aarch64" else Severity.INFO
            why = "nothing pins the torch build: no +cuNNN pin, override, constraint, CUDA index or --torch-backend"
        evidence = [f"CUDA wanted: {intent}", *(f"installs {n}" for n in (needs + unknown)[:6])]
        if unknown and not needs:
            evidence.append("the wheels' dependencies are not known here; this Dockerfile installs torch elsewhere")
        if not cpu:
            evidence.append(
                "platform aarch64: PyPI's torch for linux aarch64 may be a CPU-only build" if platform == "aarch64"
                else "platform x86_64: PyPI's torch is a CUDA build of whatever CUDA that release defaults to"
                if platform == "x86_64" else "platform not given (--platform, or FROM --platform): which build "
                "PyPI serves depends on the platform and the release")
        yield Finding(
            rule="WD403", title="a torch-dependent install that can silently take a CPU torch",
            severity=severity, location=_loc(facts, step.line),
            message=f"`{step.text()}` (line {step.line}, {_where(step.stage)}) installs {what}, which need torch; "
                    f"{why}. A CPU torch installs without error and torch.version.cuda is None.",
            evidence=tuple(evidence),
            fix=_cuda_fix(facts, step, ctx),
            data={"stage": step.stage.label, "needs": list(needs), "unknown": list(unknown),
                  "cpu_source": cpu[0].why if cpu else None, "platform": platform},
        )




def _unknown_base_note(facts: DockerFacts, step: Step, root, base: str, seen: set | None) -> Finding | None:
    """Once per base image: a torch-dependent install (or one from inputs wheeldoc cannot read)
    over a base the table does not know, so what torch it ships, if any, cannot be judged."""
    from wheeldoc.dockerfile import torch_state as ts

    if seen is None or root.index in seen or root.is_scratch:
        return None
    if root.base_unknown is False and root.base.lower() in {s.name.lower() for s in facts.graph.stages if s.name}:
        return None
    needs, unknown = facts.torch_needs(step)
    missing = ts.unread(facts, step)
    if not (needs or unknown or missing):
        return None
    seen.add(root.index)
    hint = "" if root.base_unknown or not ts.TORCH_BASE_HINT.search(root.base.rsplit("/", 1)[-1]) else \
        " (its name suggests it ships torch)"
    what = ", ".join((needs + unknown)[:3] or missing[:3])
    return Finding(
        rule="WD403", title="an install replaces the CUDA torch already in the image", severity=Severity.INFO,
        location=_loc(facts, step.line),
        message=f"`{step.text()}` (line {step.line}, {_where(step.stage)}) installs {what} over {base}{hint}, "
                f"which the base-image table does not know: whether it ships a torch, and which, is not known, so "
                f"whether this install replaces it is not judged.",
        evidence=("base image: unknown to wheeldoc/data/base_images.json", *(f"installs {n}" for n in
                                                                            (needs + unknown)[:4]),
                  *(f"not read: {m}" for m in missing[:3])),
        fix=Fix("`--pull-base` reads the base image's real config from the Docker daemon; to keep a torch the "
                "base ships whatever the install asks, pass an override (uv) or constraint (pip) holding it",
                "display-only"),
        data={"stage": step.stage.label, "base": None if root.base_unknown else root.base, "base_known": False,
              "known": False, "torch_installed": None},
    )


def _unknown_base(facts: DockerFacts, step: Step, state, seen: set | None = None) -> Finding | None:
    """An install that pins torch over a base image the table does not know: say what is known."""
    from wheeldoc.dockerfile import torch_state as ts

    inst = step.install
    if inst is None or inst.has("--no-deps") or ts._named_torch(facts, step)[0] or ts.protected(facts, step):
        return None
    reqs = [r for r in ts.requirements(facts, step, state) if r.spec]
    root = facts.graph.root(step.stage)
    base = "a base image given by a build argument" if root.base_unknown else f"the base image {root.base}"
    if not reqs:
        return _unknown_base_note(facts, step, root, base, seen)
    r = reqs[0]
    if seen is not None:
        seen.add(root.index)
    return Finding(
        rule="WD403", title="an install replaces the CUDA torch already in the image", severity=Severity.INFO,
        location=_loc(facts, step.line),
        message=f"`{step.text()}` (line {step.line}, {_where(step.stage)}): {r.what} requires torch{r.spec}. "
                f"Whether {base} ships a torch, and which, is unknown here (not in the base-image table): if it "
                f"ships another one, this install replaces it.",
        evidence=(f"{r.package} {r.version or ''}: torch{r.spec} (wheeldoc/data/torch_pins.json.gz)",
                  "base image: unknown to wheeldoc/data/base_images.json"),
        fix=Fix("If the base image's torch must stay, hold it: `--override` (uv) or `-c` (pip) with a file "
                "holding `torch==<the image's version>`", "display-only"),
        data={"stage": step.stage.label, "package": r.package, "package_version": r.version,
              "torch_required": r.spec, "torch_installed": None, "base_known": False, "known": False},
    )


def _base_not_in_table(facts: DockerFacts, step: Step) -> bool:
    root = facts.graph.root(step.stage)
    return not root.base_unknown and not root.is_scratch and facts.base_image(root.base) is None


def _replaced(facts: DockerFacts, step: Step, state, ctx: Context) -> Finding | None:
    """The story's trap 1: an install whose requirement does not admit the torch already in the
    image replaces it (pip and uv keep an installed torch only while every requirement admits it)."""
    from wheeldoc.dockerfile import torch_state as ts

    inst = step.install
    assert inst is not None
    house = ts.wheelhouse_torch(facts, step)
    if house is not None:
        return _from_wheelhouse(facts, step, state, *house)
    named = ts._named_torch(facts, step)
    if named[0]:
        return _pinned_over_base(facts, step, state, named[1] if named[2] else None)
    if inst.has("--no-deps"):
        return None  # nothing resolved
    holder = ts.protected(facts, step)
    if holder is not None:
        return None
    reqs = ts.requirements(facts, step, state)
    verdicts = [(r, ts.admitted(r, state)) for r in reqs]
    bad = [(r, v) for r, v in verdicts if v is False]
    pip_constraint = ts.pip_constraint(facts, step, state)
    bad = [(r, v) for r, v in bad if not ts.backtracks(facts, step, state, r)]
    if not bad and reqs and state.present and ts.ignores_installed(step):
        got = ts.reinstalled_torch(facts, step, reqs, state)
        if got is not None:
            return _reinstalled(facts, step, state, got)
    maybe_kept = [(r, v) for r, v in bad if not r.sure]  # the package may already be there: then nothing moves
    bad = [(r, v) for r, v in bad if r.sure]
    unsure = [(r, v) for r, v in verdicts if v is None] + maybe_kept
    if not bad and not unsure:
        missing = ts.unread(facts, step)
        if missing and state.present:
            return _unread_context(facts, step, state, missing)
        return None
    if not bad and not maybe_kept and state.version is None and not state.prerelease and state.lowest is None:
        return None  # neither side known: nothing worth saying
    r = (bad or maybe_kept or unsure)[0][0]
    on_machine = None  # the platform is not given, and on one linux machine the requirement moves torch
    if not bad and not maybe_kept:
        for req, _v in unsure:
            if not req.sure:
                continue
            split = ts.machine_verdicts(req, state)
            moved = [m for m, v in split.items() if v is False]
            if moved and len(moved) < len(split):
                from dataclasses import replace

                on_machine = moved[0]
                r = replace(req, candidates=dict(req.per_machine)[on_machine])
                break
    have = state.version or ("a pre-release build (X.Ya0+git…)" if state.prerelease else
                             (f"of series {'.'.join(state.lowest.split('.')[:2])}" +
                              ("" if '.'.join(state.lowest.split('.')[:2]) == state.highest else f" to {state.highest}")
                              + (" (which release, the image's tag does not say)" if state.where.startswith("the base")
                                 else " (which release, not known here)")) if state.lowest and state.highest else
                             "the newest release for the image's Python" if state.by_python else
                             "a version not known here")
    if r.candidates:
        from wheeldoc.dockerfile import dependents

        wants = f"{dependents.describe(r)} ({r.source})"
    elif r.spec:
        wants = f"{r.what} requires torch{r.spec} ({r.source})"
    elif r.newest and r.source_tree:
        wants = (f"{r.what} installs {r.source_tree}, at least as new as its newest release (the newest in the "
                 f"table, {r.package} {r.newest[0]}, requires torch{r.newest[1]}; later sources do not ask for an "
                 f"older one)")
    elif r.newest:
        wants = (f"{r.what} names no version: pip and uv take the newest release and change torch to fit it "
                 f"(the newest in the table, {r.package} {r.newest[0]}, requires torch{r.newest[1]}; later "
                 f"releases do not ask for an older one)")
    else:
        wants = f"{r.what} pins an exact torch in every release the table lists; which one depends on the release"
    later = _later_torch_pin(facts, step) if bad else None
    if bad and later is not None:
        severity = Severity.INFO
        message = (f"`{step.text()}` (line {step.line}, {_where(step.stage)}): {wants}, which the torch already "
                   f"in the image does not satisfy: torch {have}, {state.where}; this install replaces it, and "
                   f"{later} afterwards on purpose, so the stage ends with the torch chosen there.")
    elif bad:
        severity = Severity.ERROR
        if state.by_python and _base_not_in_table(facts, step):
            from dataclasses import replace

            severity = Severity.WARNING  # it rests on the base image, not in the table, having had no torch
            state = replace(state, where=f"{state.where}, taking the base image (not in the base-image table, its "
                                         f"name suggests no torch) to have had none")
        if pip_constraint:
            outcome = (f"pip refuses to resolve it ({pip_constraint} pins the image's torch): the build fails, or "
                       f"works only once that constraint is cleared, and then torch is replaced")
        else:
            outcome = (f"{'uv' if inst.tool == 'uv' else 'pip'} replaces the torch already there with the one "
                       f"the index serves, without an error (on some platforms and indexes a CPU build)")
        message = (f"`{step.text()}` (line {step.line}, {_where(step.stage)}): {wants}, which the torch already "
                   f"in the image does not satisfy: torch {have}, {state.where}. {outcome}.")
    elif on_machine:
        severity = Severity.WARNING
        others = [m for m in ("x86_64", "aarch64") if m != on_machine]
        message = (f"`{step.text()}` (line {step.line}, {_where(step.stage)}), built for linux {on_machine}: {wants}, "
                   f"which the torch already in the image does not satisfy: torch {have}, {state.where}. "
                   f"{'uv' if inst.tool == 'uv' else 'pip'} replaces it there without an error. The build's platform "
                   f"is not given (FROM --platform, --platform): on {', '.join(others)} a marker changes what is "
                   f"required, and there it is not judged.")
    elif maybe_kept:
        severity = Severity.INFO
        message = (f"`{step.text()}` (line {step.line}, {_where(step.stage)}): {wants}, which the torch already in "
                   f"the image does not satisfy (torch {have}, {state.where}). If {r.package} is already installed "
                   f"(the base image or an earlier install may have brought it; not known here), the install keeps "
                   f"it and torch stays; if not, it replaces torch.")
    else:
        severity = Severity.INFO
        message = (f"`{step.text()}` (line {step.line}, {_where(step.stage)}): {wants}. Whether that admits the "
                   f"torch already in the image (torch {have}, {state.where}) is not known here; if it does not, "
                   f"the install replaces it.")
    keep = f"torch=={state.version}" if state.version else "the installed torch (`pip list` shows it)"
    if inst.tool == "uv":
        title = (f"Keep the torch that is there: write `{keep}` to an overrides file and pass it with "
                 f"`--override` (uv)")
        cmd = ("python -c \"import importlib.metadata as m; print('torch==' + m.version('torch'))\" "
               "> /tmp/torch-override.txt && uv pip install --override /tmp/torch-override.txt …")
    else:
        title = f"Keep the torch that is there: constrain it with `-c` (pip), a file holding `{keep}`"
        cmd = ("python -c \"import importlib.metadata as m; print('torch==' + m.version('torch'))\" "
               "> /tmp/torch-constraint.txt && pip install -c /tmp/torch-constraint.txt …")
    return Finding(
        rule="WD403", title="an install replaces the CUDA torch already in the image", severity=severity,
        location=_loc(facts, step.line), message=message,
        evidence=(f"torch in the image: {have} ({state.where})",
                  f"{r.package}: " + (_candidates_evidence(r) if r.candidates else r.spec or
                                      (f"newest {r.newest[0]}: torch{r.newest[1]}" if r.newest else "exact pin")),
                  "an installed torch is kept only while every new requirement admits it; nothing here holds it "
                  "(no --override, -c/--constraint, PIP_CONSTRAINT/UV_CONSTRAINT naming torch, --no-deps)",
                  "if the override keeps an older torch than the package was built for, check the ABI: "
                  "`wheeldoc abi <wheel> torch==<version>`"),
        fix=Fix(title, "display-only", command=cmd),
        data={"stage": step.stage.label, "package": r.package, "package_version": r.version,
              "torch_required": r.spec or (r.newest[1] if r.newest else None), "torch_installed": state.version,
              "torch_prerelease": state.prerelease, "installed_by": state.where,
              "known": bool(bad), "pip_constraint": pip_constraint, "requirement_from": r.what},
    )


def _pinned_over_base(facts: DockerFacts, step: Step, state, version: str | None) -> Finding | None:
    """An install that names an exact torch other than the one the base image ships: chosen on
    purpose, but it swaps out the image's build under the packages the image built or installed
    against it (NGC's torchvision, apex, TransformerEngine; pytorch/pytorch's torchvision)."""
    from packaging.version import InvalidVersion, Version

    from wheeldoc.dockerfile import dependents, torch_state as ts

    from_base = state.where.startswith("the base image")
    # an exact torch an earlier line chose on purpose counts too: this pin undoes that choice
    earlier = state.where.startswith("installed on line") and state.version is not None and state.lowest is None
    if version is None or not (from_base or earlier) or ts.protected(facts, step):
        return None
    try:
        if state.version and Version(state.version).public == Version(version).public:
            return None  # the same release: at most the build changes
    except InvalidVersion:
        return None
    if dependents.admits(f"=={version}", state, False) is not False:
        return None
    inst = step.install
    have = state.version or ("a pre-release build (X.Ya0+git…)" if state.prerelease else "a version not known here")
    ships = sorted(state.ships) if state.ships_known else []
    if _companions_named(facts, step):
        # torch replaced with its companions in one install: the torch stack is managed on purpose
        return None
    if not from_base:
        return _pinned_over_earlier(facts, step, state, version)
    built = (", ".join(ships) + " (shipped with it)") if ships else \
        "the packages the image built against it (not listed for this image)"
    pip_constraint = state.constraint if inst is not None and inst.tool == "pip" else None
    outcome = (f"pip refuses it ({pip_constraint} pins the image's torch) and the build fails" if pip_constraint else
               f"{'uv' if inst is not None and inst.tool == 'uv' else 'pip'} replaces the image's torch build; "
               f"{built} are not reinstalled and may no longer load against torch {version}")
    return Finding(
        rule="WD403", title="an install replaces the CUDA torch already in the image", severity=Severity.WARNING,
        location=_loc(facts, step.line),
        message=f"`{step.text()}` (line {step.line}, {_where(step.stage)}) installs torch=={version} over the torch "
                f"{state.where.removeprefix('the base image ').split(' (')[0]} ships (torch {have}, {state.where}): "
                f"a deliberate pin, but {outcome}.",
        evidence=(f"torch in the image: {have} ({state.where})", f"named: torch=={version}"),
        fix=Fix(f"Keep the image's torch (drop the torch=={version} pin, or hold the image's torch with `-c`/"
                f"`--override`), or start from a base image that ships torch {version}", "display-only"),
        data=_torch_data(step, state, version, f"=={version}", pip_constraint, "torch named in the install"),
    )


def _companions_named(facts: DockerFacts, step: Step) -> set[str]:
    """The torch companions (torchvision, torchaudio) an install names, on its command line or in its
    requirements files."""
    from wheeldoc.dockerfile import torch_state as ts

    family = set(ts._names(facts, step)[0]) & ts.COMPANIONS
    for f in step.install.requirements if step.install is not None else ():
        rf = facts.requirements(step, f)
        family |= {r.name for r in (rf.requirements if rf is not None else ()) if r.name in ts.COMPANIONS}
    return family


def _from_wheelhouse(facts: DockerFacts, step: Step, state, builder: Step, version: str | None, got) -> Finding | None:
    """`pip install /wheels/*` over a torch, where `pip wheel -w /wheels` (here or in a builder stage)
    resolved its requirements as if nothing were installed: the folder holds the newest torch they
    admit, and installing every wheel in it replaces the torch that is there."""
    from wheeldoc.dockerfile import dependents, torch_state as ts

    picks = {version, got.oldest if got is not None and got.oldest else version}
    if version is None or ts.protected(facts, step) or any(dependents.admits(f"=={v}", state, False) is not False
                                                            for v in picks):
        return None  # the same release (or one the image's torch may be)
    shown = " to ".join(sorted(picks, key=lambda v: v != got.oldest)) if len(picks) > 1 and got else version
    if _companions_named(facts, builder) and ts._named_torch(facts, builder)[2]:
        return None  # torch and its companions pinned together on purpose: the torch stack is chosen there
    have = state.version or ("a pre-release build (X.Ya0+git…)" if state.prerelease else
                             f"of series {'.'.join(state.lowest.split('.')[:2])} to {state.highest}"
                             if state.lowest and state.highest else "a version not known here")
    why = got.why if got is not None else f"torch=={version} named there"
    tool = "uv" if step.install is not None and step.install.tool == "uv" else "pip"
    ships = sorted(state.ships) if state.ships_known and state.where.startswith("the base image") else []
    left = f"; {', '.join(ships)} (shipped with the image) stay built for the old one" if ships else ""
    certain = got is None or got.certain
    return Finding(
        rule="WD403", title="an install replaces the torch already there",
        severity=Severity.ERROR if certain else Severity.WARNING, location=_loc(facts, step.line),
        message=f"`{step.text()}` (line {step.line}, {_where(step.stage)}) installs every wheel that "
                f"`{builder.text()}` (line {builder.line}, {_where(builder.stage)}) put there; pip "
                f"{builder.install.action if builder.install else 'wheel'} resolves as if nothing were installed, so "
                f"the folder holds torch {shown} ({why}), and {tool} installs it over the torch already there "
                f"(torch {have}, {state.where}){left}.",
        evidence=(f"torch in the image: {have} ({state.where})", f"in the wheel folder: torch {shown} ({why})",
                  "a wheel named on the command line is installed whatever is there; nothing here holds torch"),
        fix=Fix(f"Build the wheels against the torch that is there: pass `-c` with a file holding "
                f"`torch=={state.version or '<the image torch>'}` to the `pip {builder.install.action if builder.install else 'wheel'}` "
                f"command (or leave torch out of the folder: `--no-deps` there, and install the wheels with a "
                f"constraint holding torch)", "display-only"),
        data=_torch_data(step, state, version, f"=={version}", None, f"the wheels built on line {builder.line}"),
    )


def _torch_data(step: Step, state, version: str, required: str | None, pip_constraint: str | None,
                frm: str) -> dict:
    """The JSON data of a WD403 finding about the torch itself replacing the one there."""
    return {"stage": step.stage.label, "package": "torch", "package_version": version,
            "torch_required": required, "torch_installed": state.version, "torch_prerelease": state.prerelease,
            "installed_by": state.where, "known": True, "pip_constraint": pip_constraint, "requirement_from": frm}


def _pinned_over_earlier(facts: DockerFacts, step: Step, state, version: str) -> Finding:
    """An exact torch pin over the exact torch an earlier line installed: the earlier choice (its
    version, and the index it came from) is silently undone, and the stage ends with this one."""
    inst = step.install
    tool = "uv" if inst is not None and inst.tool == "uv" else "pip"
    return Finding(
        rule="WD403", title="an install replaces the torch an earlier line chose", severity=Severity.WARNING,
        location=_loc(facts, step.line),
        message=f"`{step.text()}` (line {step.line}, {_where(step.stage)}) installs torch=={version} over the "
                f"torch {state.version} {state.where}: two exact torch pins disagree, and {tool} replaces the "
                f"earlier one, so that line's choice (its version and the index it came from) is undone.",
        evidence=(f"torch before this install: {state.version} ({state.where})", f"named here: torch=={version}"),
        fix=Fix(f"Pin one torch: make the two pins agree (torch=={state.version} in both), or drop the earlier "
                f"install; hold it with `-c`/`--override` if the earlier build must stay", "display-only"),
        data=_torch_data(step, state, version, f"=={version}", None, "torch named in the install"),
    )


def _reinstalled(facts: DockerFacts, step: Step, state, got) -> Finding:
    """`pip install --ignore-installed …` over a torch: pip resolves as if nothing were installed
    and puts PyPI's newest admitted torch over the image's, even where the image's torch fits."""
    have = state.version or (f"of series {'.'.join(state.lowest.split('.')[:2])} to {state.highest}"
                             if state.lowest and state.highest else "a version not known here")
    return Finding(
        rule="WD403", title="an install replaces the torch already there",
        severity=Severity.ERROR if got.certain else Severity.WARNING, location=_loc(facts, step.line),
        message=f"`{step.text()}` (line {step.line}, {_where(step.stage)}) passes --ignore-installed: pip resolves "
                f"as if nothing were installed and installs torch afresh ({got.why}), over the torch already there "
                f"(torch {have}, {state.where}), whether or not that one fits, and without uninstalling it "
                f"(both dist-info folders stay; the new files overwrite the old, the old ones the new release "
                f"lacks stay behind).",
        evidence=(f"torch in the image: {have} ({state.where})", f"reinstalled: {got.version} ({got.why})",
                  "--ignore-installed: installed packages are not considered; nothing here holds torch"),
        fix=Fix("Keep the torch that is there: drop --ignore-installed (uninstall the one package pip cannot, if "
                "that is why it is there), or hold torch with `-c` and a file naming the installed torch",
                "display-only"),
        data=_torch_data(step, state, got.version, None, None, "--ignore-installed"),
    )


def _later_torch_pin(facts: DockerFacts, step: Step) -> str | None:
    """A later install in the same stage that names an exact torch ("line 12 installs
    torch==1.13.1+cu117"): the torch the stage ends with is chosen there."""
    from wheeldoc.dockerfile import torch_state as ts

    for s in facts.steps[step.index + 1:]:
        if s.stage.index != step.stage.index:
            continue
        if _restores_torch(s):
            return (f"line {s.line} moves a saved copy of the torch package back into site-packages by hand (pip's "
                    f"records still name the torch this install put there)")
        if s.install is None or not s.installs_packages:
            continue
        if ts._uninstalls_torch(s):
            return None
        named, version, exact = ts._named_torch(facts, s)
        if named:
            return f"line {s.line} installs torch=={version}" if exact and version else None
    return None


_TORCH_DIR = re.compile(r"/(?:site|dist)-packages/torch/?$")


def _restores_torch(step: Step) -> bool:
    """`mv /tmp/torch_saved …/dist-packages/torch` (or cp -r, rsync): the torch package's files put
    back by hand, after an install replaced them."""
    argv = step.argv
    if not argv or argv[0].rsplit("/", 1)[-1] not in ("mv", "cp", "rsync"):
        return False
    paths = [a for a in argv[1:] if not a.startswith("-")]
    return len(paths) >= 2 and bool(_TORCH_DIR.search(paths[-1])) and not _TORCH_DIR.search(paths[0])


def _candidates_evidence(r) -> str:
    """The releases pip/uv could pick and what each asks of torch, short."""
    seen = []
    for c in r.candidates:
        wants = "torch unknown" if c.torch is None or c.torch[0][1] is None else \
            ", ".join(f"torch{x[1]}" for x in c.torch if x[1]) or "no torch"
        line = f"{c.release} ({wants})"
        if line not in seen:
            seen.append(line)
    return "could pick " + "; ".join(seen[:4]) + (" …" if len(seen) > 4 else "")


def _unread_context(facts: DockerFacts, step: Step, state, missing: list[str]) -> Finding:
    """An install over a torch from inputs wheeldoc cannot read here (the build context is not
    there, or a project without pyproject.toml): info, never more."""
    have = state.version or "torch"
    return Finding(
        rule="WD403", title="an install replaces the CUDA torch already in the image", severity=Severity.INFO,
        location=_loc(facts, step.line),
        message=f"`{step.text()}` (line {step.line}, {_where(step.stage)}) installs from "
                f"{', '.join(missing[:3])}, which wheeldoc cannot read here (not in the build context "
                f"{facts.context}, or not a file the Dockerfile copies; `--context DIR` names the context): whether "
                f"it replaces the torch already in the image ({have}, {state.where}) is not known.",
        evidence=(f"torch in the image: {state.version or 'version not known'} ({state.where})",
                  *(f"not read: {m}" for m in missing[:6])),
        fix=Fix("Run `wheeldoc check` where the build context is (or pass `--context DIR`); to keep the image's "
                "torch whatever the requirements say, pass an override (uv) or constraint (pip) holding it",
                "display-only"),
        data={"stage": step.stage.label, "known": False, "unread": list(missing),
              "torch_installed": state.version, "installed_by": state.where},
    )


_AUTO = re.compile(r"(--torch-backend[= ]+|UV_TORCH_BACKEND=)([\"']?)auto\b")


@rule("WD404", "torch-backend-auto-at-build", title="--torch-backend auto during docker build picks the CPU index",
      severity=Severity.ERROR, fix="unsafe",
      examples=(Example(("check", f"{R}/wd404-auto.Dockerfile"), True),
                Example(("check", f"{D}/vllm-gb10-multistage.Dockerfile"), True),
                Example(("check", f"{D}/monorepo-ten-stages.Dockerfile"), True),
                Example(("check", f"{R}/wd404-device.Dockerfile"), False),
                Example(("check", f"{D}/lowercase-keywords.Dockerfile"), False),
                Example(("check", f"{REF}/vllm-gb10.Dockerfile"), False)))
def torch_backend_auto(facts: DockerFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Finds `uv pip install` commands that take the PyTorch index from `--torch-backend auto` or
    `UV_TORCH_BACKEND=auto` (inline, exported, ENV or ARG) during `docker build`, for installs
    that involve torch (torch-dependent packages, local wheels, requirements files). A RUN that
    asks for a GPU (`RUN --device=nvidia.com/gpu=all`, BuildKit's CDI devices) is left alone.

    ## Why is this bad?
    `auto` picks the index from the NVIDIA driver uv finds on the machine. `docker build` runs
    without a GPU or driver, so uv chooses the CPU-only index (uv 0.13.9 on a machine without a
    driver fetches `https://download.pytorch.org/whl/cpu/torch/`) and the image gets a `+cpu`
    torch, or fails to resolve a CUDA pin. The same line works on a GPU workstation, which hides
    the problem until the image runs.

    ## Example
    ```dockerfile
    RUN UV_TORCH_BACKEND=auto uv pip install vllm
    ```

    ## Fix
    Name the backend: `--torch-backend cu130` (the CUDA of the base image, or of the target
    driver). The edit replaces `auto` (unsafe: it changes what is installed).
    """
    for step in facts.steps:
        inst = step.install
        if inst is None or inst.tool != "uv" or inst.action not in ("pip install", "pip sync"):
            continue
        if not _no_gpu_during_build(step) or not step.network:
            continue
        src = next((s for s in facts.torch_sources(step) if s.kind == "backend"), None)
        if src is None or src.variant != "auto":
            continue
        if not _involves_torch(facts, step):
            continue
        needs, unknown = facts.torch_needs(step)
        chosen = _variant_for(facts, step.stage, ctx)
        v = facts.var(step, "UV_TORCH_BACKEND") if inst.torch_backend is None else None
        first, last = (v.line, v.line) if v is not None and v.origin in ("ENV", "ARG") and v.line else \
            (step.ins.start_line, step.ins.end_line)
        edit = replace_in_lines(facts, first, last, _AUTO, lambda m: f"{m[1]}{m[2]}{chosen[0]}") if chosen else None
        fix = Fix(f"Name the backend: --torch-backend {chosen[0]} ({chosen[1]})" if chosen else
                  "Name the backend that matches the base image's CUDA: --torch-backend cu130 (CUDA 13.0), "
                  "cu128 (12.8), …", "unsafe" if edit else "display-only", edits=(edit,) if edit else ())
        yield Finding(
            rule="WD404", title="--torch-backend auto during docker build picks the CPU index",
            severity=Severity.ERROR, location=_loc(facts, step.line),
            message=f"`{step.text()}` (line {step.line}, {_where(step.stage)}) resolves torch with backend `auto` "
                    f"({src.why}). `docker build` sees no GPU driver, so uv picks the CPU index: the image gets "
                    f"a +cpu torch, or a CUDA pin fails to resolve.",
            evidence=tuple(f"installs {n}" for n in (needs + unknown)[:4]),
            fix=fix,
            data={"stage": step.stage.label, "source": src.why},
        )


# -- WD405 ---------------------------------------------------------------------------------------


def _torch_cuda(facts: DockerFacts, step: Step) -> TorchSource | None:
    inst = step.install
    if inst is None or not step.installs_packages:
        return None
    sources = [s for s in facts.torch_sources(step) if s.cuda]
    for kind in ("pin", "override", "constraint", "backend"):
        for s in sources:
            if s.kind == kind:
                return s
    needs, _ = facts.torch_needs(step)
    if needs:
        return next((s for s in sources if s.kind == "index"), None)
    return None


def _stage_torch(facts: DockerFacts, stage: Stage) -> tuple[Step, TorchSource] | None:
    found = None
    for st in facts.chain(stage):
        for step in facts.steps_in(st):
            t = _torch_cuda(facts, step)
            if t is not None:
                found = (step, t)
    return found


_WHY_MINOR = ("the torch wheels bring their own CUDA {t} libraries (nvidia-* wheels) while the image's "
              "/usr/local/cuda is {b}: extensions compiled in the image with its nvcc {b} link the image's "
              "runtime, so two CUDA runtimes load into one process, and torch.utils.cpp_extension warns "
              "about the mismatch; the image's NVIDIA_REQUIRE_CUDA also understates the driver the wheels need")


@rule("WD405", "base-image-cuda-mismatch", title="base image CUDA differs from the torch build's CUDA",
      severity=Severity.ERROR,
      examples=(Example(("check", f"{R}/wd405-mismatch.Dockerfile"), True),
                Example(("check", f"{R}/wd405-minor.Dockerfile"), False),
                Example(("check", f"{R}/wd405-runtime-newer.Dockerfile"), False),
                Example(("check", f"{R}/wd405-match.Dockerfile"), False),
                Example(("check", f"{D}/vllm-gb10-multistage.Dockerfile"), False),
                Example(("check", f"{REF}/vllm-gb10.Dockerfile"), False)))
def base_image_cuda_mismatch(facts: DockerFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Finds a command that compiles CUDA code (a source install, `--no-build-isolation`,
    `setup.py`, cmake, nvcc) in a devel image whose nvcc is of another CUDA major than the torch
    it compiles against: a torch installed earlier in the stage chain (`+cu130` local tag,
    `/whl/cu130` index, `--torch-backend cu130`, an override or constraint, or an exact
    `torch==X.Y.Z` that PyPI serves: its wheels' CUDA major), the torch PyPI
    serves when an earlier install's requirements moved or brought torch (the newest release
    they admit for the image's Python, whose PyPI wheels are CUDA builds of a known major,
    `wheeldoc/data/torch.json`; a warning when that rests on the newest release of an unpinned
    package), or the torch of a `pytorch/pytorch` devel image. An isolated source build (no
    `--no-build-isolation`) whose own requirements move torch (a clone of vLLM's default branch)
    compiles against the torch they resolve to (a local project whose setup.py and pyproject.toml,
    read from the build context, name no extension or native build tool compiles nothing); one of a repository whose [build-system] requires
    torch (causal-conv1d, mamba: `wheeldoc/data/extension_builds.json`, forced to compile) against
    PyPI's newest torch those admit, which pip's build environment installs. The image's CUDA comes from the
    base-image table (`wheeldoc/data/base_images.json`); an image it does not know is not judged.
    A build not known to compile CUDA code (a VCS URL, sdist or local project that is no known
    extension, with no CUDA build switch, no `--no-build-isolation` in a file that installs torch,
    and no build file in the context naming CUDA) is said at information: only the image's nvcc
    says it may compile.

    ## Why is this bad?
    torch.utils.cpp_extension compares the CUDA of nvcc with the CUDA torch was built with and
    refuses a different major ("The detected CUDA version (12.8) mismatches the version that was
    used to compile PyTorch (13.0)"); CMake builds through torch's config fail the same way. A
    different minor only warns. A runtime image whose CUDA is newer (or older) than torch's is
    fine: torch wheels carry their own CUDA libraries, and the driver is what must be new enough
    (WD408 with `--driver`).

    ## Example
    ```dockerfile
    FROM nvidia/cuda:12.8.1-devel-ubuntu24.04
    RUN pip install torch==2.11.0 --index-url https://download.pytorch.org/whl/cu130
    RUN pip install --no-build-isolation git+https://github.com/facebookresearch/xformers.git@v0.0.32
    ```

    ## Fix
    Build on a devel image of torch's CUDA major (`nvidia/cuda:13.0.1-devel-…` for `cu130`), or
    install the torch build of the image's CUDA major.
    """
    reported: set[tuple[tuple[int, str], bool]] = set()
    for step in facts.steps:
        if step.build is None or _compiles_nothing(facts, step):
            continue
        root = facts.graph.root(step.stage)
        img = None if root.base_unknown else facts.base_image(root.base)
        if img is None or not img.nvcc or img.cuda is None:
            continue  # no nvcc known in this image
        got = _torch_before(facts, step)
        if got is None:
            t_cuda, why = (img.torch and img.cuda, f"the base image {root.base} ships torch for CUDA "
                           f"{cuda_str(img.cuda)}") if img.torch is not None and img.row == "pytorch/pytorch" else \
                (None, "")
        else:
            t_cuda, why = got
        if t_cuda is None or t_cuda[0] == img.cuda[0]:
            continue  # same major: torch.utils.cpp_extension accepts it (a minor difference only warns)
        sure = _compiles_native(facts, step, nvcc=False)  # else only the image's nvcc says it compiles CUDA code
        key = (step.stage.index, why)
        if (key, True) in reported or (not sure and (key, False) in reported):
            continue  # one finding per stage and torch (a build known to compile CUDA code is said even so)
        reported.add((key, sure))
        b, tc = cuda_str(img.cuda), (cuda_str(t_cuda) if len(t_cuda) == 2 else f"{t_cuda[0]}.x")
        severity = Severity.ERROR
        if got is not None and len(t_cuda) == 1:
            from wheeldoc.dockerfile.torch_state import state_before

            pypi = state_before(facts, step).pypi
            if pypi is not None and not pypi.certain:
                severity = Severity.WARNING  # the torch is the newest release an unpinned requirement admits
        compiles = "compiles CUDA code"
        if not sure:  # a VCS URL, sdist or local project not known to hold CUDA code
            severity, compiles = Severity.INFO, "builds a project not known to hold CUDA code; if it compiles any, it does so"
        yield Finding(
            rule="WD405", title="base image CUDA differs from the torch build's CUDA", severity=severity,
            location=_loc(facts, step.line),
            message=f"`{step.text()}` (line {step.line}, {_where(step.stage)}) {compiles} with the nvcc of "
                    f"{root.base} (CUDA {b}) against a torch built for CUDA {tc} ({why}): "
                    f"torch.utils.cpp_extension refuses a different CUDA major ('The detected CUDA version ({b}) "
                    f"mismatches the version that was used to compile PyTorch ({tc})'), and CMake builds that use "
                    f"torch's config fail the same way.",
            evidence=(f"nvcc: {root.base} is a devel image of CUDA {b} ({img.source.split(';')[0]})",
                      f"torch: CUDA {tc}: {why}",
                      "a runtime image newer or older than torch's CUDA is fine: torch wheels carry their own CUDA "
                      "libraries; only compiling against torch needs the same major"),
            fix=Fix(f"Build on a CUDA {t_cuda[0]}.x devel image (nvidia/cuda:{tc if len(t_cuda) == 1 else tc + '.x'}-devel-…), or install the torch "
                    f"build of CUDA {img.cuda[0]} (cu{img.cuda[0]}{img.cuda[1]} or another CUDA {img.cuda[0]} "
                    f"variant)", "display-only"),
            data={"stage": step.stage.label, "image_cuda": b, "nvcc_cuda": b, "torch_cuda": tc},
        )


def _torch_before(facts: DockerFacts, step: Step) -> tuple[tuple[int, int] | tuple[int], str] | None:
    """CUDA of the torch the stage chain installed before `step`: the latest of an install that says
    the build (local tag, index, backend) and an install whose requirements made pip/uv take
    PyPI's torch of a known release (torch_state.PypiTorch: (major,) only)."""
    from wheeldoc.dockerfile.torch_state import state_before

    chain = {s.index for s in facts.chain(step.stage)}
    found = None
    line = -1
    for s in facts.steps[: step.index]:
        if s.stage.index not in chain:
            continue
        t = _torch_cuda(facts, s)
        if t is not None and t.cuda is not None:
            found, line = (t.cuda, f"line {s.line}: {t.why}"), s.line
    before = state_before(facts, step)
    inst = step.install
    if step.build is not None and inst is not None and not inst.no_build_isolation:
        # an isolated source build whose own requirements move torch compiles against the torch they
        # resolve to (its build environment takes the release its requirements pin, vLLM's way)
        from wheeldoc.dockerfile.torch_state import _advance

        after = _advance(facts, step, before).pypi
        if after is not None and after.line == step.line:
            return (after.cuda_major,), after.why
        built = _build_env_torch(facts, step)
        if built is not None:
            return (built.cuda_major,), built.why
    pypi = before.pypi
    if pypi is not None and pypi.line >= line:
        return (pypi.cuda_major,), pypi.why
    return found


# -- WD406 ---------------------------------------------------------------------------------------

_TORCH_ITEM = re.compile(r"^(\d+)\.(\d+)([af]?)(\+PTX)?$")
_CMAKE_ITEM = re.compile(r"^(\d{2,3})([af]?)(?:-(real|virtual))?$")
_GENCODE = re.compile(r"(?:-gencode|--generate-code)[= ]+[\"']?arch=compute_(\d+)([af]?),code=\[?([\w,]+)\]?")
_ARCH_FLAG = re.compile(r"(?:^|\s)(?:-arch|--gpu-architecture)[= ]+(sm|compute)_(\d+)([af]?)\b")
_CMAKE_DEF = re.compile(r"-DCMAKE_CUDA_ARCHITECTURES=[\"']?([^\"'\s]+)")
_TORCH_STYLE = ("TORCH_CUDA_ARCH_LIST", "FLASHINFER_CUDA_ARCH_LIST")
_CMAKE_STYLE = ("CMAKE_CUDA_ARCHITECTURES", "CUDAARCHS")
_FLAG_STYLE = ("NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS", "CMAKE_ARGS", "CUDAFLAGS", "TORCH_NVCC_FLAGS",
               "CMAKE_CUDA_FLAGS")


@dataclass(frozen=True)
class ArchList:
    """GPU code a build setting asks for: (sm, suffix, kind "cubin"|"ptx") entries, or a
    keyword resolved at build time (`native`)."""

    name: str
    value: str
    line: int
    stage: Stage
    entries: tuple[tuple[int, str, str], ...]
    special: str | None = None
    style: str = "torch"


def _parse_torch_list(value: str, names) -> tuple[tuple[tuple[int, str, str], ...], str | None]:
    v = value.strip().strip("\"'")
    if v in ("native", ""):
        return (), v or "empty"
    v = v.replace(" ", ";")
    for name, arches in names:
        v = v.replace(name, arches)
    out = []
    for item in filter(None, v.split(";")):
        m = _TORCH_ITEM.match(item.strip())
        if not m:
            return (), f"unknown item {item!r}"
        sm = int(m[1]) * 10 + int(m[2])
        out.append((sm, m[3], "cubin"))
        if m[4]:
            out.append((sm, m[3], "ptx"))
    return tuple(out), None


def _parse_cmake_list(value: str) -> tuple[tuple[tuple[int, str, str], ...], str | None]:
    v = value.strip().strip("\"'")
    if v in ("native", "all", "all-major", ""):
        return (), v or "empty"
    out = []
    for item in filter(None, re.split(r"[;,\s]+", v)):
        m = _CMAKE_ITEM.match(item)
        if not m:
            return (), f"unknown item {item!r}"
        sm = int(m[1])
        if m[3] in (None, "real"):
            out.append((sm, m[2], "cubin"))
        if m[3] in (None, "virtual"):
            out.append((sm, m[2], "ptx"))
    return tuple(out), None


def _parse_flags(value: str) -> tuple[tuple[tuple[int, str, str], ...], str | None] | None:
    out = []
    for m in _GENCODE.finditer(value):
        for code in m[3].split(","):
            cm = re.match(r"(sm|compute)_(\d+)([af]?)$", code)
            if cm:
                out.append((int(cm[2]), cm[3], "cubin" if cm[1] == "sm" else "ptx"))
    for m in _ARCH_FLAG.finditer(value):
        sm = int(m[2])
        out.append((sm, m[3], "cubin" if m[1] == "sm" else "ptx"))
        if m[1] == "sm":
            out.append((sm, m[3], "ptx"))
    if m := _CMAKE_DEF.search(value):
        got, special = _parse_cmake_list(m[1])
        out.extend(got)
        if special and not out:
            return (), special
    if not out:
        return None
    return tuple(out), None


def _arch_lists(facts: DockerFacts) -> Iterator[ArchList]:
    names = facts.env.torch_arch_names

    def parse(name: str, value: str):
        if name in _TORCH_STYLE:
            return _parse_torch_list(value, names), "torch"
        if name in _CMAKE_STYLE:
            return _parse_cmake_list(value), "cmake"
        if not _GENCODE.search(value) and not _ARCH_FLAG.search(value) and (m := _CMAKE_DEF.search(value)):
            return _parse_cmake_list(m[1]), "cmake"
        return _parse_flags(value), "flags"

    tracked = _TORCH_STYLE + _CMAKE_STYLE + _FLAG_STYLE
    for b in facts.graph.bindings:
        if b.stage is None or b.name not in tracked or not b.known or b.value is None:
            continue
        got, style = parse(b.name, b.value)
        if got is not None:
            yield ArchList(b.name, b.value, b.line or 0, facts.graph.stages[b.stage], got[0], got[1], style)
    for step in facts.steps:
        for k, raw in (*step.command.assignments, *step.command.exported):
            if k not in tracked or re.fullmatch(rf"\$\{{?{k}\}}?", raw.strip("\"'")):
                continue
            value = facts.expand(step, raw)
            if value is None:
                continue
            got, style = parse(k, value)
            if got is not None:
                value = _CMAKE_DEF.search(value)[1] if style == "cmake" and k in _FLAG_STYLE else value
                yield ArchList(k, value, step.line, step.stage, got[0], got[1], style)
        prog = step.argv[0].rsplit("/", 1)[-1] if step.argv else ""
        if prog in ("nvcc", "cmake"):
            args = " ".join(step.argv[1:])
            if prog == "cmake" and (m := _CMAKE_DEF.search(args)):
                got = _parse_cmake_list(m[1])
                yield ArchList("-DCMAKE_CUDA_ARCHITECTURES", m[1], step.line, step.stage, got[0], got[1], "cmake")
            elif (got := _parse_flags(args)) is not None:
                yield ArchList(prog, args, step.line, step.stage, got[0], got[1], "flags")


def _add_item(style: str, cc: tuple[int, int]) -> str:
    return {"torch": f"{cc[0]}.{cc[1]}", "cmake": f"{cc[0]}{cc[1]}",
            "flags": f"-gencode arch=compute_{cc[0]}{cc[1]},code=sm_{cc[0]}{cc[1]}"}[style]


@rule("WD406", "arch-list-misses-gpu", title="GPU architecture list misses the target GPU", severity=Severity.ERROR,
      fix="unsafe",
      examples=(Example(("check", f"{R}/wd406-arch-lists.Dockerfile", "--gpu", "gb10"), True),
                Example(("check", f"{D}/pytorch-source-build.Dockerfile", "--gpu", "h100"), True),
                Example(("check", f"{R}/wd406-arch-lists.Dockerfile"), False),
                Example(("check", f"{D}/pytorch-source-build.Dockerfile", "--gpu", "gb10"), False),
                Example(("check", f"{REF}/vllm-gb10.Dockerfile", "--gpu", "gb10"), False)))
def arch_list_misses_gpu(facts: DockerFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    With `--gpu`, reads every GPU architecture list a build gets: `TORCH_CUDA_ARCH_LIST` and
    `FLASHINFER_CUDA_ARCH_LIST` (torch's syntax, named architectures such as `Hopper`
    included), `CMAKE_CUDA_ARCHITECTURES` / `CUDAARCHS` (CMake's, `-real` / `-virtual`), and
    `-gencode` / `-arch` flags in `NVCC_APPEND_FLAGS`, `CMAKE_ARGS`, `CUDAFLAGS`, nvcc and
    cmake command lines; set by ENV, ARG, inline or `export`. It reports a list with no
    machine code (cubin) for the target GPU: nothing at all, or only PTX (`+PTX`,
    `-virtual`, `code=compute_XY`) that the driver must JIT-compile. `native` is reported too:
    it resolves to the GPUs visible during the build, and `docker build` sees none.

    ## Why is this bad?
    A cubin runs on GPUs of the same major with an equal or higher minor (`sm_120` runs on a
    GB10, `sm_121`); an `a` cubin (`12.0a`) only on exactly its architecture. With no usable
    cubin, kernels fail with "no kernel image is available for execution on the device". With
    PTX only, the first load JIT-compiles every kernel (minutes for large libraries), and PTX
    from a toolkit newer than the driver fails with `cudaErrorUnsupportedPtxVersion`: the
    field report's vision encoder died that way on a GB10.

    ## Example
    ```dockerfile
    ENV TORCH_CUDA_ARCH_LIST="8.0;9.0;10.0+PTX"   # --gpu gb10 (12.1): PTX only
    ```

    ## Fix
    Add the target architecture to the list: `12.1` (torch), `121` (CMake),
    `-gencode arch=compute_121,code=sm_121`. The edit appends it (unsafe: it changes the
    build).
    """
    gpu = getattr(ctx.target, "gpu", None)
    if gpu is None:
        return
    from wheeldoc.kernels.load_model import cubin_runs_on, ptx_jits_for

    cc = (gpu.major, gpu.minor)
    driver = getattr(ctx.target, "driver", None)
    seen: set[tuple[int, str]] = set()
    for al in _arch_lists(facts):
        if (al.line, al.name) in seen:
            continue
        seen.add((al.line, al.name))
        label = f"{al.name}={al.value!r}" if al.style != "flags" or al.name.isupper() else f"`{al.name} …`"
        if al.special is not None:
            if al.special == "native":
                yield _arch_finding(facts, al, Severity.ERROR, f"{label} (line {al.line}) resolves to the GPUs visible "
                                    f"during the build, and `docker build` sees none: no code for {gpu.arch}", gpu)
            continue
        cubins = [e for e in al.entries if e[2] == "cubin" and cubin_runs_on(e[0], e[1], cc)]
        if cubins:
            continue
        ptx = [e for e in al.entries if e[2] == "ptx" and ptx_jits_for(e[0], e[1], cc)]
        if not ptx:
            yield _arch_finding(facts, al, Severity.ERROR, f"{label} (line {al.line}) has no code that runs on "
                                f"{gpu.name} ({gpu.arch}): kernels fail with 'no kernel image is available for "
                                f"execution on the device'", gpu)
            continue
        best = max(ptx)
        severity = Severity.WARNING
        extra = ""
        base = facts.base_cuda(al.stage)
        if driver is not None and base is not None:
            from wheeldoc.data import tables

            isa, disa = tables.ptx_isa_for_cuda(base[0]), driver.ptx_isa
            if isa and disa and isa > disa:
                severity = Severity.ERROR
                extra = (f"; the image's CUDA {cuda_str(base[0])} toolkit writes PTX ISA {isa[0]}.{isa[1]}, newer "
                         f"than the driver's {disa[0]}.{disa[1]}: loading fails with cudaErrorUnsupportedPtxVersion")
        yield _arch_finding(facts, al, severity, f"{label} (line {al.line}) covers {gpu.name} ({gpu.arch}) only "
                            f"through PTX for compute_{best[0]}{best[1]}: the driver JIT-compiles every kernel at "
                            f"first load{extra}", gpu)


def _arch_finding(facts: DockerFacts, al: ArchList, severity: Severity, message: str, gpu) -> Finding:
    item = _add_item(al.style, (gpu.major, gpu.minor))
    sep = {"torch": ";", "cmake": ";", "flags": " "}[al.style]
    edit = None
    if al.special is None and al.value:
        stripped = al.value.strip("\"'")
        pattern = re.compile(re.escape(stripped) + r"(?=[\"'\s]|$)")
        edit = replace_in_lines(facts, al.line, _last_line(facts, al.line), pattern,
                                lambda m: f"{m[0]}{sep}{item}")
    elif al.special == "native":
        pattern = re.compile(r"\bnative\b")
        edit = replace_in_lines(facts, al.line, _last_line(facts, al.line), pattern, lambda m: item)
    return Finding(
        rule="WD406", title="GPU architecture list misses the target GPU", severity=severity,
        location=_loc(facts, al.line), message=message + ".",
        evidence=(f"{_where(al.stage)}: {al.name} = {al.value}",
                  f"a cubin for {gpu.arch} (or a lower {gpu.major}.x) runs natively"),
        fix=Fix(f"Add {item!r} to {al.name}", "unsafe" if edit else "display-only", edits=(edit,) if edit else ()),
        data={"variable": al.name, "value": al.value, "stage": al.stage.label, "gpu": gpu.arch},
    )


def _last_line(facts: DockerFacts, line: int) -> int:
    ins = facts.df.at_line(line)
    return ins.end_line if ins is not None else line


# -- WD407 ---------------------------------------------------------------------------------------


def _seedless_venvs(facts: DockerFacts, step: Step) -> dict[str, int]:
    """Venvs created with `uv venv` (no --seed) earlier in the stage chain: path -> line."""
    chain = {s.index for s in facts.chain(step.stage)}
    out: dict[str, int] = {}
    for s in facts.steps[: step.index]:
        if s.stage.index not in chain or not s.argv or s.argv[0].rsplit("/", 1)[-1] != "uv":
            continue
        if s.argv[1:2] == ("venv",):
            flags = s.argv[2:]
            value_opts = {"--python", "-p", "--prompt", "--index-url", "--extra-index-url", "--link-mode"}
            pos = [a for i, a in enumerate(s.argv[2:]) if not a.startswith("-")
                   and (i == 0 or flags[i - 1] not in value_opts)]
            path = pos[0] if pos else ".venv"
            seed = "--seed" in flags or (facts.var(s, "UV_VENV_SEED") or None) is not None
            ab = facts.abs_path(s.ins, path)
            if ab and not seed:
                out[ab] = s.line
            elif ab:
                out.pop(ab, None)
        elif s.install is not None and any(p.split("=")[0].split("<")[0].split(">")[0] == "pip"
                                           for p in s.install.packages):
            py = s.install.option("--python")
            for path in list(out):
                if py is None or py.startswith(path):
                    out.pop(path)
    return out


@rule("WD407", "pip-in-seedless-uv-venv", title="pip used in a uv venv that has no pip", severity=Severity.WARNING,
      fix="unsafe",
      examples=(Example(("check", f"{R}/wd407-pip-in-uv-venv.Dockerfile"), True),
                Example(("check", f"{D}/monorepo-ten-stages.Dockerfile"), True),
                Example(("check", f"{D}/pip-classic.Dockerfile"), False),
                Example(("check", f"{REF}/vllm-gb10.Dockerfile"), False)))
def pip_in_seedless_uv_venv(facts: DockerFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Finds `pip install` / `python -m pip …` in a stage whose active virtual environment
    (`VIRTUAL_ENV`, or its `bin` first on `PATH`) was created by `uv venv` without `--seed`
    (or `UV_VENV_SEED`) earlier in the stage chain, with no pip installed into it since.

    ## Why is this bad?
    `uv venv` creates an environment without pip. `python -m pip` then fails ("No module named
    pip"), and a bare `pip` is whatever the shell finds next on `PATH`: in a `python:*` image
    that is the system pip, which installs into the system Python while the venv's `python`
    never sees the packages. The image builds; imports fail at run time.

    ## Example
    ```dockerfile
    RUN uv venv /opt/venv
    ENV VIRTUAL_ENV=/opt/venv PATH=/opt/venv/bin:$PATH
    RUN pip install requests
    ```

    ## Fix
    Install with `uv pip install` (it uses `VIRTUAL_ENV`), or create the venv with
    `uv venv --seed`. The edit rewrites the command to `uv pip install` (unsafe).
    """
    for step in facts.steps:
        inst = step.install
        if inst is None or inst.tool != "pip":
            continue
        via = inst.via
        bare = "/" not in step.argv[0]
        venvs = _seedless_venvs(facts, step)
        if not venvs:
            continue
        active = facts.var(step, "VIRTUAL_ENV")
        path = facts.var(step, "PATH")
        hit = None
        for venv, line in venvs.items():
            on_path = path is not None and path.value is not None and f"{venv}/bin" in path.value.split(":")[:1]
            if (active is not None and active.value == venv) or on_path:
                hit = (venv, line)
        if hit is None:
            continue
        python_m = " -m " in via
        if not python_m and not bare and not step.argv[0].startswith(hit[0]):
            continue
        consequence = ("`python` is the venv's, which has no pip: the command fails with 'No module named pip'"
                       if python_m else "the shell finds a pip outside the venv (the system pip in python:* "
                       "images), which installs into the system Python: the venv's python never sees the packages")
        edit = replace_in_lines(facts, step.ins.start_line, step.ins.end_line,
                                re.compile(r"(?<![\w/.-])(?:python3?(?:\.\d+)? -m pip|pip3?) (install|wheel|download)\b"),
                                lambda m: f"uv pip {m[1]}") if inst.action == "install" else None
        yield Finding(
            rule="WD407", title="pip used in a uv venv that has no pip", severity=Severity.WARNING,
            location=_loc(facts, step.line),
            message=f"`{step.text()}` (line {step.line}, {_where(step.stage)}) runs pip in the venv {hit[0]}, created "
                    f"by `uv venv` without --seed (line {hit[1]}): {consequence}.",
            evidence=(f"uv venv installs no pip unless --seed or UV_VENV_SEED is given",),
            fix=Fix("Use `uv pip install`, or create the venv with `uv venv --seed`", "unsafe" if edit else
                    "display-only", edits=(edit,) if edit else ()),
            data={"stage": step.stage.label, "venv": hit[0], "created_at": hit[1]},
        )


# -- WD408 ---------------------------------------------------------------------------------------


@rule("WD408", "image-cuda-newer-than-driver", title="CUDA in the image newer than the target driver",
      severity=Severity.ERROR,
      examples=(Example(("check", f"{REF}/vllm-gb10.Dockerfile", "--driver", "570.172.08"), True),
                Example(("check", f"{R}/wd405-mismatch.Dockerfile", "--driver", "12.8"), True),
                Example(("check", f"{REF}/vllm-gb10.Dockerfile", "--driver", "580.95.05"), False),
                Example(("check", f"{REF}/vllm-gb10.Dockerfile"), False)))
def image_cuda_newer_than_driver(facts: DockerFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    With `--driver`, compares the CUDA of each stage's base image and of the torch each stage
    installs (local tag, CUDA index, `--torch-backend`) with the CUDA version the driver
    supports. A newer major is an error; a newer minor is reported as info.

    ## Why is this bad?
    A CUDA 13 runtime needs a driver of the 580 branch or newer. On an older driver the
    container toolkit refuses to start an image whose `NVIDIA_REQUIRE_CUDA` it cannot meet, and
    torch's first CUDA call fails with `cudaErrorInsufficientDriver`; torch then reports no GPU.
    Within one major, minor-version compatibility runs a newer runtime, except for PTX JIT of
    code newer than the driver.

    ## Example
    ```dockerfile
    FROM nvidia/cuda:13.0.1-runtime-ubuntu24.04   # --driver 570.172.08 (CUDA 12.8)
    ```

    ## Fix
    Upgrade the driver to the branch the image needs, or build on a base image and a torch
    build of the driver's CUDA (`nvidia/cuda:12.8.1-…`, `cu128`).
    """
    driver = getattr(ctx.target, "driver", None)
    if driver is None:
        return
    from wheeldoc.data import tables

    def judge(cuda: tuple[int, int], line: int, what: str, stage: Stage) -> Iterator[Finding]:
        if cuda[0] > driver.cuda[0]:
            need = tables.driver_floor(cuda)
            yield Finding(
                rule="WD408", title="CUDA in the image newer than the target driver", severity=Severity.ERROR,
                location=_loc(facts, line),
                message=f"{what} is CUDA {cuda_str(cuda)}; the target {driver.named} supports CUDA "
                        f"{driver.cuda_str}. The container does not start or torch's first CUDA call fails with "
                        f"cudaErrorInsufficientDriver.",
                evidence=(f"CUDA {cuda_str(cuda)} needs driver >= {need or '?'}", f"{_where(stage)}"),
                fix=Fix(f"Upgrade the driver to >= {need or 'the CUDA ' + str(cuda[0]) + ' branch'}, or use a CUDA "
                        f"{driver.cuda_str} base image and torch build", "display-only"),
                data={"stage": stage.label, "cuda": cuda_str(cuda), "driver_cuda": driver.cuda_str},
            )
        elif cuda > driver.cuda:
            yield Finding(
                rule="WD408", title="CUDA in the image newer than the target driver", severity=Severity.INFO,
                location=_loc(facts, line),
                message=f"{what} is CUDA {cuda_str(cuda)} on a CUDA {driver.cuda_str} driver: it runs through "
                        f"minor-version compatibility, but PTX newer than the driver cannot be JIT-compiled.",
                evidence=(f"{_where(stage)}",),
                fix=Fix("Prefer a driver of the image's CUDA version", "display-only"),
                data={"stage": stage.label, "cuda": cuda_str(cuda), "driver_cuda": driver.cuda_str},
            )

    for stage in facts.graph.stages:
        base = facts.base_cuda(stage)
        if base is not None and stage.parent is None:
            yield from judge(base[0], stage.line, f"the base image {base[1]} of {_where(stage)}", stage)
    for step in facts.steps:
        t = _torch_cuda(facts, step)
        if t is not None and t.cuda is not None:
            yield from judge(t.cuda, step.line, f"the torch installed on line {step.line} ({t.why})", step.stage)


# -- WD409 ---------------------------------------------------------------------------------------


def _extension_name(facts: DockerFacts, step: Step) -> str | None:
    """The known CUDA extension a build compiles. When the command names what it builds from source
    (a VCS URL, a local path, an sdist, an editable), that is the project compiled: a bare name
    beside it comes from the index like any dependency (a wheel where one is published), unless
    `--no-binary` asks for source."""
    inst = step.install
    names = facts.env.cuda_extensions
    specs = _source_specs(inst) if inst else step.argv
    for spec in specs:
        base = spec.split("#egg=")[-1].split("@")[0].rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
        n = normalize(re.split(r"[=<>!~\[ ]", base, maxsplit=1)[0])
        if n in names:
            return n
    return None


def _source_specs(inst) -> tuple[str, ...]:
    """What an install compiles, as far as its words say: the specs it builds from source (a VCS
    URL, a local path, an sdist, an editable) and those `--no-binary` names (`:all:`: every one); when
    it names none of these, every spec (a `--no-build-isolation` build of a name from the index)."""
    specs = inst.packages + inst.editables
    binary = {normalize(n) for v in inst.values("--no-binary") for n in v.split(",")}
    if ":all:" in binary:
        return specs
    sourced = tuple(p for p in inst.packages if _from_source(p) or normalize(re.split(r"[=<>!~\[ @;]", p, 1)[0]) in binary)
    return sourced + inst.editables or specs


def _from_source(spec: str) -> bool:
    return (spec.startswith((".", "/", "~", "git+")) or "@ git+" in spec or "@git+" in spec
            or spec.endswith((".tar.gz", ".zip", ".tar.bz2", ".tgz")))


@rule("WD409", "cuda-build-without-arch-list", title="CUDA extension built without an architecture list",
      severity=Severity.WARNING, fix="unsafe",
      examples=(Example(("check", f"{R}/wd409-no-arch-list.Dockerfile"), True),
                Example(("check", f"{D}/pytorch-source-build.Dockerfile"), False),
                Example(("check", f"{REF}/vllm-gb10.Dockerfile"), False)))
def cuda_build_without_arch_list(facts: DockerFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Finds a command that compiles a torch CUDA extension (a source install of flash-attn,
    FlashInfer, xformers, vLLM, apex, mamba-ssm, …, or a `--no-build-isolation` source build in
    a Dockerfile that installs torch) while no `TORCH_CUDA_ARCH_LIST` (nor
    `CMAKE_CUDA_ARCHITECTURES` / `CUDAARCHS`) is in effect and no other stage sets one (that
    is WD401's case). A RUN that asks for a GPU (`RUN --device=…`) is left alone, and so is a base
    image that sets the list (NGC PyTorch does; its value is not published, so it counts as set);
    a base image the table does not know may set it (jetson-containers' torch images do): an info
    there, never more; a local project whose setup.py and pyproject.toml (read from the build
    context) name no extension or native build tool compiles nothing; and a project that compiles CUDA code only with FORCE_CUDA=1 or a visible GPU (detectron2,
    torch-scatter, torch-sparse) unless FORCE_CUDA=1 (or FORCE_ONLY_CUDA=1) is in effect. The project compiled is the one the command builds from
    source (a VCS URL, a local path, an sdist, an editable); a bare name beside it comes from the
    index like any dependency, unless `--no-binary` asks for source.

    ## Why is this bad?
    Without the variable, torch.utils.cpp_extension compiles for the GPUs it can see, and
    `docker build` shows it none: torch 2.13 then fails on an empty list (`arch_list[-1] +=
    '+PTX'` raises IndexError), and projects with their own defaults build for architectures
    that may not include yours. The same build on a GPU workstation compiles for that one GPU
    only.

    ## Example
    ```dockerfile
    RUN pip install --no-build-isolation git+https://github.com/Dao-AILab/flash-attention.git
    ```

    ## Fix
    Set the list for the GPUs the image must run on, e.g. `ENV TORCH_CUDA_ARCH_LIST="9.0;12.0;12.1"`
    after the stage's FROM (with `--gpu`, the edit adds that GPU's architecture; unsafe).
    """
    gpu = getattr(ctx.target, "gpu", None)
    builds = _extension_builds()
    for step in facts.steps:
        if step.build is None or not _no_gpu_during_build(step):
            continue
        if step.install is not None and step.install.action not in ("install", "pip install", "wheel", "tool install",
                                                                    "add"):
            continue
        name = _build_project(facts, step)
        known = builds.get(name or "")
        if known is not None and known["arch_source"] == "forced-cuda-only":
            forced = (facts.var(step, n) for n in ("FORCE_CUDA", "FORCE_ONLY_CUDA"))
            if not any(v is not None and (v.value or "").strip("\"'") == "1" for v in forced):
                continue  # no GPU during docker build and no FORCE_CUDA=1: it compiles no CUDA code
        elif known is not None and known["arch_source"] != "torch-default":
            continue  # the project chooses its own architectures, or compiles no CUDA code
        if _cuda_build_skipped(step) or (known is None and _compiles_nothing(facts, step)):
            continue  # switched off, or a local project whose setup.py / pyproject.toml name no native build
        evidence = _cuda_build_evidence(facts, step)
        switch = any(e.startswith("switch") for e in evidence)
        if known is None and not switch and not (step.install is not None and step.install.no_build_isolation
                                                 and facts.uses_torch):
            continue  # nothing says this build compiles CUDA code against torch
        if any(facts.var(step, n) is not None for n in ("TORCH_CUDA_ARCH_LIST", "CMAKE_CUDA_ARCHITECTURES",
                                                        "CUDAARCHS", "FLASHINFER_CUDA_ARCH_LIST")):
            continue
        if any(facts.graph.setters(n) for n in ("TORCH_CUDA_ARCH_LIST", "CMAKE_CUDA_ARCHITECTURES", "CUDAARCHS")):
            continue  # set elsewhere: WD401
        root = facts.graph.root(step.stage)
        if root.base_unknown:
            continue  # the base image may set TORCH_CUDA_ARCH_LIST
        img = facts.base_image(root.base)
        if img is not None and any(n in img.env and img.env[n] != "" for n in ("TORCH_CUDA_ARCH_LIST",
                                                                               "CMAKE_CUDA_ARCHITECTURES", "CUDAARCHS")):
            continue  # the base image sets it (its config with `--pull-base`, or the table; a value not known is set)
        # how sure: a project known to leave the list to torch, or an explicit CUDA build switch
        sure = known is not None or any(e.startswith("switch") for e in evidence)
        why_sure = (f"{name} builds through torch.utils.cpp_extension ({known['source']})" if known else
                    "; ".join(evidence) if evidence else "a --no-build-isolation source build in a file that "
                    "installs torch: it may compile CUDA code")
        if img is None and sure:
            sure = False  # a base the table does not know may set the list (jetson-containers' torch images do)
            why_sure += f"; but the base image {root.base} is not in the base-image table and may set it"
        elif img is not None and not img.env_complete and sure:
            sure = False  # the table knows the image's torch, not its whole ENV
            why_sure += f"; but the base-image table does not know all the ENV of {root.base}, which may set it"
        severity = Severity.WARNING if sure else Severity.INFO
        confidence = "high" if sure else "low"
        edit = None
        if gpu is not None:
            edit = insert_after_from(facts, step.stage, f'ENV TORCH_CUDA_ARCH_LIST="{gpu.cc}"')
        yield Finding(
            rule="WD409", title="CUDA extension built without an architecture list", severity=severity,
            location=_loc(facts, step.line),
            message=f"`{step.text()}` (line {step.line}, {_where(step.stage)}) compiles "
                    f"{name or 'a torch extension'} ({step.build}) with no TORCH_CUDA_ARCH_LIST: torch picks the "
                    f"architectures of the GPUs it sees, and `docker build` shows it none (confidence {confidence}: "
                    f"{why_sure}).",
            evidence=(f"FROM line {from_line(facts, step.stage)}", f"confidence {confidence}: {why_sure}"),
            fix=Fix("Set TORCH_CUDA_ARCH_LIST for the GPUs the image targets" + (f" ({gpu.cc} for {gpu.name})"
                                                                                 if gpu else ""),
                    "unsafe" if edit else "display-only", edits=(edit,) if edit else ()),
            data={"stage": step.stage.label, "build": step.build, "project": name, "confidence": confidence,
                  "evidence": list(evidence)},
        )


_SWITCH = re.compile(r"^(?:FORCE_CUDA|BUILD_EXT|[A-Z0-9_]*_BUILD_CUDA|[A-Z0-9_]*CUDA_EXT[A-Z0-9_]*|WITH_CUDA|USE_CUDA)$")


@lru_cache(maxsize=1)
def _extension_builds() -> dict:
    import json
    from pathlib import Path

    import wheeldoc.data as data

    return json.loads((Path(data.__file__).parent / "extension_builds.json").read_text())["projects"]


def _url_project(spec: str) -> tuple[str, bool]:
    """(the project a URL spec names, by its repository or file name; whether it names a ref):
    `git+https://github.com/org/vllm.git@v0.9.1#egg=vllm` -> ("vllm", True)."""
    path = spec.split(" @ ", 1)[-1].split("#", 1)[0].removeprefix("git+").split("://", 1)[-1]
    at_ref = "@" in path.split("/", 1)[-1]
    if at_ref:
        path = path.rsplit("@", 1)[0]
    name = normalize(path.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git"))
    return normalize(re.split(r"[=<>!~\[ ]", name, 1)[0]), at_ref


def _build_project(facts: DockerFacts, step: Step) -> str | None:
    """The project a build compiles: a named package, a VCS URL or a clone in the same RUN."""
    from wheeldoc.dockerfile import torch_state as ts

    name = _extension_name(facts, step)
    if name is not None:
        return name
    inst = step.install
    builds = _extension_builds()
    for spec in _source_specs(inst) if inst else ():
        if spec.startswith((".", "/")):
            g = ts._git_project(step, spec, facts)
            if g is not None:
                return normalize(g)
            continue
        n = _url_project(spec)[0]
        if n in builds:
            return n
    if step.argv and re.match(r"python[0-9.]*$", step.argv[0].rsplit("/", 1)[-1]):
        for c in ts._commands_before(step):
            if c.argv and c.argv[0] == "cd" and len(c.argv) > 1:
                n = normalize(c.argv[1].rstrip("/").rsplit("/", 1)[-1])
                if n in builds:
                    return n
    return None


def _build_env_torch(facts: DockerFacts, step: Step):
    """The torch an isolated source build of a repository's default branch compiles against, where
    the extension table knows the torch its [build-system] requires (causal-conv1d, mamba): PyPI's
    newest it admits (torch_state.PypiTorch), whatever torch the image has."""
    from wheeldoc.dockerfile import torch_state as ts

    inst = step.install
    if inst is None or inst.no_build_isolation:
        return None
    builds = _extension_builds()
    for spec in _source_specs(inst):
        if spec.startswith((".", "/")):
            g = ts.git_clone(step, spec, facts)
            name, at_ref = (normalize(g[0]), g[1]) if g else (None, True)
        elif "git+" in spec:
            name, at_ref = _url_project(spec)
        else:
            continue
        known = builds.get(name or "", {}).get("build_torch")
        if known is None or at_ref:
            continue
        forced = known.get("forced_by")
        if forced and _env_value(facts, step, forced) != "TRUE":
            continue  # its setup.py fetches a prebuilt wheel unless forced: whether one fits is not known
        return ts.build_env_torch(facts, step, known["spec"], f"{spec} (the default branch of {name}: "
                                  f"[build-system] requires torch{known['spec']}, {known['source'].split(' ')[0]})")
    return None


def _env_value(facts: DockerFacts, step: Step, name: str) -> str | None:
    """The value of an environment variable for a command: set on the command (`X=1 pip …`,
    `export X=1` earlier in the RUN) or by ENV/ARG in the stage chain."""
    here = step.command.env()
    if name in here:
        return here[name]
    bound = facts.var(step, name)
    return bound.value if bound is not None else None


def _compiles_native(facts: DockerFacts, step: Step, nvcc: bool = True) -> bool:
    """Whether a source build compiles native code, on the evidence WD409 takes: a known CUDA
    extension, a CUDA build switch, nvcc in the base image, or a `--no-build-isolation` build in
    a file that installs torch (a pure-Python `git+` install compiles nothing, nor does a local
    project whose setup.py and pyproject.toml in the build context name no native build).
    `nvcc=False`: the base image's nvcc alone is not enough (a local project whose setup.py or
    pyproject.toml in the build context names a CUDA build makes it so)."""
    if _extension_name(facts, step) is not None or _build_project(facts, step) in _extension_builds():
        return True
    context = _context_native(facts, step)
    if context is False:
        return False  # a local project whose setup.py and pyproject.toml name no native build
    if any(nvcc or context == "cuda" or e.startswith("switch") for e in _cuda_build_evidence(facts, step)):
        return True
    return step.install is not None and step.install.no_build_isolation and facts.uses_torch


_NATIVE_BUILD = re.compile(r"ext_modules|Extension\b|cpp_extension|build_ext|cmake|CMake|meson|scikit[-_]build|"
                           r"setuptools[-_]rust|maturin|nvcc|\.cu\b|pybind11|cython|Cython")
_CUDA_BUILD = re.compile(r"CUDAExtension|cpp_extension|nvcc|\.cu\b|CMAKE_CUDA|LANGUAGES[^)\n]*CUDA")


def _compiles_nothing(facts: DockerFacts, step: Step) -> bool:
    """A local project (`pip install -e .`, `pip install ./pkg`) whose setup.py and pyproject.toml,
    read from the build context, name no extension module or native build tool: a pure-Python
    package, it compiles nothing. False when either file cannot be read, or the install builds
    anything else (a VCS URL, an sdist, `--no-binary`)."""
    return _context_native(facts, step) is False


def _context_native(facts: DockerFacts, step: Step) -> bool | str | None:
    """What the build context says of a local project's native build: "cuda" when a setup.py or
    pyproject.toml it installs names a CUDA build, True for another native build, False when every
    one is read and none does, None when not known (a file not readable here, or the install builds
    anything else)."""
    memo: dict[int, bool | str | None] = facts.__dict__.setdefault("_context_native", {})
    if step.index not in memo:
        memo[step.index] = _reads_native_build(facts, step)
    return memo[step.index]


def _reads_native_build(facts: DockerFacts, step: Step) -> bool | str | None:
    inst = step.install
    if inst is None or not (inst.packages or inst.editables):
        return None
    from wheeldoc.dockerfile.context import split_extras

    native: bool | str = False
    unknown = False
    for spec in (*inst.packages, *inst.editables):
        if spec.endswith(".whl") or not spec.startswith((".", "/")):
            unknown = True
            continue
        root = facts.abs_path(step.ins, split_extras(spec)[0])
        if root is None:
            unknown = True
            continue
        texts = [facts.file_text(step, posixpath.join(root, name)) for name in ("setup.py", "pyproject.toml")]
        read = [t[0] for t in texts if t is not None and t[0] is not None]
        if any(_CUDA_BUILD.search(text) for text in read):
            native = "cuda"
        elif any(_NATIVE_BUILD.search(text) for text in read):
            native = native or True
        elif any(t is not None and t[0] is None for t in texts) or not read:
            unknown = True  # copied in but not readable here, or neither file known
    return native if native else None if unknown else False


def _cuda_build_evidence(facts: DockerFacts, step: Step) -> tuple[str, ...]:
    """What in the file says this build compiles CUDA code."""
    out = []
    for k, v in (*step.command.assignments, *step.command.exported):
        if _SWITCH.match(k) and v.strip("\"'").lower() in ("1", "true", "on", "yes"):
            out.append(f"switch {k}={v}")
    if "--cuda_ext" in " ".join(step.argv):
        out.append("switch --cuda_ext")
    root = facts.graph.root(step.stage)
    img = None if root.base_unknown else facts.base_image(root.base)
    if img is not None and img.nvcc:
        out.append(f"the base image {root.base} has nvcc")
    return tuple(out)

