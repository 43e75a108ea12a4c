"""Which release of a torch-dependent package pip or uv would pick, and what it asks of torch.

The torch-pin table (`wheeldoc/data/torch_pins.json.gz`, read from each release's wheel METADATA on
PyPI by scripts/make_torch_pins.py) holds, per release, its Requires-Python, its torch requirement
and its requirements on other packages of the table. An install with no exact version takes the
newest final release whose Requires-Python admits the image's Python (every Python when that is
not known: one candidate per Python) and within the range written; one level of dependency is
followed (lightning -> pytorch-lightning -> torch), the dependency again taken at its newest for
that Python. What the table does not know (a release with no wheel, a marker on an unknown
Python) is unknown, never guessed.
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class Candidate:
    """One release the installer could pick, and the torch it then asks for."""

    python: str | None  # the Python it was picked for (None: the release was named exactly)
    release: str
    torch: tuple[tuple[str, str | None, bool | str], ...] | None  # (from, specifier or None: not known, picked
    # newest: True / exact: False / "conditional": under a marker not decided here) per source; None: the
    # release is not in the table


def _versions(rel: dict) -> list:
    from packaging.version import InvalidVersion, Version

    out = []
    for v in rel:
        try:
            out.append((Version(v), v))
        except InvalidVersion:
            continue
    out.sort(reverse=True)
    return out


@lru_cache(maxsize=256)
def _sorted(package: str) -> tuple:
    from wheeldoc.data.base_images import torch_pins

    return tuple(_versions(torch_pins()[package]["releases"]))


def _python_ok(requires: str, python: str) -> bool:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import Version

    if not requires:
        return True
    try:
        return SpecifierSet(requires).contains(Version(python + ".0"), prereleases=True)
    except InvalidSpecifier:
        return True


def newest(package: str, within: str | None, python: str) -> str | None:
    """The newest final release in the table admitted by `within` and whose Requires-Python
    admits `python`."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from wheeldoc.data.base_images import torch_pins

    try:
        allowed = SpecifierSet(within) if within else None
    except InvalidSpecifier:
        return None
    rel = torch_pins()[package]["releases"]
    for ver, v in _sorted(package):
        if ver.is_prerelease or (allowed is not None and not allowed.contains(ver)):
            continue
        if _python_ok(rel[v].get("python") or "", python):
            return v
    return None


def pythons(package: str, python) -> tuple[str, ...]:
    """The Pythons to pick a release for: the one known, the few possible, else every one."""
    from wheeldoc.data.base_images import PYTHONS

    return (python,) if isinstance(python, str) else tuple(python) if python else PYTHONS


_CAP = re.compile(r"(<|<=|==|===|~=|!=)\s*\d")


def floors(spec: str) -> str:
    """The lower bounds of a specifier, what a newer source tree keeps: `>=`/`>` as written, an exact
    pin or `~=` read as `>=` (sources do not go back); upper bounds and exclusions dropped."""
    out = []
    for part in (p.strip() for p in spec.split(",")):
        m = re.fullmatch(r"(>=|>|===|==|~=)\s*([0-9][^\s,]*)", part)
        if m is None:
            continue
        version = m[2].removesuffix(".*") if m[1] == "==" else m[2]
        out.append(f"{m[1] if m[1] in ('>=', '>') else '>='}{version}")
    return ",".join(out)


