"""Which torch an image has before each install, and whether the install keeps it (WD403).

The installer's rule: an installed torch stays while every requirement of the new install
admits it; a requirement that does not (vLLM pins `torch==X.Y.Z` in every release) makes pip or
uv replace it with the torch the index serves, without an error. Nothing but `--no-deps`, an
override (uv) or a constraint (pip `-c`, `PIP_CONSTRAINT`; uv `-c`, `UV_CONSTRAINT`) holding torch
stops that. An earlier CUDA torch is therefore no protection; it is what gets replaced.

Facts come from the Dockerfile (pins, uninstalls, indexes), the build context (requirements
files, a project's pyproject.toml, wheels: `context.py`), the base-image table and the torch-pin
table (`wheeldoc.data.base_images`); what they do not say stays unknown.
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


# a base image name that suggests a torch inside (for a base the table does not know)
TORCH_BASE_HINT = re.compile(r"torch|vllm|sglang|nemo|deepspeed|lightning|huggingface|diffusers|transformers",
                             re.IGNORECASE)


# a base image name that says it is a plain OS, CUDA, Python or conda image
PLAIN_BASE_HINT = re.compile(r"cuda|python|py\d|ubuntu|debian|ubi\d|rocky|centos|alma|fedora|amazonlinux|alpine|"
                             r"manylinux|miniconda|mambaforge|miniforge|micromamba|base", re.IGNORECASE)


# torch's companions: installed with torch more often than not, so on an image whose package list
# is not known an unpinned install of one of them may be a no-op
COMPANIONS = frozenset({"torchvision", "torchaudio"})


@dataclass(frozen=True)
class TorchState:
    """The torch in the image at a step. `present` None: the base image is unknown."""

    present: bool | None
    version: str | None = None  # "2.5.1+cu124", "2.5.1"
    prerelease: bool | None = None
    where: str = ""  # "the base image vllm/vllm-openai:v0.7.3 (vllm==0.7.3 pins torch==2.5.1)", "line 9"
    constraint: str | None = None  # a pip constraint of the base that pins it (NGC)
    ships: frozenset[str] = frozenset()  # packages the base image installed (vllm in vllm-openai)
    lowest: str | None = None  # version not known, but at least this ("2.4.0.dev0")
    highest: str | None = None  # … and of this series at most ("2.6")
    ships_known: bool = True  # False: the base's other packages are not known (NGC)
    installed: frozenset[str] = frozenset()  # packages earlier installs of the stage chain named
    others: bool = False  # an earlier install brought packages whose dependencies are not known here
    pypi: "PypiTorch | None" = None  # the torch an install resolved from PyPI, when its CUDA is known
    # an unpinned torch on an image whose Python is not known: per Python, the newest release the
    # table knows for it ((python, version), …): the install took that release or a later one
    by_python: tuple[tuple[str, str], ...] = ()
    shipped: tuple[tuple[str, str], ...] = ()  # (package, version) the base image ships, where read (NGC vLLM's vllm)


@dataclass(frozen=True)
class PypiTorch:
    """The torch an install takes from PyPI when a requirement moves (or brings) it: the newest
    release on PyPI that every requirement admits, for the image's Python, and the CUDA major of
    PyPI's wheel of that series (wheeldoc/data/torch.json)."""

    line: int
    version: str  # "2.14.1"
    cuda_major: int | None  # None: which build is not known (another index may serve it; version_only)
    why: str  # "ont-bonito 1.1.0 requires torch>=2.9,<3: pip takes PyPI's newest, torch 2.14.1 (CUDA 13 wheels)"
    certain: bool  # False: assumed (the newest release of an unpinned package, an unknown Python, …)
    oldest: str | None = None  # where the image's Python is not known: the oldest of the picks per Python


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
    source: str = "its wheel METADATA on PyPI, wheeldoc/data/torch_pins.json.gz"
    sure: bool = True  # False: the package may already be in the image, and then the install keeps it
    candidates: tuple = ()  # dependents.Candidate: the releases pip/uv could pick, per Python
    python: str | None = None  # the image's Python, where the file says it
    source_tree: str | None = None  # "a clone of vllm's default branch": built from source, newer than any release
    tool: str | None = None  # the installer ("pip", "uv"): they differ on a torch requirement through a dependency
    per_machine: tuple = ()  # where the platform is not known: (machine, candidates) for linux x86_64 and aarch64


def _uninstalls_torch(step: Step) -> bool:
    a = [x for x in step.argv]
    if "uninstall" not in a:
        return False
    k = a.index("uninstall")
    return any(x == "torch" for x in a[k + 1:])


def _base_state(facts: DockerFacts, step: Step) -> TorchState:
    root = facts.graph.root(step.stage)
    if root.base_unknown or root.is_scratch:
        return TorchState(None if root.base_unknown else False, ships_known=not root.base_unknown)
    if root.base.lower() in {s.name.lower() for s in facts.graph.stages if s.name}:
        return TorchState(None, ships_known=False)
    img = facts.base_image(root.base)
    if img is None:
        return TorchState(None, where=f"the base image {root.base} (not in the base-image table)", ships_known=False)
    if not img.torch_known:
        return TorchState(None, where=f"the base image {root.base} (its config does not say whether it ships torch)",
                          ships_known=False)
    ships = img.ships if img.ships is not None else frozenset()
    known = img.ships is not None and img.ships_all
    if img.torch is None:
        return TorchState(False, ships=ships, ships_known=known)
    return TorchState(True, img.torch.version, img.torch.prerelease,
                      f"the base image {root.base} ({img.torch.via})", img.constraint, ships,
                      img.torch.lowest, img.torch.highest_series, known,
                      shipped=tuple(sorted((img.versions or {}).items())))


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
            if p and p[3].endswith(".*"):
                v = p[3][:-2]
                return True, (v if v.count(".") >= 2 else None), v.count(".") >= 2
            return True, (p[3] if p else None), bool(p)
    for f in inst.requirements if inst else ():
        rf = facts.requirements(step, f)
        for r in rf.requirements if rf is not None else ():
            p = _PIN.match(r.line)
            if r.name == "torch" and p:  # a pinned torch in the requirements: chosen on purpose
                return True, p[3].removesuffix(".*"), not p[3].endswith(".*")
    return False, None, False


def _index_last_series(step: Step) -> str | None:
    """The newest torch series the one index of an install serves, where that is a PyTorch CUDA
    variant index (`--index-url …/whl/cu121`, no other index): the series the release matrix lists
    for the variant (cu121: 2.5), wheeldoc/data/torch.json."""
    from wheeldoc.data.base_images import last_series_on
    from wheeldoc.dockerfile.facts import index_variant

    inst = step.install
    urls = inst.values("--index-url") if inst is not None else ()
    if inst is None or len(urls) != 1 or inst.extra_index_urls or inst.find_links:
        return None
    variant = index_variant(urls[0])
    return last_series_on(variant) if variant and variant != "cu?" else None


def _bare_torch(step: Step) -> bool:
    """The install names torch with no version or range at all (`pip install torch torchvision`)."""
    inst = step.install
    return inst is not None and any(
        (n := _NAME.match(spec)) is not None and normalize(n[1]) == "torch" and not n[2].strip() and "/" not in spec
        for spec in inst.packages)


def _named_series(facts: DockerFacts, step: Step) -> str | None:
    """`torch==2.5.*` on the command line: the series ("2.5")."""
    inst = step.install
    for spec in inst.packages if inst else ():
        p = _PIN.match(spec)
        if p and normalize(p[1]) == "torch" and re.fullmatch(r"\d+\.\d+\.\*", p[3]):
            return p[3][:-2]
    return None


