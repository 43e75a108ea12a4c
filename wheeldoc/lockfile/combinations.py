"""Findings that only a combination of optional extras or groups produces, told apart from those
the default environment or a single extra already has.

`environments()` judges each maximal choice of extras and groups that no `conflicts` entry
forbids, so a universal lock with `cu12`/`cu13` and `te-cu12`/`te-cu13` pairs is also judged as
`cu13 + te-cu12`, a combination nobody installs by accident. A finding there is still a fact (uv
installs exactly that with `uv sync --extra cu13 --extra te-cu12`), but the defect is the
project's: it left the combination undeclared. So, for every error or warning that the default
environment does not have:

- each choice of the environment is tried alone on top of the default (the environment
  `uv sync --extra X` installs); where one of them has the finding (same rule, same place), it
  is that extra's own defect and stays as the rule made it;
- otherwise the choices are dropped one at a time while the finding holds, which leaves a minimal
  combination (at least two choices, every one of them needed); the finding becomes one warning
  per fact, naming the combinations that produce it, with the fix to declare them conflicting in
  `[tool.uv] conflicts`.

Findings that hold in several environments are merged into one that names them all (the default
environment first), as before. Probes run only when some error or warning is missing from the
default environment, and each choice set is resolved and judged once.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterable

from wheeldoc.core.model import Finding, Fix, Severity
from wheeldoc.lockfile.environments import Choice, Environment, _Index, resolve
from wheeldoc.lockfile.source import Lockfile

Key = tuple  # (rule, location): the same defect at the same place, whatever its wording


def _key(f: Finding) -> Key:
    return (f.rule, f.location)


def _loud(findings: Iterable[Finding]) -> set[Key]:
    return {_key(f) for f in findings if f.severity >= Severity.WARNING}


def _sorted(choices: Iterable[Choice]) -> list[Choice]:
    return sorted(choices, key=lambda c: (c.package, c.kind, c.name))


def combination_name(choices: Iterable[Choice]) -> str:
    return " + ".join(str(c) for c in _sorted(choices))


def sync_flags(choices: Iterable[Choice]) -> str:
    return " ".join(f"--{'extra' if c.kind == 'extra' else 'group'} {c.name}" for c in _sorted(choices))


class _Prober:
    """Resolves and judges choice sets on demand, each once."""

    def __init__(self, lock: Lockfile, marker_env: dict, run: Callable[[Environment], list[Finding]],
                 known: dict[frozenset[Choice], list[Finding]]) -> None:
        self.lock, self.env, self.run = lock, marker_env, run
        self.index = _Index(lock)
        self.cache = dict(known)
        self.probes = 0

    def findings(self, choices: frozenset[Choice]) -> list[Finding]:
        got = self.cache.get(choices)
        if got is None:
            pkgs = resolve(self.lock, self.env, choices, _index=self.index)
            got = self.run(Environment(combination_name(choices) or "default", choices, pkgs, self.env))
            self.cache[choices] = got
            self.probes += 1
        return got

    def keys(self, choices: frozenset[Choice]) -> set[Key]:
        return _loud(self.findings(choices))


def single_choices(key: Key, base: frozenset[Choice], chosen: frozenset[Choice],
                   has: Callable[[frozenset[Choice]], set[Key]]) -> list[Choice]:
    """The choices of `chosen` (beyond `base`) that have `key` on their own, on top of `base`."""
    return [c for c in _sorted(chosen - base) if key in has(base | {c})]


def minimal_combination(key: Key, base: frozenset[Choice], chosen: frozenset[Choice],
                        has: Callable[[frozenset[Choice]], set[Key]]) -> frozenset[Choice] | None:
    """The choices (beyond `base`) that `key` needs, or None when the default environment or a
    single choice on its own already has it. Drops choices one at a time, in name order, while
    the finding holds: every choice left is needed, and at least two are left."""
    if key in has(base) or single_choices(key, base, chosen, has):
        return None
    rest = chosen - base
    for c in _sorted(rest):
        trial = rest - {c}
        if len(trial) >= 2 and key in has(base | trial):
            rest = trial
    return rest if len(rest) >= 2 else None


def judge_environments(lock: Lockfile, envs: list[Environment],
                       run: Callable[[Environment], list[Finding]]) -> list[Finding]:
    """Run the rules on each environment (`envs[0]` is the default one) and merge the findings:
    one per fact, naming the environments it holds in, or, for a defect that only a combination
    of several extras/groups produces, one warning naming those combinations."""
    per_env = [(e, run(e)) for e in envs]
    if len(envs) == 1 or envs[0].name != "default":
        return name_environments([(e.name, fs) for e, fs in per_env], single=len(envs) == 1)
    base = envs[0].choices
    default_keys = _loud(per_env[0][1])
    pending = [(e, f) for e, fs in per_env[1:] for f in fs
               if f.severity >= Severity.WARNING and _key(f) not in default_keys and len(e.choices - base) >= 2]
    combos: dict[tuple[Key, frozenset[Choice]], frozenset[Choice]] = {}
    alone: dict[tuple[Key, frozenset[Choice]], list[Choice]] = {}
    prober = _Prober(lock, envs[0].marker_env, run, {e.choices: fs for e, fs in per_env})
    for e, f in pending:
        k = (_key(f), e.choices)
        if k in combos or k in alone:
            continue
        singles = single_choices(_key(f), base, e.choices, prober.keys)
        if singles:
            alone[k] = singles
            continue
        m = minimal_combination(_key(f), base, e.choices, prober.keys)
        if m is not None:
            combos[k] = m
    plain: list[tuple[str, list[Finding]]] = []
    undeclared: dict[tuple, tuple[Finding, list[frozenset[Choice]], list[str]]] = {}
    for e, fs in per_env:
        keep = []
        for f in fs:
            k = (_key(f), e.choices)
            if k in alone:
                keep.append(_with_alone(f, alone[k], base, prober))
                continue
            m = combos.get(k)
            if m is None:
                keep.append(f)
                continue
            slot = undeclared.setdefault((f.rule, f.location, f.message), (f, [], []))
            if m not in slot[1]:
                slot[1].append(m)
            slot[2].append(e.name)
        plain.append((e.name, keep))
    out = name_environments(plain, single=False)
    out += [undeclared_combination(lock, f, ms, names) for f, ms, names in undeclared.values()]
    return out


def _with_alone(f: Finding, singles: list[Choice], base: frozenset[Choice], prober: _Prober) -> Finding:
    """`f`, with evidence naming the extras/groups that have the defect on their own."""
    notes = []
    for c in singles:
        same = next((g for g in prober.findings(base | {c}) if _key(g) == _key(f)), None)
        what = f": {same.message}" if same is not None and same.message != f.message else ""
        notes.append(f"{c} alone has it (`uv sync {sync_flags([c])}`){what}")
    data = dict(f.data or {})
    data["alone_in"] = [str(c) for c in singles]
    names = " and ".join(str(c) for c in singles)
    return dataclasses.replace(f, message=f"{f.message} ({names} alone {'has' if len(singles) == 1 else 'have'} "
                                          "it too: a defect of the extra itself, not only of this combination.)",
                               evidence=(*f.evidence, *notes), data=data)


def undeclared_combination(lock: Lockfile, f: Finding, combos: list[frozenset[Choice]],
                           env_names: list[str]) -> Finding:
    """`f` as a warning about combinations the project leaves undeclared, with the conflicts fix."""
    combos = sorted(combos, key=combination_name)
    words = "; ".join(combination_name(m) for m in combos)
    several = len(combos) > 1
    message = (f"{f.message} This holds only when {'one of these combinations' if several else 'the combination'} "
               f"of optional choices is installed together: {words}. Neither the default environment "
               f"nor any of these choices alone has it, and no `[tool.uv] conflicts` entry forbids "
               f"{'them' if several else 'it'}, so uv installs {'each' if several else 'it'} as asked "
               f"(`uv sync {sync_flags(combos[0])}`): the project leaves this combination undeclared.")
    members = {c.package for m in combos for c in m}
    entries = []
    for m in combos:
        items = ", ".join((f'{{ package = "{c.package}", ' if len(members) > 1 else "{ ")
                          + f'{c.kind} = "{c.name}" }}' for c in _sorted(m))
        entries.append(f"    [{items}],")
    where = next(iter(members)) if len(members) == 1 else "the workspace root"
    text = ("[tool.uv]\n"
            "conflicts = [\n"
            "    # ... the entries already there, then:\n"
            + "\n".join(entries) + "\n]\n")
    title = (f"Declare {' and '.join(combination_name(m).replace(' + ', ' and ') for m in combos)} as "
             f"conflicting in [tool.uv] conflicts of {where}'s pyproject.toml"
             + (" (every pair in an entry becomes exclusive)" if any(len(m) > 2 for m in combos) else ""))
    data = dict(f.data or {})
    data["environments"] = env_names
    data["combinations"] = [[str(c) for c in _sorted(m)] for m in combos]
    data["undeclared_combination"] = True
    evidence = (*f.evidence,
                *[f"without any one of {combination_name(m)}, the finding is gone" for m in combos],
                f"judged in: {'; '.join(env_names)}")
    return dataclasses.replace(f, severity=Severity.WARNING, message=message, evidence=evidence,
                               fix=Fix(title, "display-only", command="uv lock", text=text), data=data)


def name_environments(per_env: list[tuple[str, list[Finding]]], *, single: bool) -> list[Finding]:
    """One finding per distinct fact, naming every environment (extra, group) it holds in."""
    merged: dict[tuple, tuple[Finding, list[str]]] = {}
    for name, findings in per_env:
        for f in findings:
            key = (f.rule, f.severity, f.location, f.message)
            if key in merged:
                merged[key][1].append(name)
            else:
                merged[key] = (f, [name])
    out = []
    for f, names in merged.values():
        data = dict(f.data or {})
        data["environments"] = names
        where = "" if single else f" [environment{'s' if len(names) > 1 else ''}: {'; '.join(names)}]"
        out.append(dataclasses.replace(f, message=f.message + where, data=data))
    return out
