"""Which torch an image has before each install, and whether the install keeps it (WD403).

The installer's rule: an installed torch stays while every requirement of the new install
admits it; a requirement that does not (vLLM pins `torch==X.Y.Z` in every release) makes pip or
uv replace it with the torch the index serves, without an error. Nothing but `--no-deps`, an
override (uv) or a constraint (pip `-c`, `PIP_CONSTRAINT`; uv `-c`, `UV_CONSTRAINT`) holding torch
stops that. An earlier CUDA torch is therefore no protection; it is what gets replaced.

Facts come from the Dockerfile (pins, uninstalls, indexes), the base-image table and the
torch-pin table (`wheeldoc.data.base_images`); what they do not say stays unknown.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from wheeldoc.dockerfile.facts import DockerFacts, Step, normalize

_WHEEL = re.compile(r"^([A-Za-z0-9_.]+)-(\d[^-]*)-")
_PIN = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(==|===)\s*([^\s;,]+)\s*$")
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)$")


# Projects whose source tree pins torch exactly too (not only their PyPI wheels): vLLM's
# requirements/cuda.txt holds `torch==X.Y.Z` (its use_existing_torch.py exists to strip it).
SOURCE_PINS_EXACT = frozenset({"vllm"})


@dataclass(frozen=True)
class TorchState:
    """The torch in the image at a step. `present` None: the base image is unknown."""

    present: bool | None
    version: str | None = None  # "2.5.1+cu124", "2.5.1"
    prerelease: bool | None = None
    where: str = ""  # "the base image vllm/vllm-openai:v0.7.3 (vllm==0.7.3 pins torch==2.5.1)", "line 9"
    constraint: str | None = None  # a pip constraint of the base that pins it (NGC)
    ships: frozenset[str] = frozenset()  # packages the base image installed (vllm in vllm-openai)


@dataclass(frozen=True)
class Requirement:
    """What an install asks of torch: a specifier from the pin table, or only that the package
    pins an exact torch in every release (`exact`)."""

    package: str
    version: str | None
    spec: str | None
    exact: bool
    newest: tuple[str, str] | None  # (newest release in the table, its torch pin) for an unversioned install
    what: str  # as written
    source: str = "its wheel METADATA on PyPI, wheeldoc/data/torch_pins.json"


def _uninstalls_torch(step: Step) -> bool:
    a = [x for x in step.argv]
    if "uninstall" not in a:
        return False
    k = a.index("uninstall")
    return any(x == "torch" for x in a[k + 1:])


def _base_state(facts: DockerFacts, step: Step) -> TorchState:
    root = facts.graph.root(step.stage)
    if root.base_unknown or root.is_scratch:
        return TorchState(None if root.base_unknown else False)
    if root.base.lower() in {s.name.lower() for s in facts.graph.stages if s.name}:
        return TorchState(None)
    img = facts.base_image(root.base)
    if img is None:
        return TorchState(None, where=f"the base image {root.base} (not in the base-image table)")
    if not img.torch_known:
        return TorchState(None, where=f"the base image {root.base} (its config does not say whether it ships torch)")
    ships = frozenset({"vllm"} if img.row == "vllm/vllm-openai" else {"sglang"} if img.row == "lmsysorg/sglang" else ())
    if img.torch is None:
        return TorchState(False, ships=ships)
    return TorchState(True, img.torch.version, img.torch.prerelease,
                      f"the base image {root.base} ({img.torch.via})", img.constraint, ships)


def _named_torch(facts: DockerFacts, step: Step) -> tuple[bool, str | None, bool]:
    """(the install names torch, its version pin, the pin is exact)."""
    inst = step.install
    for spec in inst.packages if inst else ():
        base = posixpath.basename(spec.split("#", 1)[0])
        m = _WHEEL.match(base) if base.endswith(".whl") else None
        if m and normalize(m[1]) == "torch":
            return True, m[2], True
        n = _NAME.match(spec)
        if n and normalize(n[1]) == "torch" and "/" not in spec:
            p = _PIN.match(spec)
            return True, (p[3] if p else None), bool(p)
    return False, None, False


def state_before(facts: DockerFacts, step: Step) -> TorchState:
    """The torch in the image when `step` runs (stage chain, base image first)."""
    state = _base_state(facts, step)
    chain = {s.index for s in facts.chain(step.stage)}
    for s in facts.steps[: step.index]:
        if s.stage.index not in chain:
            continue
        if _uninstalls_torch(s):
            state = TorchState(False, where=f"uninstalled on line {s.line}", ships=state.ships)
            continue
        if s.install is None or not s.installs_packages:
            continue
        named, version, exact = _named_torch(facts, s)
        if named:
            state = TorchState(True, version if exact else None, False, f"installed on line {s.line}",
                               None, state.ships)
            continue
        if s.install.has("--no-deps") or protected(facts, s):
            continue
        needs, unknown = facts.torch_needs(s)
        if not state.present and (needs or unknown):
            # torch-dependent packages (or wheels of unknown content) brought a torch: which one is not known
            state = TorchState(True, None, None, f"brought in on line {s.line} by {(needs + unknown)[0]}", None,
                               state.ships)
        for req in requirements(facts, s, state):
            if state.present and admitted(req, state) is False:
                v = req.spec[2:] if req.spec and req.spec.startswith("==") and "," not in req.spec else None
                state = TorchState(True, v, False, f"put there on line {s.line} by {req.what}", None, state.ships)
            elif state.present is False and req.spec and req.spec.startswith("==") and "," not in req.spec:
                state = TorchState(True, req.spec[2:], False, f"put there on line {s.line} by {req.what}", None,
                                   state.ships)
    return state


def protected(facts: DockerFacts, step: Step) -> str | None:
    """What holds torch in this install: an override or constraint naming torch (or one whose
    contents are not known), else None."""
    for t in facts.torch_sources(step):
        if t.kind.startswith(("override", "constraint")):
            return t.why
    return None


def _git_project(step: Step, spec: str) -> str | None:
    """The project a local path installs when the same RUN cloned it: `git clone …/vllm.git && cd vllm
    && pip install -e .`."""
    cwd = None
    clones: dict[str, str] = {}
    for c in _commands_before(step):
        argv = c.argv
        if len(argv) >= 3 and argv[0] == "git" and argv[1] == "clone":
            pos = [a for a in argv[2:] if not a.startswith("-")]
            if pos:
                url = pos[0]
                d = pos[1] if len(pos) > 1 else posixpath.basename(url.rstrip("/")).removesuffix(".git")
                clones[d.rstrip("/")] = posixpath.basename(url.rstrip("/")).removesuffix(".git")
        elif argv and argv[0] == "cd" and len(argv) >= 2:
            cwd = argv[1].rstrip("/")
    if spec in (".", "./") and cwd is not None:
        return clones.get(cwd) or clones.get(posixpath.basename(cwd))
    return None


def _commands_before(step: Step):
    from wheeldoc.dockerfile.shell import commands_in_run

    for c in commands_in_run(step.ins):
        if c.line > step.command.line or c is step.command or c == step.command:
            break
        yield c


def requirements(facts: DockerFacts, step: Step, state: TorchState | None = None) -> list[Requirement]:
    """The torch requirements an install brings, as far as the tables know them."""
    from wheeldoc.data.base_images import torch_pins, torch_requirement

    inst = step.install
    if inst is None:
        return []
    pins = torch_pins()
    upgrade = any(inst.has(f) for f in ("--upgrade", "--force-reinstall", "--reinstall"))
    out: list[Requirement] = []
    for spec in inst.packages + inst.editables:
        base = posixpath.basename(spec.split("#", 1)[0].split("?", 1)[0])
        name = version = None
        vcs = False
        if base.endswith(".whl") and "://" not in spec:
            local = context_wheel(facts, step, spec)
            if local is not None:
                got = _wheel_requirement(local)
                if got is not None:
                    out.append(Requirement(got[0], got[1], got[2], got[2].startswith("=="), None, spec,
                                           f"the METADATA of {local.name} in the build context"))
                    continue
        if base.endswith(".whl") and (m := _WHEEL.match(base)):
            name, version = normalize(m[1]), m[2].split("+", 1)[0]
        elif "://" in spec or spec.startswith("git+"):
            url = spec.split(" @ ", 1)[-1].strip()
            url = url.split("#", 1)[0].removeprefix("git+")
            path = url.split("://", 1)[-1]
            ref = None
            if "@" in path.split("/", 1)[-1]:
                path, ref = path.rsplit("@", 1)
            name = normalize(posixpath.basename(path.rstrip("/")).removesuffix(".git"))
            if spec.startswith("git+") or ".git" in url:
                vcs = ref is None
            else:
                continue  # an archive URL: its version is not known here
        elif spec.startswith((".", "/")):
            g = _git_project(step, spec)
            if g is None:
                continue
            name, vcs = normalize(g), True
        else:
            n = _NAME.match(spec)
            if not n:
                continue
            name = normalize(n[1])
            p = _PIN.match(spec)
            version = p[3] if p else None
        if name not in pins:
            continue
        if vcs or ((("://" in spec or spec.startswith("git+")) and not base.endswith(".whl"))):
            if name not in SOURCE_PINS_EXACT:
                continue  # a source build's requirement comes from its setup, not from the PyPI wheel's pin
            if not vcs:
                continue  # a tagged checkout: which release it matches is not known here
        if name in ("torchvision", "torchaudio") and version is None:
            continue  # unpinned: follows the installed torch
        if version is None and not vcs and state is not None and name in state.ships and not upgrade:
            continue  # already in the image and not upgraded: pip/uv keep it
        spec_t, exact = torch_requirement(name, version)
        newest = None
        if version is None:
            rel = pins[name]["releases"]
            if rel:
                from packaging.version import InvalidVersion, Version

                def key(v):
                    try:
                        return Version(v)
                    except InvalidVersion:
                        return Version("0")
                best = max((v for v in rel if not key(v).is_prerelease), key=key, default=None)
                if best is not None:
                    newest = (best, ",".join(rel[best]["torch"]))
        out.append(Requirement(name, version, spec_t, exact, newest, spec))
    return out


def admitted(req: Requirement, state: TorchState) -> bool | None:
    """Does the requirement admit the torch already there? None when not known."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    if req.spec is not None:
        if req.spec == "":
            return True
        if state.version:
            try:
                return SpecifierSet(req.spec).contains(Version(state.version), prereleases=True)
            except (InvalidSpecifier, InvalidVersion):
                return None
        if state.prerelease and req.spec.startswith("==") and "a0" not in req.spec:
            return False
        return None
    # no version asked for: pip and uv take the newest release and change torch to fit it
    if req.newest and req.newest[1]:
        newest = req.newest[1]
        if state.version:
            try:
                if not SpecifierSet(newest).contains(Version(state.version), prereleases=True):
                    base = Version(state.version.split("+")[0])
                    floor = min((Version(x.lstrip("=<>!~")) for x in newest.split(",") if x.startswith(("==", ">"))),
                                default=None)
                    if floor is not None and base < floor:
                        return False  # older than the newest release asks for; later releases do not go back
            except (InvalidSpecifier, InvalidVersion):
                return None
        elif state.prerelease and newest.startswith("==") and "," not in newest:
            return False  # an exact release pin never admits a pre-release build
    elif req.exact and state.prerelease:
        return False
    return None
    return None