def _names(facts: DockerFacts, step: Step) -> tuple[frozenset[str], bool]:
    """(the packages an install names, whether it may also have brought torch's companions:
    a torch-dependent package other than torch, a local path or wheel of unknown content, or a
    requirements file wheeldoc cannot read)."""
    inst = step.install
    if inst is None:
        return frozenset(), False
    names: set[str] = set()
    for spec in inst.packages:
        base = posixpath.basename(spec.split("#", 1)[0])
        m = _WHEEL.match(base) if base.endswith(".whl") else None
        n = _NAME.match(spec) if m is None else None
        if m:
            names.add(normalize(m[1]))
        elif n and "/" not in spec and "://" not in spec:
            names.add(normalize(n[1]))
    needs, unknown = facts.torch_needs(step)
    others = bool(unknown) or bool(inst.editables) or any(facts.requirements(step, f) is None for f in inst.requirements)
    for n in needs:
        name = normalize(re.split(r"[=<>!~;\[ @(]", posixpath.basename(n.split(" (in ")[0]).split("-", 1)[0]
                                  if n.endswith(".whl") else n, maxsplit=1)[0])
        if name not in TORCH_AND_COMPANIONS:
            others = True
    return frozenset(names), others


TORCH_AND_COMPANIONS = COMPANIONS | {"torch"}


def state_before(facts: DockerFacts, step: Step) -> TorchState:
    """The torch in the image when `step` runs (stage chain, base image first). Each step's
    state is kept (`facts` is per file), so a file is folded once, not once per step."""
    memo: dict[int, TorchState] = facts.__dict__.setdefault("_torch_states", {})
    got = memo.get(step.index)
    if got is not None:
        return got
    chain = {s.index for s in facts.chain(step.stage)}
    before = [s for s in facts.steps[: step.index] if s.stage.index in chain]
    start = next((i for i in range(len(before) - 1, -1, -1) if before[i].index in memo), None)
    if start is None:
        state, todo = _base_state(facts, step), before
    else:
        state, todo = memo[before[start].index], before[start:]
    for s in todo:
        memo.setdefault(s.index, state)
        state = _advance(facts, s, state)
    memo[step.index] = state
    return state


def _advance(facts: DockerFacts, s: Step, state: TorchState) -> TorchState:
    """The torch after step `s`, from the torch before it."""
    from dataclasses import replace

    if _uninstalls_torch(s):
        state = replace(state, present=False, version=None, prerelease=None, where=f"uninstalled on line {s.line}",
                        constraint=None, by_python=(), lowest=None, highest=None, pypi=None)
        return state
    if s.install is None and _other_installer_torch(s):
        conda = conda_torch(s)
        if conda is not None:
            version, lowest, highest, named, why = conda
            return replace(state, present=True, version=version, prerelease=False, constraint=None, by_python=(), lowest=lowest,
                           highest=highest, where=f"installed by {s.argv[0]} on line {s.line} ({why})", pypi=None,
                           installed=state.installed | named)
        # conda/mamba put a torch there that the pip model does not follow: from here it is unknown
        return replace(state, present=None, version=None, prerelease=None, constraint=None, by_python=(), lowest=None,
                       highest=None, where=f"installed by {s.argv[0]} on line {s.line} (not followed)", pypi=None,
                       others=True)
    if s.install is None or not s.installs_packages or (s.install.tool == "pip" and s.install.action == "wheel"):
        return state  # `pip wheel` resolves and builds wheels; it installs nothing
    names, others = _names(facts, s)
    after = _advance_install(facts, s, state)  # judged with what was installed before this step
    return replace(after, installed=after.installed | names, others=after.others or others)


def _advance_install(facts: DockerFacts, s: Step, state: TorchState) -> TorchState:
    """The torch after an install, from the torch before it."""
    from dataclasses import replace

    house = wheelhouse_torch(facts, s)
    if house is not None:
        builder, version, got = house
        return replace(state, present=True, version=version, prerelease=False, constraint=None, by_python=(), lowest=None,
                       highest=None, pypi=got if got is not None and got.cuda_major is not None else None,
                       where=f"installed on line {s.line} from the wheels `pip {builder.install.action}` resolved on "
                             f"line {builder.line}")
    named, version, exact = _named_torch(facts, s)
    if named:
        series = _named_series(facts, s) if not exact else None
        # an unpinned torch is the newest release only where none is there yet, or with --upgrade
        # (pip and uv keep an installed torch that satisfies a bare `torch`)
        fresh = state.present is False or (state.present is True and _upgrade(s))
        if version is None and series is None and state.present is True and not fresh and _bare_torch(s):
            return state  # a bare `torch` over one already there: pip and uv keep it, nothing changes
        newest = _unpinned_newest(facts, s, state) if version is None and series is None and fresh else None
        pinned = _pinned_pypi(facts, s, version) if exact and version else None
        by_py: tuple[tuple[str, str], ...] = ()
        if version is None and series is None and newest is None and (fresh or _plain_unknown_base(facts, s, state)):
            by_py = _newest_by_python(facts, s, state)
        where = f"installed on line {s.line}" + (
            f" (unpinned: the newest release the index serves, {newest[0]} or later{newest[1]})" if newest else
            f" (unpinned: the newest release the index serves for the image's Python, not known here: "
            f"{_by_python_words(by_py)})" if by_py else "")
        state = replace(state, present=True, version=version if exact else None, prerelease=False, where=where,
                        constraint=None, lowest=newest[0] if newest else f"{series}.0" if series else None,
                        highest=series or (_index_last_series(s) if newest else None),
                        pypi=newest[2] if newest else pinned, by_python=by_py)
        return state
    if s.install.has("--no-deps") or protected(facts, s):
        return state
    was_present, before = state.present, state
    needs, unknown = facts.torch_needs(s)
    if not state.present and (needs or unknown):
        # torch-dependent packages (or wheels of unknown content) brought a torch: which one is not known
        state = replace(state, present=True, version=None, prerelease=None,
                        where=f"brought in on line {s.line} by {(needs + unknown)[0]}", constraint=None,
                        lowest=None, highest=None)
    reqs = requirements(facts, s, state)
    moved = False
    for req in reqs:
        v = req.spec[2:] if req.spec and req.spec.startswith("==") and "," not in req.spec else None
        if state.present and admitted(req, state) is False and not backtracks(facts, s, state, req):
            moved = True
            state = replace(state, present=True, version=v, prerelease=False, constraint=None, by_python=(), lowest=None,
                            highest=None, where=f"put there on line {s.line} by {req.what}", pypi=None)
        elif state.present is False and v is not None:
            state = replace(state, present=True, version=v, prerelease=False, constraint=None, by_python=(), lowest=None,
                            highest=None, where=f"put there on line {s.line} by {req.what}", pypi=None)
    if state.present is False and any(r.spec or (r.newest and r.newest[1]) for r in reqs):
        state = replace(state, present=True, version=None, prerelease=None, constraint=None, by_python=(), lowest=None,
                        highest=None, where=f"brought in on line {s.line} by {reqs[0].what}")
    if (moved or was_present is False) and state.present and reqs:
        # torch was replaced (or brought) by this install: which build, when PyPI serves it
        got = pypi_torch(facts, s, reqs, before if was_present else None)
        if got is not None:
            state = replace(state, pypi=got)
    elif was_present and reqs and ignores_installed(s):
        got = reinstalled_torch(facts, s, reqs, before)
        if got is not None:
            state = replace(state, present=True, version=got.version, prerelease=False, constraint=None,
                            by_python=(), lowest=None, highest=None, pypi=got,
                            where=f"reinstalled on line {s.line} (--ignore-installed: {got.why})")
    return state


def pip_constraint(facts: DockerFacts, step: Step, state: TorchState) -> str | None:
    """The base image's pip constraint file that pins its torch (NGC's /etc/pip/constraint.txt), for a
    pip install, unless the Dockerfile clears PIP_CONSTRAINT."""
    if step.tool != "pip" or state.constraint is None:
        return None
    v = facts.var(step, "PIP_CONSTRAINT")
    return None if v is not None and not (v.value or "").strip() else state.constraint


