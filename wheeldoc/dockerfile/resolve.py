"""`check --resolve` on a Dockerfile: the packages its installs name that the torch-pin table does
not hold are read from the index (the PEP 691 page, then the PEP 658 METADATA of one wheel of
each release that matters: the newest for each Python, or the one pinned), and added to the table
for this run, so WD403 judges them as it judges the table's own. Nothing is installed, built or
downloaded beyond those metadata files; what could not be read stays unknown and is said (WD002)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from wheeldoc.binary.indexmeta import IndexReader, IndexReadError
from wheeldoc.dockerfile.facts import DockerFacts, normalize, requirement

MAX_PACKAGES = 48  # a requirements file of hundreds is read only in part (said)
MAX_READS = 12  # METADATA files per package
# installers, build tools and torch itself: never torch dependents (torch's own family is modelled apart)
SKIP = frozenset({"pip", "setuptools", "wheel", "uv", "ninja", "packaging", "cmake", "torch", "torchvision",
                  "torchaudio", "triton", "pytorch-triton"})


@dataclass(frozen=True)
class Resolved:
    bodies: dict[str, dict]  # package -> a torch-pin table body (releases read from the index)
    dependents: frozenset[str]  # those whose read releases require torch (or a table package)
    left: tuple[str, ...] = ()  # named, not read: over MAX_PACKAGES
    error: str | None = None  # the index could not be read


def wanted(facts: DockerFacts) -> dict[str, set[str]]:
    """Package -> the specifiers the file's installs give it ("" for none), for each package the
    table does not hold: named on an install line or in a requirements file it reads."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from wheeldoc.data.base_images import torch_pins

    pins = torch_pins()
    out: dict[str, set[str]] = {}

    def add(name: str, spec: str) -> None:
        name = normalize(name)
        if name in pins or name in SKIP or name.startswith("nvidia-"):
            return
        spec = spec.split(";", 1)[0].strip().strip("()").replace(" ", "")
        if spec.startswith("@"):
            return  # name @ URL: not an index release
        try:
            SpecifierSet(spec)
        except InvalidSpecifier:
            spec = ""
        out.setdefault(name, set()).add(spec)

    for s in facts.steps:
        inst = s.install
        if inst is None or not s.installs_packages:
            continue
        for spec in inst.packages:
            r = requirement(spec)
            if r is not None and "://" not in spec:
                add(r.name, r.spec)
        for f in inst.requirements:
            rf = facts.requirements(s, f)
            for r in rf.requirements if rf is not None else ():
                add(r.name, r.spec)
    return out


def read(facts: DockerFacts, reader: IndexReader) -> Resolved:
    from wheeldoc.data.base_images import torch_pins

    want = wanted(facts)
    names = sorted(want)[:MAX_PACKAGES]
    table = set(torch_pins()) | set(names)
    bodies: dict[str, dict] = {}
    error = None

    def one(name: str):
        try:
            return name, body(reader, name, want[name], table), None
        except IndexReadError as e:
            return name, None, str(e)

    with ThreadPoolExecutor(8) as ex:
        for name, got, err in ex.map(one, names):
            if got is not None:
                bodies[name] = got
            error = error or err
    dependents = frozenset(n for n, b in bodies.items() if any(
        r["torch"] or r["deps"] for r in b["releases"].values()))
    return Resolved(bodies, dependents, tuple(sorted(want)[MAX_PACKAGES:]), error)


def forget() -> None:
    """The end of a `--resolve` run: the packages read for it leave the table, and so does what was
    derived from them (dependents' release order), so a later run reads its own index."""
    from wheeldoc.data.base_images import torch_pins
    from wheeldoc.dockerfile import dependents

    torch_pins().drop_added()
    dependents._sorted.cache_clear()


def body(reader: IndexReader, name: str, specs: set[str], table: set[str]) -> dict | None:
    """The table body of one project from the index: every final release with its Requires-Python;
    the torch requirement and table dependencies of the releases an install could take (the newest
    for each Python within each specifier given), the rest unknown (None). None: not on the index."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import Version

    from wheeldoc.data.pin_rows import MARKER_PYTHONS, release_files, split
    from wheeldoc.dockerfile.dependents import _python_ok

    files = reader.files(name)
    if files is None:
        return None
    rels = release_files(files)
    order = sorted(rels, reverse=True)

    chosen: list[Version] = []
    for spec in sorted(specs):
        try:
            allowed = SpecifierSet(spec)
        except InvalidSpecifier:
            continue
        for py in MARKER_PYTHONS:
            pick = next((v for v in order if allowed.contains(v) and _python_ok(rels[v]["python"], py)), None)
            if pick is not None and pick not in chosen:
                chosen.append(pick)
    releases = {}
    for v in order:
        releases[str(v)] = {"python": rels[v]["python"], "torch": None, "deps": {}}
    for v in chosen[:MAX_READS]:
        wheel = rels[v]["wheel"]
        text = reader.metadata(wheel) if wheel is not None else None
        if text is None:
            continue  # an sdist only, or no METADATA file served: what it asks is not read
        torch, deps = split(text, (), table - {name})
        releases[str(v)].update(torch=torch, deps=deps)
    return {"releases": releases, "extras": [], "exact_in_every_release": False,
            "origin": f"its wheel METADATA on {reader.host}, read with --resolve"}
