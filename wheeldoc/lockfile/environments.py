"""The environments a universal uv.lock installs, resolved the way `uv sync` resolves them.

A uv.lock is not one environment: it holds forks (several versions of one name), a marker on
every dependency edge, the extras and dependency groups of each workspace member, and the
`conflicts` between extras that can never be installed together (`cpu` vs `cu130`). For a target
(platform, Python) and a choice of extras and groups, `resolve()` walks from the workspace
members through the edges whose markers hold, adding the optional dependencies of each extra an
edge asks for, exactly the set `uv sync --extra X` installs (checked against the real
`uv export` in tests/lockfile/test_uv_environments.py). `environments()` lists what a project
offers by default: the base environment, and every maximal choice of extras and groups that
no `conflicts` entry forbids.

Markers are evaluated with every extra and group chosen at once (uv encodes conflicting extras
as `extra == 'extra-8-invokeai-cpu'`); packaging's `Marker.evaluate` takes one extra only, so
the marker tree is walked here, each distinct marker string parsed once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations
from typing import Callable, Iterable

from wheeldoc.lockfile.source import Dependency, LockedPackage, Lockfile

MAX_ENVIRONMENTS = 24
_VERSION_VARS = {"python_version", "python_full_version", "implementation_version", "platform_release"}


@dataclass(frozen=True)
class Choice:
    """One extra or dependency group of one workspace member."""

    package: str
    kind: str  # "extra" or "group"
    name: str

    @property
    def marker_value(self) -> str:
        """How uv writes it in conflict markers: `extra-8-invokeai-cpu`, `group-4-proj-dev`."""
        return f"{self.kind}-{len(self.package)}-{self.package}-{self.name}"

    def __str__(self) -> str:
        return f"{self.kind} {self.name}" if self.kind == "extra" else f"group {self.name}"


@dataclass(frozen=True)
class Environment:
    name: str
    """"default", or the extras and groups chosen: "extra cpu", "extra cu12 + 3 other extras"."""
    choices: frozenset[Choice]
    packages: tuple[LockedPackage, ...]
    marker_env: dict

    @property
    def chosen_extras(self) -> tuple[str, ...]:
        return tuple(sorted(c.name for c in self.choices if c.kind == "extra"))


# -- markers ------------------------------------------------------------------------------------

# A PEP 508 marker is parsed here into ("and" | "or", [items]) / (var, op, value, var_on_left)
# trees by a small recursive-descent parser: importing packaging.markers costs more than checking
# a 1,000-package lock. Anything it does not read falls back to packaging's parser.
_TOKEN = re.compile(r"""\s*(?:(?P<str>'[^']*'|"[^"]*")|(?P<op>===|==|!=|<=|>=|~=|<|>|not\s+in\b|in\b)"""
                    r"""|(?P<kw>and\b|or\b)|(?P<var>[a-z_]+)|(?P<p>[()]))""")
_parsed: dict[str, object] = {}


class _Unsupported(Exception):
    pass