def backtracks(facts: DockerFacts, step: Step, state: TorchState, req: Requirement) -> bool:
    """Under the base image's constraint pinning its torch, pip takes an older release of a package
    named without a version, one that admits that torch (where the table has one), instead of
    failing: NGC's `pip install monai` keeps the image's torch."""
    from wheeldoc.data.base_images import torch_pins
    from wheeldoc.dockerfile import dependents

    if pip_constraint(facts, step, state) is None or req.version is not None or req.source_tree is not None \
            or req.package not in torch_pins():
        return False
    python = dependents.image_pythons(facts, step, state)
    return not dependents.admitted_by_none(req.package, state, python, facts.platform(step.stage))


def wheelhouse_torch(facts: DockerFacts, step: Step) -> tuple[Step, str, PypiTorch | None] | None:
    """An install of every wheel a `pip wheel -w DIR` (or `pip download -d DIR`) step put in a folder
    (`pip install /wheels/*`, the folder copied from a builder stage): (that step, the torch release
    among those wheels, how it was chosen). `pip wheel` resolves as if nothing were installed, so the
    folder holds the newest torch its requirements admit (or the one they pin), and installing every
    wheel there installs that torch. None when no such folder is named, it was filled with
    `--no-deps`, or which torch it holds is not known."""
    inst = step.install
    if inst is None or inst.has("--no-deps"):
        return None
    for spec in inst.packages:
        builder = facts.wheelhouse(step, spec)
        if builder is None or builder.install is None:
            continue
        if builder.install.has("--no-deps"):
            return None  # only the named packages' own wheels: their dependencies resolve at this install
        named, version, exact = _named_torch(facts, builder)
        if named:
            return (builder, version, None) if exact and version else None
        reqs = requirements(facts, builder, None)
        if not reqs:
            return None
        got = pypi_torch(facts, builder, reqs, None, fresh=True, version_only=True)
        return (builder, got.version, got) if got is not None else None
    return None


def ignores_installed(step: Step) -> bool:
    """`pip install --ignore-installed …`: what is installed does not count; every requirement,
    torch among the dependencies, is resolved and installed afresh."""
    inst = step.install
    return inst is not None and inst.tool == "pip" and inst.has("--ignore-installed")


def reinstalled_torch(facts: DockerFacts, step: Step, reqs: list, state: TorchState) -> PypiTorch | None:
    """The torch a `--ignore-installed` install puts over the one there: the newest its
    requirements admit on PyPI (pypi_torch), when that is another release than the image's."""
    from packaging.version import InvalidVersion, Version

    reqs = [r for r in reqs if _asks_for_torch(r)]
    if not reqs:
        return None  # nothing installed asks for torch: --ignore-installed does not bring it
    got = pypi_torch(facts, step, reqs, state, fresh=True)
    if got is None:
        return None
    try:
        new = Version(got.version)
        if state.version is not None:
            return None if Version(Version(state.version).public) == Version(new.public) else got
        lo = Version(state.lowest) if state.lowest else None
        hi = tuple(int(x) for x in state.highest.split(".")[:2]) if state.highest else None
    except (InvalidVersion, ValueError):
        return None
    if lo is None and hi is None:
        return None  # the image's torch is not known: whether it changes is not known either
    if (lo is None or lo <= new) and (hi is None or (new.major, new.minor) <= hi):
        return None  # the image's torch may be that release
    return got


def _asks_for_torch(req: Requirement) -> bool:
    """Every release the install may take requires torch, itself or through a table package (a row's
    `torch` lists its Requires-Dist lines: [] is none, which "" from release_torch does not tell apart
    from an unversioned `torch`). False where a release is not in the table."""
    from wheeldoc.data.base_images import torch_pins

    rels = (torch_pins().get(req.package) or {}).get("releases", {})
    versions = {c.release for c in req.candidates} or {req.version or (req.newest or (None,))[0]}
    rows = [rels.get(v) for v in versions]
    return bool(rows) and all(row is not None and (row.get("torch") or row.get("deps")) for row in rows)