def torch_of(package: str, version: str, python: str | None, machine: str | None,
             follow: bool = True, kept: frozenset = frozenset(),
             maybe: frozenset = frozenset(), source: bool = False) -> tuple[tuple[str, str, bool], ...] | None:
    """What one release asks of torch: its own requirement, then (one level) that of the release
    of each table package it requires, picked newest for `python`. A dependency already in the
    image (`kept`) stays as it is and is not followed; one that may be there (`maybe`) makes the
    answer unknown. None when not known. `source`: for a newer source tree of the package (its
    default branch): only the torch floor counts, and a dependency with an upper bound is not known."""
    from wheeldoc.data.base_images import _marker_holds, release_torch, torch_pins

    pins = torch_pins()
    rel = pins[package]["releases"].get(version.lstrip("v"))
    if rel is None:
        return None
    own = release_torch(rel, python, machine)
    if source and own is not None:
        # an exact pin in a wheel is the torch it was built against (xformers, vllm's kernels): the
        # source asks for less, how much is not known; a range's floor is what a newer tree keeps
        own = None if re.search(r"(^|,)\s*===?\s*\d", own) else floors(own)
    out = [(f"{package} {version}", own, False)]
    if not follow:
        return tuple(out)
    for dep, line in sorted((rel.get("deps") or {}).items()):
        if dep not in pins:
            continue
        src = f"{dep} (required by {package} {version})"
        if " | " in line:
            out.append((src, None, True))  # several lines for one package: not modelled
            continue
        spec, _, marker = line.partition(";")
        conditional = False
        if marker.strip():
            hold = _marker_holds(marker.strip(), python, machine)
            if hold is False:
                continue
            conditional = hold is None  # applies or not, depending on what is not known
        spec = spec.strip()
        if dep in kept:
            continue  # already installed: pip/uv keep it while it satisfies the requirement
        if dep in maybe or python is None or (source and _CAP.search(spec)):
            out.append((src, None, True))  # it may already be there / which release depends on the Python
            continue  # / the branch may have moved the cap
        got = newest(dep, spec, python)
        sub = torch_of(dep, got, python, machine, follow=False) if got is not None else None
        if sub is None:
            out.append((src, None, True))
            continue
        exact_dep = spec.startswith("==") and "," not in spec and "*" not in spec
        how = "conditional" if conditional else (not exact_dep)
        out.extend((f"{dep} {got} (required by {package} {version} as {dep}{spec or ' (any version)'})", s, how)
                   for _, s, _ in sub)
    return tuple(out)
    for dep, line in sorted((rel.get("deps") or {}).items()):
        if dep not in pins:
            continue
        if " | " in line:
            return None  # several lines for one package: not modelled
        spec, _, marker = line.partition(";")
        if marker.strip():
            hold = _marker_holds(marker.strip(), python, machine)
            if hold is None:
                return None
            if not hold:
                continue
        spec = spec.strip()
        if dep in kept:
            continue  # already installed: pip/uv keep it while it satisfies the requirement
        if dep in maybe:
            return None  # it may already be there, and then it is kept: not known
        if python is None:
            return None  # which release of the dependency is picked depends on the Python
        got = newest(dep, spec, python)
        if got is None:
            return None
        sub = torch_of(dep, got, python, machine, follow=False)
        if sub is None:
            return None
        exact_dep = spec.startswith("==") and "," not in spec and "*" not in spec
        how = "conditional" if conditional else (not exact_dep)
        out.extend((f"{dep} {got} (required by {package} {version} as {dep}{spec or ' (any version)'})", s, how)
                   for _, s, _ in sub)
    return tuple(out)


def candidates(package: str, version: str | None, within: str | None, python: str | None,
               machine: str | None, kept: frozenset = frozenset(),
               maybe: frozenset = frozenset(), source: bool = False) -> list[Candidate] | None:
    """The releases the installer could pick: the one named, or the newest for each possible
    Python. None when the table does not hold the package, or no release fits."""
    from wheeldoc.data.base_images import torch_pins

    if package not in torch_pins():
        return None
    if version is not None:
        rel = version.lstrip("v")
        if rel not in torch_pins()[package]["releases"]:
            return None
        if not isinstance(python, str):
            # the release is fixed; its dependencies' picks depend on the Python: one candidate per Python
            req = torch_pins()[package]["releases"][rel].get("python") or ""
            pys = [p for p in pythons(package, python) if _python_ok(req, p)] or [None]
            if not torch_pins()[package]["releases"][rel].get("deps"):
                pys = [None]
        else:
            pys = [python]
        return [Candidate(py, rel, torch_of(package, rel, py, machine, kept=kept, maybe=maybe, source=source))
                for py in pys]
    out = []
    for py in pythons(package, python):
        got = newest(package, within, py)
        if got is not None:
            out.append(Candidate(py, got, torch_of(package, got, py, machine, kept=kept, maybe=maybe)))
    return out or None