def _tokens(marker: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(marker):
        m = _TOKEN.match(marker, pos)
        if not m or m.end() == pos:
            if marker[pos:].strip() == "":
                break
            raise _Unsupported(marker)
        kind = m.lastgroup
        val = m.group(kind)
        out.append((kind, " ".join(val.split()) if kind == "op" else val))
        pos = m.end()
    return out


def _parse_own(marker: str):
    toks = _tokens(marker)
    i = 0

    def atom():
        nonlocal i
        if i < len(toks) and toks[i] == ("p", "("):
            i += 1
            node = expr()
            if i >= len(toks) or toks[i] != ("p", ")"):
                raise _Unsupported(marker)
            i += 1
            return node
        if i + 3 > len(toks):
            raise _Unsupported(marker)
        (k1, v1), (k2, v2), (k3, v3) = toks[i:i + 3]
        if k2 != "op" or {k1, k3} != {"var", "str"}:
            raise _Unsupported(marker)
        i += 3
        if k1 == "var":
            return ("cmp", v1, v2, v3[1:-1], True)
        return ("cmp", v3, v2, v1[1:-1], False)

    def conj():
        nonlocal i
        items = [atom()]
        while i < len(toks) and toks[i] == ("kw", "and"):
            i += 1
            items.append(atom())
        return items[0] if len(items) == 1 else ("and", items)

    def expr():
        nonlocal i
        items = [conj()]
        while i < len(toks) and toks[i] == ("kw", "or"):
            i += 1
            items.append(conj())
        return items[0] if len(items) == 1 else ("or", items)

    node = expr()
    if i != len(toks):
        raise _Unsupported(marker)
    return node


def _parse(marker: str):
    got = _parsed.get(marker)
    if got is None:
        try:
            got = _parse_own(marker)
        except (_Unsupported, ValueError):
            from packaging.markers import InvalidMarker, Marker

            try:
                m = Marker(marker)
                got = ("packaging", m)
            except InvalidMarker:
                got = False  # unparseable: treated as true (never hide a package)
        if len(_parsed) < 200_000:
            _parsed[marker] = got
    return got


def _vtuple(v: str) -> tuple[int, ...] | None:
    parts = v.split(".")
    if not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def _version_cmp(lhs: str, op: str, rhs: str) -> bool | None:
    """Release-only version comparison (what uv writes: '3.12', '3.12.*'); None: not handled."""
    a = _vtuple(lhs)
    if a is None:
        return None
    if rhs.endswith(".*") and op in ("==", "!="):
        b = _vtuple(rhs[:-2])
        if b is None:
            return None
        hit = a[:len(b)] == b
        return hit if op == "==" else not hit
    b = _vtuple(rhs)
    if b is None or op not in ("==", "!=", "<", "<=", ">", ">="):
        return None
    n = max(len(a), len(b))
    a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
    return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _compare(lhs: str, op: str, rhs: str, var: str | None) -> bool:
    if op == "in":
        return lhs in rhs
    if op == "not in":
        return lhs not in rhs
    if var in _VERSION_VARS:
        got = _version_cmp(lhs, op, rhs)
        if got is not None:
            return got
        from packaging.specifiers import InvalidSpecifier, Specifier

        try:
            return Specifier(f"{op}{rhs}").contains(lhs, prereleases=True)
        except InvalidSpecifier:
            pass
    if op == "==":
        return lhs == rhs
    if op == "!=":
        return lhs != rhs
    if op in ("<", "<=", ">", ">="):
        return {"<": lhs < rhs, "<=": lhs <= rhs, ">": lhs > rhs, ">=": lhs >= rhs}[op]
    return True


def _eval_own(node, env: dict, active: frozenset[str]) -> bool:
    kind = node[0]
    if kind == "and":
        return all(_eval_own(n, env, active) for n in node[1])
    if kind == "or":
        return any(_eval_own(n, env, active) for n in node[1])
    _, var, op, value, var_left = node
    if var in ("extra", "group"):
        hit = value in active
        return hit if op in ("==", "in") else not hit
    have = str(env.get(var, ""))
    return _compare(have, op, value, var) if var_left else _compare(value, op, have, var)


def _eval_tree(tree, env: dict, active: frozenset[str]) -> bool:
    """packaging's marker tree (the fallback), with the same extra/group handling."""
    groups: list[list[bool]] = [[]]
    for item in tree:
        if isinstance(item, list):
            groups[-1].append(_eval_tree(item, env, active))
        elif isinstance(item, tuple):
            left, op, right = item
            lv, rv, op = left.value, right.value, op.value
            lvar = type(left).__name__ == "Variable"
            var = lv if lvar else rv
            if var in ("extra", "group"):
                value = rv if lvar else lv
                hit = value in active
                groups[-1].append(hit if op in ("==", "in") else not hit)
                continue
            if lvar:
                groups[-1].append(_compare(str(env.get(lv, "")), op, rv, lv))
            else:
                groups[-1].append(_compare(lv, op, str(env.get(rv, "")), rv))
        elif item == "or":
            groups.append([])
    return any(all(g) for g in groups)


def marker_evaluator(env: dict, active: Iterable[str] = ()) -> Callable[[str | None], bool]:
    """A cached `marker -> bool` for one target and one set of active extras/groups (both the
    plain names and uv's encoded `extra-N-pkg-name` values)."""
    act = frozenset(active)
    cache: dict[str, bool] = {}

    def evaluate(marker: str | None) -> bool:
        if not marker:
            return True
        got = cache.get(marker)
        if got is None:
            tree = _parse(marker)
            if tree is False:
                got = True
            elif tree[0] == "packaging":
                got = _eval_tree(tree[1]._markers, env, act)
            else:
                got = _eval_own(tree, env, act)
            cache[marker] = got
        return got

    return evaluate


# -- the walk -----------------------------------------------------------------------------------


def workspace_members(lock: Lockfile) -> tuple[LockedPackage, ...]:
    names = set(lock.members)
    if names:
        return tuple(p for p in lock.packages if p.name in names and p.source in ("editable", "virtual", "directory"))
    root = tuple(p for p in lock.packages if p.source in ("editable", "virtual") and p.url == ".")
    return root or tuple(p for p in lock.packages if p.source in ("editable", "virtual"))


class _Index:
    def __init__(self, lock: Lockfile) -> None:
        self.by_name: dict[str, list[LockedPackage]] = {}
        for p in lock.packages:
            self.by_name.setdefault(p.name, []).append(p)

    def target(self, d: Dependency) -> LockedPackage | None:
        cands = self.by_name.get(d.name)
        if not cands:
            return None
        if len(cands) == 1:
            return cands[0]
        if d.version is not None:
            cands = [p for p in cands if p.version == d.version] or cands
        if d.source is not None and len(cands) > 1:
            cands = [p for p in cands if d.source in (p.index, p.url)] or cands
        return cands[0]


def resolve(lock: Lockfile, env: dict, choices: Iterable[Choice] = (), *, _index: _Index | None = None
            ) -> tuple[LockedPackage, ...]:
    """The packages `uv sync` installs for the target `env` with these extras and groups."""
    chosen = frozenset(choices)
    active = {c.marker_value for c in chosen} | {c.name for c in chosen}
    ev = marker_evaluator(env, active)
    index = _index or _Index(lock)
    members = workspace_members(lock)
    seen: dict[int, set[str]] = {}
    order: list[LockedPackage] = []
    queue: list[tuple[LockedPackage, frozenset[str], bool]] = []

    def visit(pkg: LockedPackage, extras: Iterable[str], with_groups: bool) -> None:
        have = seen.get(id(pkg))
        new = set(extras)
        if have is None:
            seen[id(pkg)] = set(new)
            order.append(pkg)
            queue.append((pkg, frozenset(new), with_groups))
            queue.append((pkg, frozenset({""}), with_groups))  # its main dependencies
        else:
            new -= have
            if new:
                have |= new
                queue.append((pkg, frozenset(new), False))

    for m in members:
        visit(m, [c.name for c in chosen if c.kind == "extra" and c.package == m.name], True)
    while queue:
        pkg, extras, with_groups = queue.pop()
        groups = {c.name for c in chosen if c.kind == "group" and c.package == pkg.name} if with_groups else set()
        for d in pkg.dependencies:
            g = d.group
            if g is None:
                if "" not in extras:
                    continue
            elif g.startswith("extra:"):
                if g[6:] not in extras:
                    continue
            elif g.startswith("group:"):
                if g[6:] not in groups:
                    continue
            if not ev(d.marker):
                continue
            child = index.target(d)
            if child is not None:
                visit(child, d.extras, False)
    return tuple(order)


# -- what a project offers by default ---------------------------------------------------------------


def offered_choices(lock: Lockfile) -> list[Choice]:
    out: list[Choice] = []
    for m in workspace_members(lock):
        for g in dict.fromkeys(d.group for d in m.dependencies if d.group):
            kind, _, name = g.partition(":")
            out.append(Choice(m.name, kind, name))
    return out


def _conflict_sets(lock: Lockfile, offered: list[Choice]) -> list[set[Choice]]:
    known = {(c.package, c.kind, c.name): c for c in offered}
    sets = []
    for group in lock.conflicts:
        items = {known[k] for k in group if k in known}
        if len(items) > 1:
            sets.append(items)
    return sets


def _maximal_choices(nodes: list[Choice], clash: set[frozenset[Choice]]) -> list[frozenset[Choice]]:
    """Every maximal set of `nodes` without a clashing pair (small graphs: brute force)."""
    if len(nodes) > 14:  # keep bounded: one member of each clashing pair, greedily
        out = set()
        for start in nodes:
            pick = {start}
            for n in nodes:
                if all(frozenset((n, p)) not in clash for p in pick):
                    pick.add(n)
            out.add(frozenset(pick))
        return sorted(out, key=lambda s: sorted(map(str, s)))[:MAX_ENVIRONMENTS]
    found: list[frozenset[Choice]] = []
    for size in range(len(nodes), 0, -1):
        for combo in combinations(nodes, size):
            s = frozenset(combo)
            if any(s <= f for f in found):
                continue
            if all(frozenset(p) not in clash for p in combinations(combo, 2)):
                found.append(s)
    return found


def environments(lock: Lockfile, env: dict) -> list[Environment]:
    """The base environment (default groups: `dev`, as `uv sync` does) and each maximal
    non-conflicting choice of the extras and groups the workspace members declare."""
    offered = offered_choices(lock)
    index = _Index(lock)
    default = frozenset(c for c in offered if c.kind == "group" and c.name == "dev")
    sets = _conflict_sets(lock, offered)
    clash = {frozenset(p) for s in sets for p in combinations(sorted(s, key=str), 2)}
    in_conflict = sorted({c for s in sets for c in s}, key=str)
    free = frozenset(c for c in offered if c not in in_conflict)
    picks = _maximal_choices(in_conflict, clash) if in_conflict else [frozenset()]
    wanted: list[tuple[str, frozenset[Choice]]] = [("default", default - set(in_conflict))]
    for pick in picks:
        chosen = free | pick
        if not chosen:
            continue
        others = len([c for c in free if c.kind == "extra"])
        if pick:
            name = ", ".join(str(c) for c in sorted(pick, key=str))
            if others:
                name += f" (+ {others} other extra{'s' if others > 1 else ''})"
        else:
            name = "all extras" if others else "all groups"
        wanted.append((name, chosen))
    out: list[Environment] = []
    seen: set[frozenset[int]] = set()
    for name, chosen in wanted[:MAX_ENVIRONMENTS]:
        pkgs = resolve(lock, env, chosen, _index=index)
        key = frozenset(id(p) for p in pkgs)
        if key in seen:
            continue
        seen.add(key)
        out.append(Environment(name, chosen, pkgs, env))
    return out


# wheel platform tags (the last part of a wheel's file name) each target platform installs
_WHEEL_PLATFORM = {
    "linux-x86_64": re.compile(r"linux\w*_x86_64$"),
    "linux-aarch64": re.compile(r"linux\w*_aarch64$"),
    "macos-arm64": re.compile(r"macosx_\w+_(?:arm64|universal2)$"),
    "macos-x86_64": re.compile(r"macosx_\w+_(?:x86_64|intel|universal2?|fat\w*)$"),
    "windows-amd64": re.compile(r"win_amd64$"),
}


_TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio"})


def not_installable(env: Environment, platform: str) -> LockedPackage | None:
    """A package of `env` that cannot be installed on `platform` (torch's family first): the lock
    lists wheels for it, none for that platform, and no source distribution (`uv sync` fails there:
    no wheel for the current platform), so the environment is never installed there and none of its
    builds can be judged. None when each has a way in (or the platform is not one of wheeldoc's)."""
    pattern = _WHEEL_PLATFORM.get(platform)
    if pattern is None:
        return None
    for pkg in sorted(env.packages, key=lambda p: p.name not in _TORCH_FAMILY):
        if not pkg.wheels or pkg.sdist:
            continue
        tags = [w.rsplit("/", 1)[-1].split("?", 1)[0].split("#", 1)[0] for w in pkg.wheels]
        tags = [t[:-4].rsplit("-", 1)[-1] for t in tags if t.endswith(".whl")]
        if not tags or any(any(p == "any" or pattern.search(p) for p in t.split(".")) for t in tags):
            continue
        return pkg
    return None