def build_env_torch(facts: DockerFacts, step: Step, spec: str, what: str) -> PypiTorch | None:
    """The torch an isolated build environment installs for a build requirement `spec` ("" any):
    PyPI's newest release it admits for the image's Python, of a known CUDA major (None when the
    Python, the index or the platform leaves that open)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    from wheeldoc.data.base_images import torch_pythons
    from wheeldoc.data.torch import series_of, torch_table
    from wheeldoc.dockerfile import dependents

    python = dependents.image_pythons(facts, step, None)
    if not python:
        return None
    pys = (python,) if isinstance(python, str) else tuple(python)
    try:
        wanted = SpecifierSet(spec)
    except InvalidSpecifier:
        return None
    releases = []
    for v, built in torch_pythons().items():
        try:
            ver = Version(v)
        except InvalidVersion:
            continue
        if not ver.is_prerelease and wanted.contains(ver):
            releases.append((ver, v, frozenset(built)))
    releases.sort(reverse=True)
    picks = [next((v for _ver, v, built in releases if p in built), None) for p in pys]
    if not picks or None in picks:
        return None
    table = torch_table().series
    majors = {_pypi_major(facts, step, table.get(series_of(v) or "")) for v in picks}
    if len(majors) != 1 or None in majors or _pypi_decides(facts, step, series_of(min(picks, key=Version)) or "") \
            is not True:
        return None
    major = majors.pop()
    shown = sorted(set(picks), key=Version)
    return PypiTorch(step.line, shown[-1], major, f"line {step.line}: {what} builds in an isolated environment "
                     f"that installs PyPI's newest torch{spec or ' (any version)'}, "
                     f"{' to '.join((shown[0], shown[-1])) if len(shown) > 1 else shown[0]}, whose PyPI wheels "
                     f"are CUDA {major} builds", len(pys) == 1, shown[0])


def _pinned_pypi(facts: DockerFacts, step: Step, version: str) -> PypiTorch | None:
    """`pip install torch==2.14.1` with nothing but PyPI deciding the build: PyPI's wheel of that
    release, whose CUDA major wheeldoc/data/torch.json records per platform (None when another
    index, a local tag or the platform leaves it open)."""
    from wheeldoc.data.torch import series_of, torch_table

    if "+" in version:
        return None  # a local tag: the build is named (torch_sources)
    series = series_of(version) or ""
    if _pypi_decides(facts, step, series) is not True:
        return None
    major = _pypi_major(facts, step, torch_table().series.get(series))
    if major is None:
        return None
    return PypiTorch(step.line, version, major, f"line {step.line}: torch=={version} from PyPI, whose wheels of "
                     f"{series} are CUDA {major} builds", True)


def _unpinned_newest(facts: DockerFacts, step: Step, state: TorchState) -> tuple[str, str, PypiTorch | None] | None:
    """An unpinned `pip install torch`: the install takes the newest release the index serves,
    so a build from now on gets at least the newest final release wheeldoc's table knows for the
    image's Python (for every Python the image may have, the lowest of those). Returns (that
    release, words on the Python, the PyPI build when PyPI serves it: its CUDA major) or None when
    another index decides which releases there are (a PyTorch CUDA index that stopped at an older
    series, a wheel, a path, a local tag)."""
    from wheeldoc.data.torch import series_of, torch_table
    from wheeldoc.dockerfile import dependents

    python = dependents.image_pythons(facts, step, state)
    if not python:
        return None  # every Python (the floor would be years old): per Python, _newest_by_python
    pys = (python,) if isinstance(python, str) else tuple(python)
    newest = _newest_per_python(facts, step, pys)
    if not newest:
        return None
    floor = min(newest.values())
    text, series = str(floor), series_of(str(floor)) or ""
    row = torch_table().series.get(series)
    where = f" for Python {pys[0]}" if len(pys) == 1 else ""
    pypi = None
    major = _pypi_major(facts, step, row) if _pypi_decides(facts, step, series) is True else None
    if major is not None:
        pypi = PypiTorch(step.line, text, major, f"line {step.line}: an unpinned torch takes PyPI's newest, "
                         f"{text} or later{where}, whose PyPI wheels are CUDA {major} builds", False)
    return text, where, pypi


def _newest_per_python(facts: DockerFacts, step: Step, pys: tuple[str, ...]) -> dict:
    """Python -> the newest final torch release the table knows for it (packaging Version), among
    those the install's index serves; {} when the index decides (uv's torch backend, a wheel, a path,
    a local tag, an index whose CUDA variant is not read)."""
    from packaging.version import InvalidVersion, Version

    from wheeldoc.data.base_images import torch_pythons
    from wheeldoc.data.torch import series_of, torch_table
    from wheeldoc.dockerfile.facts import index_variant

    inst = step.install
    if inst is None or any(normalize(_NAME.match(x)[1]) == "torch" and ("/" in x or "://" in x or "+" in x)
                           for x in inst.packages if _NAME.match(x)):
        return {}
    if _pytorch_index_decides(facts, step) and not inst.values("--index-url"):
        return {}  # uv's torch backend picks the index
    table = torch_table().series
    # pip takes the highest version across its indexes (PyPI stays one beside an --extra-index-url);
    # uv takes a package from the first index that has it (an extra index before the default one)
    named = (*inst.values("--index-url"), *(inst.values("--extra-index-url") if inst.tool == "uv" else ()))
    variants = {index_variant(u) for u in named} - {None}
    if "cu?" in variants:
        return {}
    newest: dict[str, Version] = {}
    for v, built in torch_pythons().items():
        try:
            ver = Version(v)
        except InvalidVersion:
            continue
        row = table.get(series_of(v) or "")
        if ver.is_prerelease or (variants and (row is None or not variants <= set(row.cuda))):
            continue  # a PyTorch CUDA index serves the series the release matrix lists for it
        for p in pys:
            if p in built and (p not in newest or ver > newest[p]):
                newest[p] = ver
    return newest


def _plain_unknown_base(facts: DockerFacts, step: Step, state: TorchState) -> bool:
    """The torch before `step` is the base image's, the base is named but not in the table, and its
    name suggests no torch (a CUDA or Python image): an unpinned torch is then taken as installed fresh."""
    if state.present is not None or not state.where.startswith("the base image"):
        return False
    root = facts.graph.root(step.stage)
    if root.base_unknown:
        return False
    name, _, tag = root.base.rsplit("/", 1)[-1].partition(":")
    # a name that says what the image is (an OS, CUDA, Python or conda base), and neither it nor the tag
    # suggests a torch (`axolotl:main-py3.11-cu126-2.7.1` says neither: not taken as plain)
    return bool(PLAIN_BASE_HINT.search(name)) and not TORCH_BASE_HINT.search(name) and not \
        re.search(r"torch|pt-?\d|cu\d{3}-\d+\.\d+", tag, re.IGNORECASE)


def _newest_by_python(facts: DockerFacts, step: Step, state: TorchState) -> tuple[tuple[str, str], ...]:
    """An unpinned torch on an image whose Python is not known: per Python, the newest release the
    table knows for it (the install takes that one or a later one); () where the index decides."""
    from wheeldoc.data.base_images import PYTHONS
    from wheeldoc.dockerfile import dependents

    if dependents.image_pythons(facts, step, state):
        return ()
    newest = _newest_per_python(facts, step, tuple(PYTHONS))
    return tuple((p, str(newest[p])) for p in PYTHONS if p in newest)


def _by_python_words(by_py: tuple[tuple[str, str], ...]) -> str:
    """"Python 3.9: 2.8.0 or later; 3.10 to 3.14: 2.15.0 or later"."""
    groups: list[tuple[list[str], str]] = []
    for p, v in by_py:
        if groups and groups[-1][1] == v:
            groups[-1][0].append(p)
        else:
            groups.append(([p], v))
    return "Python " + "; ".join((pys[0] if len(pys) == 1 else f"{pys[0]} to {pys[-1]}") + f": {v} or later"
                                 for pys, v in groups)


def _pypi_major(facts: DockerFacts, step: Step, row) -> int | None:
    """The CUDA major of PyPI's wheels of a torch series (its `torch.json` row) on the image's
    platform, or on both linux platforms when the file does not say; None when not known, a CPU
    build, or the platforms disagree."""
    if row is None:
        return None
    machine = facts.platform(step.stage)
    majors = set()
    for plat in (f"linux-{machine}",) if machine else ("linux-x86_64", "linux-aarch64"):
        known, major = row.pypi_cuda_major(plat)
        if not known:
            return None
        majors.add(major)
    return majors.pop() if len(majors) == 1 else None


def _pypi_decides(facts: DockerFacts, step: Step, series: str) -> bool | None:
    """Does PyPI serve the torch of `series` to this install? True when nothing else decides the
    build: no pin with a local tag, override, constraint, --torch-backend, --find-links or other
    index; with pip, an `--extra-index-url` of a PyTorch CUDA index still leaves PyPI's build when
    that index holds no release of the series (pip takes the highest version across its indexes,
    and the CUDA variant index serves only the series the PyTorch release matrix lists for it,
    wheeldoc/data/torch.json). None: not known."""
    from wheeldoc.data.torch import torch_table
    from wheeldoc.dockerfile.facts import variant_cuda

    inst = step.install
    if inst is None or _pip_configured(facts, step):
        return None
    table = torch_table().series
    for src in facts.torch_sources(step):
        if src.kind != "index" or inst.tool != "pip" or not src.why.startswith("--extra-index-url "):
            return None
        cuda = variant_cuda(src.variant or "")
        if cuda is None:
            return None  # an index of unknown content, a CPU or ROCm index: not judged
        listed = [k for k, row in table.items() if src.variant in row.cuda]
        if listed:
            from packaging.version import Version

            if any(Version(k) >= Version(series) for k in listed):
                return None  # the variant index may hold a build of this series (pip prefers its +cuNNN)
        else:
            oldest = min((variant_cuda(v) for row in table.values() for v in row.cuda if variant_cuda(v)),
                         default=None)
            if oldest is None or cuda >= oldest:
                return None  # a variant the table does not cover: its releases are not known
    return True


_PIP_CONF = re.compile(r"(?:^|/)pip\.conf$|(?:^|/)pip\.ini$")


def _pip_configured(facts: DockerFacts, step: Step) -> bool:
    """Earlier in the stage chain, pip was given an index in a way the model does not read: `pip
    config set …`, a pip.conf copied or written, or PIP_CONFIG_FILE. Which index decides torch is
    then not known."""
    if facts.var(step, "PIP_CONFIG_FILE") is not None:
        return True
    chain = {s.index for s in facts.chain(step.stage)}
    for s in facts.steps[: step.index]:
        if s.stage.index not in chain:
            continue
        argv = s.argv
        if len(argv) >= 3 and argv[0].rsplit("/", 1)[-1].startswith("pip") and argv[1] == "config" and argv[2] in (
                "set", "edit"):
            return True
        if any(_PIP_CONF.search(a) for a in argv[1:]):
            return True  # `cp pip.conf /etc/`, `tee /etc/pip.conf`, …
    return any(ins.keyword in ("COPY", "ADD") and any(_PIP_CONF.search(a) for a in ins.args.split())
               for ins in _chain_instructions(facts, step))


def _chain_instructions(facts: DockerFacts, step: Step):
    """The instructions of `step`'s stage chain written before it."""
    chain = {s.index for s in facts.chain(step.stage)}
    for st in facts.graph.stages:
        if st.index in chain:
            for i in st.instructions:
                ins = facts.df.instructions[i]
                if ins.start_line < step.line:
                    yield ins