def image_python(facts, step) -> str | None:
    """The Python an install runs for, where the file says it: the interpreter that runs it
    (`python3.11 -m pip`, `pip3.10`), uv's `--python 3.12`, a `python:3.11` or runpod `-py3.11`
    base tag, the base-image table's Python for the base (NGC PyTorch releases), or PYTHON_VERSION.
    None otherwise."""
    inst = step.install
    argv0 = step.argv[0].rsplit("/", 1)[-1] if step.argv else ""
    m = re.fullmatch(r"(?:python|pip)(\d)\.(\d{1,2})", argv0)
    if m:
        return f"{m[1]}.{m[2]}"
    venv = _venv_python(facts, step)
    if venv:
        return venv
    conda = _conda_python(facts, step)
    if conda:
        return conda
    if inst is not None and inst.tool == "uv":
        for flag in ("--python", "-p"):
            v = inst.option(flag)
            m = re.fullmatch(r"(?:python|cpython-?)?(\d)\.(\d{1,2})(?:\.\d+)?", v or "")
            if m:
                return f"{m[1]}.{m[2]}"
    root = facts.graph.root(step.stage)
    if not root.base_unknown:
        m = re.search(r"(?:^|/)python:(\d)\.(\d{1,2})(?![\d])", root.base) or \
            re.search(r"runpod/pytorch:.*-py(\d)\.(\d{1,2})(?![\d])", root.base)
        if m:
            return f"{m[1]}.{m[2]}"
        img = facts.base_image(root.base)  # a base the table knows the Python of (NGC PyTorch per release)
        if img is not None and img.python:
            return img.python
    v = facts.var(step, "PYTHON_VERSION")
    m = re.fullmatch(r"(\d)\.(\d{1,2})(?:\.\d+)?", (v.value or "") if v is not None else "")
    return f"{m[1]}.{m[2]}" if m else _apt_python(facts, step)


_APT_PYTHON = re.compile(r"^python(3)\.(\d{1,2})(?:-[a-z]+)?(?:=\S+)?$")


def _apt_python(facts, step) -> str | None:
    """On a base whose Python is not known: the one Python an `apt-get install python3.10 …` of the
    stage chain named (several different ones: not known)."""
    chain = {s.index for s in facts.chain(step.stage)}
    named = set()
    for s in facts.steps[: step.index]:
        argv = s.argv
        if s.stage.index in chain and len(argv) >= 3 and argv[0].rsplit("/", 1)[-1] in ("apt-get", "apt") \
                and "install" in argv[1:3]:
            named |= {f"{m[1]}.{m[2]}" for a in argv[2:] if (m := _APT_PYTHON.match(a))}
    return named.pop() if len(named) == 1 else None


_VENV = re.compile(r"(?:^|/)python(\d)\.(\d{1,2})$")
_CONDA_PYTHON = re.compile(r"^python(?:==?|=)(\d)\.(\d{1,2})(?:\.[\d*]+)?$")


def _conda_python(facts, step) -> str | None:
    """The Python an earlier `conda install|create … python=3.10` (mamba, micromamba) of the stage
    chain put in place: the last one before the install."""
    chain = {s.index for s in facts.chain(step.stage)}
    found = None
    for s in facts.steps[: step.index]:
        argv = s.argv
        if s.stage.index not in chain or len(argv) < 3 or argv[0].rsplit("/", 1)[-1] not in (
                "conda", "mamba", "micromamba") or argv[1] not in ("install", "create"):
            continue
        for a in argv[2:]:
            m = _CONDA_PYTHON.match(a)
            if m:
                found = f"{m[1]}.{m[2]}"
    return found