def context_wheel(facts: DockerFacts, step: Step, spec: str):
    """The wheel file in the build context that `spec` (a path in the image, `*` allowed in the
    file name) is, when a COPY/ADD from the context put it there; else None."""
    import fnmatch
    from pathlib import Path

    ab = facts.abs_path(step.ins, spec)
    if ab is None:
        return None
    chain = [st.index for st in facts.chain(step.stage)]
    order = (step.ins.index, step.index)
    for idx in reversed(chain):
        for f in reversed(facts._writes[idx]):
            if f.context is None or (idx == step.stage.index and f.order >= order):
                continue
            if f.path == ab:
                rel = f.context
            elif f.is_dir and ab.startswith(f.path.rstrip("/") + "/"):
                rel = posixpath.join(f.context, posixpath.relpath(ab, f.path))
            else:
                continue
            rel = posixpath.normpath(rel)
            if rel.startswith("..") or posixpath.isabs(rel):
                return None
            local = Path(facts.context) / rel
            if any(c in local.name for c in "*?["):
                try:
                    hits = sorted(p for p in local.parent.iterdir() if fnmatch.fnmatch(p.name, local.name))
                except OSError:
                    return None
                return hits[0] if len(hits) == 1 else None
            return local if local.is_file() else None
    return None


def _wheel_requirement(wheel) -> tuple[str, str | None, str] | None:
    """(name, version, torch specifier) from a local wheel's file name and METADATA; the
    specifier is "" when the wheel does not require torch."""
    from wheeldoc.binary.wheelmeta import requires_dist

    m = _WHEEL.match(wheel.name)
    if not m:
        return None
    spec = ""
    for line in requires_dist(wheel):
        n = _NAME.match(line)
        if n and normalize(n[1]) == "torch" and "extra ==" not in line:
            spec = n[2].split(";", 1)[0].strip().strip("()").replace(" ", "")
            break
    return normalize(m[1]), m[2].split("+", 1)[0], spec