def pypi_torch(facts: DockerFacts, step: Step, reqs: list, state: TorchState | None,
               fresh: bool = False, version_only: bool = False) -> PypiTorch | None:
    """The torch PyPI serves to an install whose requirements moved (or brought) torch: the newest
    torch release (wheeldoc/data/torch_pins.json.gz: the CPython versions of each release's linux
    wheels) that every requirement admits for the image's Python, and the CUDA major of PyPI's
    wheel of its series on the image's platform. None when any of that is not known.
    `version_only`: the release alone, where PyPI is one of the indexes (pip takes the highest
    version across them; an extra index may serve that release's build, so the CUDA major is None
    unless PyPI decides it)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    from wheeldoc.data.base_images import PYTHONS, torch_pythons
    from wheeldoc.data.torch import series_of, torch_table
    from wheeldoc.dockerfile import dependents

    inst = step.install
    _needs, unknown = facts.torch_needs(step)
    unknown = tuple(u for u in unknown if not _cloned_default(step, u, facts))
    if inst is None or unknown or any(not _cloned_default(step, p, facts) for p in inst.editables) or any(
            (p.startswith((".", "/")) and not _cloned_default(step, p, facts)) or p.endswith((".whl", ".tar.gz", ".zip"))
            or "://" in p or p.startswith("git+") for p in inst.packages) or any(
            facts.requirements(step, f) is None and _cloned_requirement(facts, step, f) is None
            for f in inst.requirements):
        return None  # a wheel, path or file of unknown content may ask for another torch
    python = dependents.image_pythons(facts, step, state)
    pys = (python,) if isinstance(python, str) else tuple(python) if python else PYTHONS
    certain = True
    per_py: dict[str, list[str]] = {p: [] for p in pys}
    words = []
    for req in reqs:
        if req.candidates:
            covered = set()
            for c in req.candidates:
                if c.torch is None or any(sp is None or picked == "conditional" for _f, sp, picked in c.torch):
                    if not fresh:
                        return None
                    # a fresh resolution (--ignore-installed) takes the newest of every package: a
                    # requirement through a dependency that older releases relax still leaves the pick
                    # to the others, but only as an assumption
                    certain = False
                for p in ([c.python] if c.python else pys):
                    if p in per_py:
                        covered.add(p)
                        per_py[p] += [sp for _f, sp, _ in c.torch or () if sp]
                if any(picked is True and sp for _f, sp, picked in c.torch or ()):
                    certain = False  # the newest release of an unpinned package: assumed
            if req.version is None:
                certain = False  # an unpinned package: its newest release is assumed
            for p in set(per_py) - covered:
                del per_py[p]  # no release of the package for that Python: the install cannot be that
            pys = tuple(p for p in pys if p in per_py)
            c = req.candidates[-1]
            words.append(f"{req.package} {c.release} requires torch{','.join(sp for _f, sp, _ in c.torch or () if sp) or ' (any)'}")
        elif req.spec is not None:
            for p in per_py:
                per_py[p].append(req.spec)
            words.append(f"{req.package} {req.version or ''} requires torch{req.spec or ' (any)'}".replace("  ", " "))
        elif req.newest is not None and req.newest[1] is not None:
            for p in per_py:
                per_py[p].append(req.newest[1])
            certain = False
            words.append(req.what if not req.sure else
                         f"{req.package} {req.newest[0]} (its newest release) requires torch{req.newest[1]}")
        else:
            return None
        if not req.sure:
            certain = False
    releases = []
    for v, py in torch_pythons().items():
        try:
            releases.append((Version(v), v, frozenset(py)))
        except InvalidVersion:
            continue
    releases.sort(reverse=True)
    table = torch_table().series
    got: set[tuple[str, int]] = set()
    if not pys:
        return None
    certain = certain and len(pys) == 1  # one Python: the image's, or the only one a release admits
    for p in pys:
        try:
            specs = [SpecifierSet(x) for x in per_py[p]]
        except InvalidSpecifier:
            return None
        pick = next((v for ver, v, py in releases if p in py and all(sp.contains(ver) for sp in specs)), None)
        if pick is None:
            if len(pys) == 1:
                return None
            continue  # no torch for that Python fits: the install fails there, it cannot be that Python
        major = _pypi_major(facts, step, table.get(series_of(pick) or ""))
        if major is None and not version_only:
            return None  # not known, a CPU build, or the platforms disagree
        got.add((pick, major))
    if not got:
        return None
    majors = {m for _v, m in got}
    if len(majors) != 1 and not version_only:
        return None  # the Pythons disagree
    versions = sorted({v for v, _m in got}, key=Version)
    decides = _pypi_decides(facts, step, series_of(versions[0]) or "")
    if version_only:
        if not _pypi_listed(facts, step):
            return None
        if decides is not True or len(majors) != 1:
            majors = {None}
        if len(versions) == 1 and all(any(x.strip() == f"=={versions[0]}" for sp in per_py[p] for x in sp.split(","))
                                      for p in pys):
            certain = True  # an exact pin for every Python leaves pip one release, however the rest was assumed
    elif decides is not True:
        return None
    major = majors.pop()
    shown = versions[0] if len(versions) == 1 else " to ".join((versions[0], versions[-1]))
    why = (f"line {step.line}: {'; '.join(words)}: {'pip' if step.tool == 'pip' else step.tool} takes PyPI's newest "
           f"admitted torch, {shown}" + (f" for Python {pys[0]}" if len(pys) == 1 else "")
           + (f", whose PyPI wheels are CUDA {major} builds" if major is not None else
              " (which build of it, the platform and indexes decide)"))
    return PypiTorch(step.line, versions[-1], major, why, certain, versions[0])


def _pypi_listed(facts: DockerFacts, step: Step) -> bool:
    """PyPI is one of the install's indexes, and no other index is set in a way the model does not
    read: then the newest torch release PyPI has that fits is what pip takes (an extra index serves
    the same releases, or older ones)."""
    inst = step.install
    if inst is None or _pip_configured(facts, step) or inst.tool != "pip":
        return False
    return all(src.kind == "index" and src.why.startswith("--extra-index-url ") for src in facts.torch_sources(step))


_OTHER_INSTALLERS = frozenset(("conda", "mamba", "micromamba"))


def _other_installer_torch(step: Step) -> bool:
    """`conda install pytorch …` / `mamba install torch …`: a torch from another package manager."""
    argv = step.argv
    if not argv or argv[0].rsplit("/", 1)[-1] not in _OTHER_INSTALLERS:
        return False
    if not any(a in ("install", "create", "update", "env") for a in argv[1:3]):
        return False
    args = argv[2:]
    values = {i + 1 for i, a in enumerate(args) if a in ("-c", "--channel", "-n", "--name", "-p", "--prefix")}
    return any(re.match(r"(?:[\w.-]+::)?(?:py)?torch(?:[=<>\s]|$)", a) for i, a in enumerate(args)
               if i not in values)  # `-c pytorch` names a channel, not a package


# conda packages that are the PyPI projects of the same name in the torch family
_CONDA_NAMES = {"pytorch": "torch", "torchvision": "torchvision", "torchaudio": "torchaudio", "xformers": "xformers"}
# Where conda takes the torch from the PyTorch channel (`-c pytorch` first, or its `pytorch-cuda`
# metapackage, which only the pytorch/nvidia channels have): its last release there is 2.5
# (pytorch/pytorch#138506: "2.5 will be the last release of PyTorch that will be published to the
# pytorch channel on Anaconda"); `pytorch-cuda` builds start with 1.13 (pytorch.org's previous-versions
# page: v1.13.0 is the first with `pytorch-cuda=11.6`, earlier ones use cudatoolkit).
CONDA_CHANNEL_LAST = "2.5"
CONDA_PYTORCH_CUDA_FIRST = "1.13.0"


def conda_torch(step: Step) -> tuple[str | None, str | None, str | None, frozenset[str], str] | None:
    """`conda install pytorch …` from the PyTorch channel: (exact version or None, lowest, highest
    series, the torch-family projects it names, why), as far as its words decide it; None otherwise
    (conda-forge or the default channels: which release is not known here)."""
    argv = step.argv
    args = argv[2:]
    takes_value = ("-c", "--channel", "-n", "--name", "-p", "--prefix", "--file")
    channels, specs, k = [], [], 0
    while k < len(args):
        a = args[k]
        if a in takes_value:
            if a in ("-c", "--channel") and k + 1 < len(args):
                channels.append(args[k + 1])
            k += 2
            continue
        if a.startswith("--channel="):
            channels.append(a.split("=", 1)[1])
        elif not a.startswith("-"):
            specs.append(a)
        k += 1
    version = lowest = highest = None
    named: set[str] = set()
    from_channel = bool(channels) and channels[0] == "pytorch"
    cuda_meta = False
    for spec in specs:
        chan, _, rest = spec.rpartition("::")
        m = re.match(r"([A-Za-z0-9_.-]+)\s*(==|=)?\s*([0-9][0-9.]*)?(\*)?$", rest)
        if m is None:
            continue
        name = m[1].lower()
        if name == "pytorch-cuda":
            cuda_meta = True
        if name in _CONDA_NAMES:
            named.add(_CONDA_NAMES[name])
        if name == "pytorch":
            from_channel = from_channel or chan == "pytorch"
            if m[3] and (m[2] == "==" or m[3].count(".") >= 2) and not m[4]:
                version = m[3].rstrip(".")
            elif m[3]:
                series = ".".join(m[3].rstrip(".").split(".")[:2])
                lowest, highest = f"{series}.0", series
    if "torch" not in named or not (from_channel or cuda_meta):
        return None
    why = "the PyTorch conda channel"
    if version is None and lowest is None:
        lowest = CONDA_PYTORCH_CUDA_FIRST if cuda_meta else None
        highest = CONDA_CHANNEL_LAST
        why += f", whose last release is {CONDA_CHANNEL_LAST}.x (pytorch/pytorch#138506)"
    return version, lowest, highest, frozenset(named), why


def protected(facts: DockerFacts, step: Step) -> str | None:
    """What holds torch in this install: an override or constraint naming torch (or one whose
    contents are not known), else None."""
    for t in facts.torch_sources(step):
        if t.kind.startswith(("override", "constraint")):
            return t.why
    return None


def _git_project(step: Step, spec: str, facts: DockerFacts | None = None) -> str | None:
    """The project a local path installs when it is a clone: `git clone …/vllm.git && cd vllm
    && pip install -e .`, or a clone an earlier RUN made (`pip install ./mamba/`)."""
    got = git_clone(step, spec, facts)
    return got[0] if got else None


# a branch name that is the default branch in practice: a clone of it is at least the newest release
DEFAULT_BRANCHES = frozenset({"main", "master", "HEAD", "origin/main", "origin/master"})
_CLONE_VALUED = frozenset({"--depth", "-o", "--origin", "-c", "--config", "--reference", "--reference-if-able",
                           "--separate-git-dir", "-j", "--jobs", "--filter", "-u", "--upload-pack", "--template",
                           "--shallow-since", "--shallow-exclude", "--server-option", "--bundle-uri"})


def _cloned_default(step: Step, spec: str, facts: DockerFacts | None = None) -> bool:
    """A local path cloned at its default branch, of a project the pin table knows (its requirement
    is then that of its newest release, at least)."""
    from wheeldoc.data.base_images import torch_pins

    got = git_clone(step, spec, facts)
    return got is not None and not got[1] and normalize(got[0]) in torch_pins()


def git_clone(step: Step, spec: str, facts: DockerFacts | None = None) -> tuple[str, bool] | None:
    """(project, at a ref) for a local path the same RUN cloned (or, with `facts`, the folder of a
    clone an earlier RUN of the stage chain made): "at a ref" when the clone names a branch or tag
    other than main/master, or a later `git checkout`/`switch`/`reset` in the clone (`cd` into it,
    or `git -C DIR`) may move it (then it is not "at least the newest release")."""
    got = _git_clone_here(step, spec)
    if got is None and facts is not None and spec.startswith((".", "/")):
        from wheeldoc.dockerfile.context import split_extras

        path = split_extras(spec)[0]
        if path.rstrip("/") in ("", "."):  # `cd apex && pip install ./`: the folder the RUN went into
            cds = [c.argv[1] for c in _commands_before(step) if len(c.argv) >= 2 and c.argv[0] == "cd"]
            if not cds or "$" in cds[-1]:
                return None
            path = cds[-1]
        found = facts.clone_at(step, path)
        if found is not None and found[1] == facts.abs_path(step.ins, path):
            return found[0], found[3]  # the clone's own folder, not a file or folder inside it
    return got


def _git_clone_here(step: Step, spec: str) -> tuple[str, bool] | None:
    cwd = None
    clones: dict[str, list] = {}
    for c in _commands_before(step):
        argv = c.argv
        if not argv:
            continue
        if argv[0] == "cd" and len(argv) >= 2:
            cwd = argv[1].rstrip("/")
            continue
        if argv[0] != "git":
            continue
        where, k = cwd, 1
        while k < len(argv) and argv[k] in ("-C", "-c"):  # git's own options before the verb
            if argv[k] == "-C" and k + 1 < len(argv):
                where = argv[k + 1].rstrip("/")
            k += 2
        verb, rest = (argv[k], argv[k + 1:]) if k < len(argv) else ("", [])
        if verb == "clone":
            pos, j, ref = [], 0, False
            while j < len(rest):
                a = rest[j]
                if a in ("-b", "--branch", "--revision"):
                    ref = ref or j + 1 >= len(rest) or rest[j + 1] not in DEFAULT_BRANCHES
                    j += 2
                    continue
                if a in _CLONE_VALUED:
                    j += 2
                    continue
                if a.startswith(("--branch=", "--revision=")) or (a.startswith("-b") and len(a) > 2):
                    value = a.split("=", 1)[1] if a.startswith("--") else a[2:]
                    ref = ref or value not in DEFAULT_BRANCHES
                elif not a.startswith("-"):
                    pos.append(a)
                j += 1
            if pos:
                url = pos[0]
                d = pos[1] if len(pos) > 1 else posixpath.basename(url.rstrip("/")).removesuffix(".git")
                base = posixpath.join(where, d) if where and not d.startswith("/") and k > 1 else d
                clones[base.rstrip("/")] = [posixpath.basename(url.rstrip("/")).removesuffix(".git"), ref]
        elif verb in ("checkout", "switch", "reset") and where is not None:
            hit = clones.get(where) or clones.get(posixpath.basename(where))
            if hit is not None and not (verb in ("checkout", "switch") and rest and set(rest) <= DEFAULT_BRANCHES):
                hit[1] = True
    if spec in (".", "./") and cwd is not None:
        hit = clones.get(cwd) or clones.get(posixpath.basename(cwd))
        return (hit[0], hit[1]) if hit else None
    return None


def _commands_before(step: Step):
    from wheeldoc.dockerfile.shell import commands_in_run

    for c in commands_in_run(step.ins):
        if c.line > step.command.line or c is step.command or c == step.command:
            break
        yield c


def _upgrade(step: Step) -> bool:
    inst = step.install
    return inst is not None and any(inst.has(f) for f in ("--upgrade", "--force-reinstall", "--reinstall",
                                                          "--upgrade-package"))


# packages the PyTorch index serves too (download.pytorch.org/whl/<variant>): there, the newest is
# the build for that index's torch, not PyPI's newest
PYTORCH_INDEX_SERVES = frozenset({"torchvision", "torchaudio", "xformers", "triton"})


def _pytorch_index_decides(facts: DockerFacts, step: Step) -> bool:
    """The install takes torch's companions from a PyTorch index: pip with one as its only
    index (`--index-url`), uv with one anywhere (uv takes a package from the first index that
    has it) or `--torch-backend`. Then PyPI's newest companion is not what gets installed."""
    inst = step.install
    if inst is None:
        return False
    from wheeldoc.dockerfile.facts import index_variant

    if inst.tool == "uv":
        strategy = inst.option("--index-strategy") or (facts.var(step, "UV_INDEX_STRATEGY") or _NOVAR).value
        if strategy == "unsafe-best-match":
            return False
        if inst.torch_backend is not None or (facts.var(step, "UV_TORCH_BACKEND") or _NOVAR).value:
            return True
        return any(t.kind == "index" and t.variant for t in facts.torch_sources(step))
    primary = list(inst.values("--index-url"))
    v = facts.var(step, "PIP_INDEX_URL")
    if v is not None and v.value:
        primary += v.value.split()
    return any(index_variant(u) for u in primary)