def _venv_python(facts, step) -> str | None:
    """The Python of the virtual environment the install runs in: one an earlier command made
    with `pythonX.Y -m venv DIR` (or `uv venv --python X.Y DIR`), when the installer is DIR's
    (`DIR/bin/pip`), DIR/bin leads PATH, or `DIR/bin/activate` was sourced earlier in the RUN."""
    import posixpath

    chain = {s.index for s in facts.chain(step.stage)}
    made: dict[str, str] = {}
    activated: set[str] = set()
    for ins in _venv_runs(facts, step, chain):
        for command, kind, folder, version in _venv_events(facts, ins):
            if ins is step.ins and command is step.command:
                break
            if kind == "made":
                made[folder] = version
            elif ins is step.ins:
                activated.add(folder)
    if not made:
        return None
    exe = step.argv[0] if step.argv else ""
    for d, v in made.items():
        if exe.startswith(d.rstrip("/") + "/bin/") or d in activated:
            return v
    paths = [b for b in facts.graph.setters("PATH")  # the raw value: `DIR/bin:$PATH` leads with DIR/bin
             if b.stage in chain and b.line < step.line and b.value is not None]
    first = paths[-1].value.strip("\"'").split(":", 1)[0] if paths else ""
    for d, v in made.items():
        if first and posixpath.normpath(first) == posixpath.join(d, "bin"):
            return v
    return None


def _venv_runs(facts, step, chain: set[int]) -> list:
    """The RUNs up to `step`'s, in its stage chain, that make or activate a virtual environment
    (one pass over the file, kept on `facts`)."""
    runs: list = facts.__dict__.get("_venv_runs")
    if runs is None:
        seen: set[int] = set()
        runs = []
        for s in facts.steps:
            if id(s.ins) not in seen:
                seen.add(id(s.ins))
                if any(kind != "other" for _, kind, _, _ in _venv_events(facts, s.ins)):
                    runs.append(s)
        facts.__dict__["_venv_runs"] = runs
    return [s.ins for s in runs if s.index <= step.index and s.stage.index in chain]


def _venv_events(facts, ins) -> list:
    """A RUN's venv commands, in order, read once per file: (command, "made", folder, "3.12") for
    `python3.12 -m venv DIR` / `uv venv --python 3.12 DIR`, (command, "activated", folder, None)
    for `. DIR/bin/activate`, and (command, "other", "", None) for the rest (an install finds where
    it stands in its RUN)."""
    import posixpath

    from wheeldoc.dockerfile.shell import commands_in_run

    memo: dict = facts.__dict__.setdefault("_venv_events", {})
    key = id(ins)
    if key in memo:
        return memo[key]
    out = []
    for c in commands_in_run(ins):
        argv = list(c.argv)
        if len(argv) >= 4 and argv[1:3] == ["-m", "venv"] and (m := _VENV.search(argv[0])):
            folders = [a for k, a in enumerate(argv[3:], 3) if not a.startswith("-") and argv[k - 1] != "--prompt"]
            if folders:
                out.append((c, "made", posixpath.normpath(folders[-1]), f"{m[1]}.{m[2]}"))
        elif len(argv) >= 2 and argv[0].rsplit("/", 1)[-1] == "uv" and argv[1] == "venv":
            py = next((argv[k + 1] for k, a in enumerate(argv[:-1]) if a in ("--python", "-p")), None)
            v = re.fullmatch(r"(?:.*/)?(?:python)?(\d)\.(\d{1,2})(?:\.\d+)?", py or "")
            folders = [a for k, a in enumerate(argv[2:], 2) if not a.startswith("-") and argv[k - 1] not in (
                "--python", "-p", "--prompt")]
            if v:
                out.append((c, "made", posixpath.normpath(folders[0] if folders else ".venv"), f"{v[1]}.{v[2]}"))
        elif len(argv) == 2 and argv[0] in (".", "source") and argv[1].endswith("/bin/activate"):
            out.append((c, "activated", posixpath.normpath(argv[1][: -len("/bin/activate")]), None))
        else:
            out.append((c, "other", "", None))
    memo[key] = out
    return out