@dataclass(frozen=True)
class _NoVar:
    value: str | None = None


_NOVAR = _NoVar()


def requirements(facts: DockerFacts, step: Step, state: TorchState | None = None) -> list[Requirement]:
    """The torch requirements an install brings, as far as the tables know them: from the
    command line, from the requirements files it names (`-r`) and from the pyproject.toml of a
    local project it installs (`pip install .`), when the build context holds them."""
    from wheeldoc.dockerfile import context

    inst = step.install
    if inst is None:
        return []
    out: list[Requirement] = []
    for spec in inst.packages + inst.editables:
        base = posixpath.basename(spec.split("#", 1)[0].split("?", 1)[0])
        if base.endswith(".whl") and "://" not in spec:
            local = context_wheel(facts, step, spec)
            if local is not None:
                got = _wheel_requirement(local)
                if got is not None:
                    out.append(Requirement(got[0], got[1], got[2], got[2].startswith("=="), None, spec,
                                           f"the METADATA of {local.name} in the build context"))
                    continue
        if spec.startswith((".", "/")) and not base.endswith(".whl") and _git_project(step, context.split_extras(spec)[0], facts) is None:
            proj = context.project(facts, step, spec)
            if proj is None or proj.holds_torch:
                continue
            for line in proj.requirements:
                r = _one(facts, step, state, line, f"{line} (a requirement of the project {spec}, {proj.origin})",
                         from_file=True)
                if r is not None:
                    out.append(r)
            continue
        r = _one(facts, step, state, spec, spec)
        if r is not None:
            out.append(r)
    for f in inst.requirements:
        rf = facts.requirements(step, f)
        if rf is None:
            # a clone's file: only where no torch is there yet (then only the lack of an upper bound
            # matters, not the floor, which the clone may set lower than the release does)
            r = _cloned_requirement(facts, step, f) if state is not None and state.present is False else None
            if r is not None:
                out.append(r)
            continue
        for req in rf.requirements:
            r = _one(facts, step, state, req.line, f"{req.line} (in {f}, {rf.origin})", from_file=True)
            if r is not None:
                out.append(r)
    return out


_UPPER = re.compile(r"(==|===|<|<=|~=)\s*\d")


def _cloned_requirement(facts: DockerFacts, step: Step, path: str) -> Requirement | None:
    """A requirements file inside a `git clone` of a project the pin table knows (`git clone
    …/xformers.git && pip install -r xformers/requirements.txt`): its text is not in the Dockerfile,
    and the default branch it clones is at least as new as the newest release. Its torch
    requirement is taken as the newest release's, but only when that has no upper bound (then any
    torch floor the clone asks for resolves to the same newest torch); `sure` is False: assumed."""
    from wheeldoc.data.base_images import newest_release, release_torch, torch_pins

    got = facts.clone_at(step, path)
    if got is None or got[3]:
        return None  # not cloned, or at a branch, tag or commit: not "at least the newest release"
    repo, where, line, _ = got
    name = normalize(repo)
    pins = torch_pins()
    if name not in pins:
        return None
    best = newest_release(pins[name]["releases"])
    spec = release_torch(pins[name]["releases"][best]) if best else None
    if not spec or _UPPER.search(spec):
        return None
    return Requirement(name, None, None, False, (best, spec),
                       f"-r {path} (in the git clone of {repo} at {where}, line {line}: its contents are not in the "
                       f"Dockerfile; assumed to ask for torch as {name}'s newest release, {best}, does: torch{spec})",
                       source=f"the METADATA of {name} {best} on PyPI (wheeldoc/data/torch_pins.json.gz), assumed for "
                              f"the clone", sure=False)


def unread(facts: DockerFacts, step: Step) -> list[str]:
    """The inputs of an install that the Dockerfile copies in (from the build context or another
    stage) but whose text wheeldoc could not read here: `-r` files, and the pyproject.toml of a
    local project. Inputs nothing in the Dockerfile puts there (a `git clone`) are not listed."""
    from wheeldoc.dockerfile import context

    inst = step.install
    if inst is None:
        return []
    out = []
    for f in inst.requirements:
        got = facts.file_text(step, f)
        if got is not None and got[0] is None:
            out.append(f"-r {f}")
    for spec in inst.packages + inst.editables:
        base = posixpath.basename(spec.split("#", 1)[0])
        path = context.split_extras(spec)[0]
        if not spec.startswith((".", "/")) or base.endswith((".whl", ".tar.gz", ".zip", ".tgz")) \
                or _git_project(step, path, facts) is not None:
            continue
        root = facts.abs_path(step.ins, path)
        got = facts.file_text(step, posixpath.join(root, "pyproject.toml")) if root else None
        if got is not None and got[0] is None:
            out.append(spec)
    return out


def _one(facts: DockerFacts, step: Step, state: TorchState | None, spec: str, what: str,
         from_file: bool = False) -> Requirement | None:
    """The torch requirement one requirement brings (`vllm==0.9.1`, a wheel path, a VCS URL, a
    line of a requirements file), or None when the tables do not know it."""
    from wheeldoc.data.base_images import newest_release, release_torch, torch_pins, torch_requirement

    pins = torch_pins()
    upgrade = _upgrade(step)
    if from_file:
        if ";" in spec:
            return None  # a marker: whether it applies to this image is not judged here
        spec = spec.strip()
    base = posixpath.basename(spec.split("#", 1)[0].split("?", 1)[0])
    name = version = None
    within = None
    vcs = False
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
            return None  # an archive URL: its version is not known here
    elif spec.startswith((".", "/")):
        g = git_clone(step, spec, facts)
        if g is None:
            return None
        if g[1]:
            return None  # a clone at a tag or commit: which release it matches is not known here
        name, vcs = normalize(g[0]), True
    else:
        n = _NAME.match(spec)
        if not n:
            return None
        name = normalize(n[1])
        p = _PIN.match(spec)
        version = p[3] if p else None
        rest = n[2].strip().strip("()").replace(" ", "")
        if version is None and rest:
            if rest.startswith("@"):
                return None  # name @ URL
            within = rest
    if name not in pins:
        return None
    if vcs or ((("://" in spec or spec.startswith("git+")) and not base.endswith(".whl"))):
        if not vcs:
            return None  # a tagged checkout or an archive: which release it matches is not known here
        if name not in SOURCE_PINS_EXACT:
            return _default_branch(facts, step, state, name, spec, what)
    if state is not None and not vcs and _shipped_kept(step, state, name, version, within, upgrade):
        return None  # the image's own build of it satisfies the install: pip/uv keep it
    sure = True
    if version is None and not vcs:
        if name in PYTORCH_INDEX_SERVES and _pytorch_index_decides(facts, step):
            return None  # the PyTorch index's newest is the build for its own torch: not judged
        if state is not None and not upgrade:
            if name in state.ships or name in state.installed:
                return None  # already in the image and not upgraded: pip/uv keep it
            if name in COMPANIONS and (not state.ships_known or state.others):
                sure = False  # it may already be there (the base's packages, or earlier installs' dependencies)
    from wheeldoc.dockerfile import dependents

    python = dependents.image_pythons(facts, step, state)
    machine = facts.platform(step.stage)
    if not sure and state is not None and state.where.startswith("installed on line") \
            and dependents.admitted_by_none(name, state, python, machine):
        # the torch was installed by this file and no release of the companion admits it: one already
        # there (from PyPI) asks for another torch too, so either way pip/uv replace it
        sure = True
    spec_t, exact = torch_requirement(name, version)
    kept, maybe = _kept_maybe(state)
    cands = () if vcs else tuple(dependents.candidates(name, version, within, python, machine, kept, maybe) or ())
    per_machine = _per_machine(cands, machine, lambda m: dependents.candidates(name, version, within, python, m,
                                                                               kept, maybe))
    newest = None
    if version is None:
        if cands and cands[-1].torch is not None:
            c = cands[-1]
            newest = (c.release, ",".join(x for x in (t[1] for t in c.torch) if x))
        else:
            best = newest_release(pins[name]["releases"], within)
            if best is None and within:
                return None  # no release in the table matches the range
            if best is not None:
                got = release_torch(pins[name]["releases"][best])
                newest = (best, got) if got is not None else None
    elif cands and cands[0].torch is not None and cands[0].torch[0][1] is not None:
        spec_t = cands[0].torch[0][1]
    tree = None
    if vcs:
        tree = (f"a clone of {name}'s default branch" if spec.startswith((".", "/")) else
                f"{name} from its repository's default branch")
    origin = pins[name].get("origin")
    return Requirement(name, version, spec_t, exact, newest, what, sure=sure, candidates=cands,
                       python=_python_words(python),
                       source_tree=tree, tool=step.tool, per_machine=per_machine,
                       **({"source": origin} if origin else {}))