def image_pythons(facts, step, state):
    """The Python of the image: one (`image_python`), else the few a torch already there allows (the
    cpXY tag of the torch wheel an earlier line installed; the CPython versions of the PyPI torch
    release's linux wheels, wheeldoc/data/torch_pins.json.gz), else None (every Python)."""
    import posixpath

    from wheeldoc.data.base_images import torch_pythons

    one = image_python(facts, step)
    if one:
        return one
    root = facts.graph.root(step.stage)
    img = None if root.base_unknown else facts.base_image(root.base)
    if img is not None and img.pythons and not _venv_python(facts, step):
        return img.pythons  # a base whose Python lies between two read releases
    if state is None or not state.present:
        return None
    m = re.match(r"installed on line (\d+)", state.where or "")
    if m:
        for s in facts.steps[: step.index]:
            if s.line != int(m[1]) or s.install is None:
                continue
            for spec in s.install.packages:
                t = re.match(r"torch-[^-]+-(?:\d[^-]*-)?cp(\d)(\d{1,2})-", posixpath.basename(spec))
                if t:
                    return f"{t[1]}.{t[2]}"
    if state.version:
        got = torch_pythons().get(state.version.split("+", 1)[0])
        if got:
            return tuple(got)
    return None


def admits(spec: str, state, picked: bool) -> bool | None:
    """Does a torch specifier admit the torch in the image (`state`, a TorchState)? `picked`: the
    specifier is the newest release's (in the table, which dates it): a torch below its floor is a
    sure no (floors do not go back), one above its cap a no as of the table (a later release may
    lift a cap), and one it admits a yes."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    from wheeldoc.dockerfile.torch_state import _excludes_range

    if spec == "":
        return True
    try:
        specs = SpecifierSet(spec)
    except InvalidSpecifier:
        return None
    ranged = state.version is None and (state.lowest is not None or state.highest is not None)
    floors = [s for s in specs if s.operator in ("==", "===", ">=", ">", "~=")]
    caps = [s for s in specs if s.operator in ("<", "<=")]
    if state.version:
        try:
            have = Version(state.version)
        except InvalidVersion:
            return None
        if specs.contains(have, prereleases=True):
            return True
        if not picked:
            return False
        if any(not SpecifierSet(str(c)).contains(Version(have.base_version), prereleases=True) for c in caps):
            return False  # above the newest release's cap, as of the table
        base = Version(have.base_version)
        for f in floors:
            raw = f.version.removesuffix(".*")
            try:
                if have < Version(raw) or (f.operator in ("==", "===") and base < Version(raw)):
                    return False
            except InvalidVersion:
                continue
        return None
    if ranged:
        if not picked and _excludes_range(spec, state):
            return False
        if picked and any(_excludes_range(">=" + f.version.removesuffix(".*"), state) for f in floors):
            return False
        if picked and any(_excludes_range(str(c), state) for c in caps):
            return False  # every torch the image can hold is above the newest release's cap, as of the table
        if _admits_range(specs, state):
            return True
    if state.prerelease:
        exact = [f for f in floors if f.operator in ("==", "===") and not f.version.endswith(".*")]
        if exact and all("a" not in f.version and "dev" not in f.version for f in exact):
            return False  # an exact release pin never admits a pre-release build
    return None


def _admits_range(specs, state) -> bool:
    """True when every torch from `state.lowest` up to the last release of series `state.highest`
    satisfies `specs` (lower bounds at or below the range, upper bounds above it)."""
    from packaging.version import InvalidVersion, Version

    try:
        lo = Version(state.lowest) if state.lowest else None
        hi = tuple(int(x) for x in state.highest.split(".")[:2]) if state.highest else None
    except (InvalidVersion, ValueError):
        return False
    if lo is None:
        return False
    for sp in specs:
        try:
            v = Version(sp.version)
        except InvalidVersion:
            return False
        if sp.operator == ">=" and v <= lo or sp.operator == ">" and v < lo:
            continue
        if sp.operator in ("<", "<=") and hi is not None and (v.major, v.minor) > hi:
            continue
        return False
    return True


def for_python(state, python: str | None):
    """The torch in the image as it is for one Python: an unpinned torch on an image whose Python is
    not known (`state.by_python`) is, for that Python, the newest release the table knows or a later one."""
    from dataclasses import replace

    floor = dict(state.by_python).get(python) if python and state.by_python else None
    return replace(state, lowest=floor, by_python=()) if floor else state


def verdict(cands, state, tool: str | None = None) -> bool | None:
    """False when every candidate release fails to admit the torch in the image, True when every
    one admits it, else None. A requirement through a dependency at its newest release moves torch
    with pip (its resolver takes the newest dependency and picks torch again to fit); uv may instead
    keep the installed torch and take an older release of the dependency, depending on the order it
    meets them in (checked with pip 26.3 and uv 0.13.9): with uv that is not known."""
    got = []
    for c in cands:
        if c.torch is None:
            got.append(None)
            continue
        st = for_python(state, c.python)
        vs = []
        for i, (_, spec, picked) in enumerate(c.torch):
            v = None if spec is None else admits(spec, st, picked is True)
            if v is False and (picked == "conditional" or (tool == "uv" and i > 0 and picked is True)):
                v = None  # a marker not decided here / uv's choice between the dependency and the torch there
            vs.append(v)
        got.append(False if False in vs else None if None in vs else True)
    if got and all(v is False for v in got):
        return False
    if got and all(v is True for v in got):
        return True
    return None


def admitted_by_none(package: str, state, python, machine: str | None) -> bool:
    """True when no release of `package` in the table (its own torch requirement) admits the torch
    in the image, and every release's requirement is known."""
    from wheeldoc.data.base_images import release_torch, torch_pins

    rels = torch_pins()[package]["releases"]
    if not rels:
        return False
    pys = pythons(package, python)
    for v, rel in rels.items():
        if not any(_python_ok(rel.get("python") or "", p) for p in pys):
            continue
        spec = release_torch(rel, python if isinstance(python, str) else None, machine)
        if spec is None or admits(spec, state, False) is not False:
            return False
    return True


def describe(req) -> str:
    """What the install asks of torch, release by release, for a message: "sentence-transformers
    (no version: the newest release for each Python; Python 3.8: 3.2.1, torch>=1.11.0; …)"."""
    groups: dict[tuple, list[str]] = {}
    for c in req.candidates:
        if c.torch is None or c.torch[0][1] is None:
            key = (c.release, "a torch requirement not known here (no wheel on PyPI, or a marker on an unknown value)")
        else:
            parts = [f"torch{spec}" + ("" if i == 0 else f" through {src}") for i, (src, spec, _) in
                     enumerate(c.torch) if spec]
            key = (c.release, "; ".join(parts) or "no torch requirement")
        groups.setdefault(key, []).append(c.python or "")
    bits = []
    for (release, wants), pys in groups.items():
        where = "" if pys == [""] else f"Python {pys[0]}" + (f" to {pys[-1]}" if len(pys) > 1 else "") + ": "
        bits.append(f"{where}{req.package} {release}, {wants}")
    if req.source_tree:
        head = f"{req.what}: "
    elif req.version is None:
        head = (f"{req.what} names no version: pip and uv take the newest release whose Requires-Python admits "
                + (f"the image's Python ({req.python})" if req.python else "the image's Python (not known here, so "
                   "every Python counts)") + "; ")
    else:
        head = f"{req.what}: "
    return head + "; ".join(bits[:4]) + (" …" if len(bits) > 4 else "")