def _shipped_kept(step: Step, state: TorchState, name: str, version: str | None, within: str | None,
                  upgrade: bool) -> bool:
    """A package the base image ships at a version the table read (NGC vLLM's vllm, whose build carries a local
    tag, 0.31.0+…): an install that its version satisfies keeps it, and so does an upgrade when no release in
    the torch-pin table is newer (a local version sorts above its public one)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    from wheeldoc.data.base_images import newest_release, torch_pins

    have = dict(state.shipped).get(name)
    if have is None or name not in state.ships or step.install is None or \
            any(step.install.has(f) for f in ("--force-reinstall", "--reinstall", "--ignore-installed")):
        return False
    try:
        ver = Version(have)
        if version is not None:
            return SpecifierSet(f"=={version}").contains(ver, prereleases=True)
        if within and not SpecifierSet(within).contains(ver, prereleases=True):
            return False
        if not upgrade:
            return True
        newest = newest_release(torch_pins()[name]["releases"], within)
        return newest is not None and Version(newest) <= ver
    except (InvalidSpecifier, InvalidVersion):
        return False


def _kept_maybe(state: TorchState | None) -> tuple[frozenset[str], frozenset[str]]:
    """(packages already in the image, which pip/uv keep; torch companions that may be there, not
    known) before an install."""
    if state is None:
        return frozenset(), frozenset()
    kept = state.ships | state.installed
    return kept, (COMPANIONS - kept if (not state.ships_known or state.others) else frozenset())


def _python_words(python) -> str | None:
    """The image's Python as a Requirement records it: "3.11", "one of 3.10, 3.11", or None."""
    return python if isinstance(python, str) or python is None else "one of " + ", ".join(python)


def _per_machine(cands: tuple, machine: str | None, pick) -> tuple:
    """Where the platform is not known and a dependency's marker names the machine (xformers on
    x86-64 only): the candidates for each linux machine, judged one by one."""
    if machine is not None or not cands or not any(
            picked == "conditional" for c in cands for _f, _sp, picked in c.torch or ()):
        return ()
    return tuple((m, tuple(pick(m) or ())) for m in ("x86_64", "aarch64"))


def machine_verdicts(req: Requirement, state: TorchState) -> dict[str, bool | None]:
    """Per linux machine, does the requirement admit the torch there (`per_machine`); {} when the
    platform is known or no marker depends on it."""
    from wheeldoc.dockerfile import dependents

    return {m: dependents.verdict(c, state, req.tool) if c else None for m, c in req.per_machine}


def _default_branch(facts: DockerFacts, step: Step, state: TorchState | None, name: str, spec: str,
                    what: str) -> Requirement | None:
    """A package installed from its repository's default branch (`pip install git+https://…/unsloth.git`,
    or a clone of it at main): newer than its newest release, so only what sources keep counts: the
    newest release's torch floor (an exact pin read as a floor), and its dependencies with no upper
    bound, each taken at its newest release. Upper bounds and capped dependencies may have moved
    on the branch: not judged."""
    from wheeldoc.data.base_images import newest_release, torch_pins
    from wheeldoc.dockerfile import dependents

    if name in facts.env.cuda_extensions or name in TORCH_AND_COMPANIONS:
        return None  # compiled against torch: its wheels ask for the torch they were built with, its source for less
    best = newest_release(torch_pins()[name]["releases"])
    if best is None:
        return None
    python = dependents.image_pythons(facts, step, state)
    machine = facts.platform(step.stage)
    kept, maybe = _kept_maybe(state)
    cands = tuple(dependents.candidates(name, best, None, python, machine, kept, maybe, source=True) or ())
    if not cands or any(c.torch is None for c in cands):
        return None
    per_machine = _per_machine(cands, machine, lambda m: dependents.candidates(name, best, None, python, m, kept,
                                                                               maybe, source=True))
    own = cands[0].torch[0][1] if cands[0].torch else None
    tree = (f"a clone of {name}'s default branch" if spec.startswith((".", "/")) else
            f"{name} from its repository's default branch")
    return Requirement(name, None, own, False, (best, own or ""), f"{what} (at least as new as {name} {best}, its "
                       f"newest release in the table: its torch floor and its uncapped dependencies hold)",
                       source=f"the METADATA of {name} {best} on PyPI (wheeldoc/data/torch_pins.json.gz), floors "
                              f"only, for the branch", candidates=cands,
                       python=_python_words(python),
                       source_tree=tree, tool=step.tool, per_machine=per_machine)


def admitted(req: Requirement, state: TorchState) -> bool | None:
    """Does the requirement admit the torch already there? None when not known."""
    from dataclasses import replace
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    if req.candidates:
        from wheeldoc.dockerfile import dependents

        return dependents.verdict(req.candidates, state, req.tool)
    ranged = state.version is None and (state.lowest is not None or state.highest is not None)
    if req.spec is not None:
        if req.spec == "":
            return True
        if state.version:
            try:
                return SpecifierSet(req.spec).contains(Version(state.version), prereleases=True)
            except (InvalidSpecifier, InvalidVersion):
                return None
        if ranged:
            return False if _excludes_range(req.spec, state) else None
        if state.by_python and all(_excludes_range(req.spec, replace(state, lowest=v)) for _p, v in state.by_python):
            return False  # whatever the image's Python, the newest torch for it (or a later one) is not admitted
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
        elif ranged:
            # the newest release's floor above every torch the image can hold: later releases do not go back
            floors = [x for x in newest.split(",") if x.startswith(("==", ">"))]
            if any(_excludes_range(f if not f.startswith("==") else ">=" + f[2:], state) for f in floors):
                return False
        elif state.prerelease and newest.startswith("==") and "," not in newest:
            return False  # an exact release pin never admits a pre-release build
    elif req.exact and state.prerelease:
        return False
    return None


def _excludes_range(spec: str, state: TorchState) -> bool:
    """True when `spec` admits no torch from `state.lowest` up to the last release of series
    `state.highest` (a range the base image's tag implies)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        lo = Version(state.lowest) if state.lowest else None
        hi = tuple(int(x) for x in state.highest.split(".")[:2]) if state.highest else None
        specs = list(SpecifierSet(spec))
    except (InvalidSpecifier, InvalidVersion, ValueError):
        return False
    for sp in specs:
        raw = sp.version
        try:
            v = Version(raw[:-2] if raw.endswith(".*") else raw)
        except InvalidVersion:
            continue
        series = (v.major, v.minor)
        if sp.operator in ("==", "===", ">=", ">", "~="):
            if hi is not None and series > hi:
                return True
        if sp.operator in ("==", "===") and lo is not None and not raw.endswith(".*") and v < lo:
            return True
        if sp.operator in ("<", "<=") and lo is not None and (v < lo or (sp.operator == "<" and v == lo)):
            return True
    return False


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
                folder = posixpath.dirname(rel)
                try:
                    if facts.context_dir(folder) is None:
                        return None
                    hits = sorted(p.name for p in local.parent.iterdir() if fnmatch.fnmatch(p.name, local.name))
                except OSError:
                    return None
                return facts.context_file(posixpath.join(folder, hits[0])) if len(hits) == 1 else None
            return facts.context_file(rel)
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
