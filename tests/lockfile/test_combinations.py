"""wheeldoc.lockfile.combinations: which extras/groups a finding needs, decided by probing choice sets
(the probes here are stubs that say which choice sets have the defect; the real resolver and rules
are exercised in test_uv_cross_extras.py and on the held-out corpus)."""

from __future__ import annotations

from wheeldoc.core.model import Finding, Location, Severity
from wheeldoc.lockfile.combinations import judge_environments, minimal_combination
from wheeldoc.lockfile.environments import Choice, Environment
from wheeldoc.lockfile.source import Lockfile

P = "proj"
DEV = Choice(P, "group", "dev")
A, B, C, FREE1, FREE2 = (Choice(P, "extra", n) for n in ("a", "b", "c", "free1", "free2"))
KEY = ("WD102", Location("uv.lock", 10))


def _has(rule):
    """A probe: `rule(extras chosen beyond the default)` says whether the defect is there."""
    calls = []

    def has(choices):
        calls.append(choices)
        return {KEY} if rule(frozenset(choices) - {DEV}) else set()

    return has, calls


def test_a_pair_is_found_and_free_choices_are_dropped():
    has, _ = _has(lambda s: {A, B} <= s)
    base = frozenset({DEV})
    got = minimal_combination(KEY, base, base | {A, B, FREE1, FREE2}, has)
    assert got == {A, B}


def test_default_or_single_choice_defects_are_not_combinations():
    base = frozenset({DEV})
    has, _ = _has(lambda s: True)  # the default environment has it
    assert minimal_combination(KEY, base, base | {A, B}, has) is None
    has, _ = _has(lambda s: B in s)  # extra b alone has it
    assert minimal_combination(KEY, base, base | {A, B, FREE1}, has) is None


def test_a_triple_that_needs_all_three_stays_a_triple():
    has, _ = _has(lambda s: {A, B, C} <= s)
    base = frozenset({DEV})
    assert minimal_combination(KEY, base, base | {A, B, C, FREE1}, has) == {A, B, C}


def test_either_of_two_pairs_gives_a_minimal_one():
    # the defect needs a with b, or a with c: whichever is left, every choice in it is needed
    has, _ = _has(lambda s: A in s and (B in s or C in s))
    base = frozenset({DEV})
    got = minimal_combination(KEY, base, base | {A, B, C}, has)
    assert got in ({A, B}, {A, C})


def _finding(sev=Severity.ERROR, line=10, msg="torch is CUDA 13, cupy-cuda12x is CUDA 12."):
    return Finding("WD102", "mix", sev, Location("uv.lock", line), msg,
                   data={"package": "cupy-cuda12x", "packages": ["cupy-cuda12x"]})


def _lock():
    return Lockfile(path="uv.lock", format="uv.lock", packages=())


def test_judge_merges_one_warning_per_fact_and_probes_only_when_needed():
    base = frozenset({DEV})
    # two maximal environments share the cross pair a + b; c is an irrelevant other choice
    envs = [Environment("default", base, (), {}),
            Environment("extra a, extra b, extra c", base | {A, B, C}, (), {}),
            Environment("extra a, extra b", base | {A, B, FREE1}, (), {})]
    ran = []

    def run(e):
        ran.append(e.choices)
        return [_finding()] if {A, B} <= e.choices else []

    out = judge_environments(_lock(), envs, run)
    assert len(out) == 1
    f = out[0]
    assert f.severity == Severity.WARNING
    assert f.data["combinations"] == [["extra a", "extra b"]]
    assert f.data["environments"] == ["extra a, extra b, extra c", "extra a, extra b"]
    assert "extra a + extra b" in f.message and "undeclared" in f.message
    assert "uv sync --extra a --extra b" in f.message
    assert f.fix is not None and '[{ extra = "a" }, { extra = "b" }],' in f.fix.text
    assert len(ran) == len(set(ran))  # each choice set resolved and judged once

    # nothing beyond the default: no probe at all
    ran.clear()
    out = judge_environments(_lock(), envs, lambda e: (ran.append(e.choices), [])[1])
    assert out == [] and len(ran) == len(envs)


def test_judge_keeps_errors_of_the_default_and_of_single_extras():
    base = frozenset({DEV})
    envs = [Environment("default", base, (), {}),
            Environment("extra a, extra b", base | {A, B}, (), {})]
    out = judge_environments(_lock(), envs, lambda e: [_finding()])  # everywhere, default included
    assert [(f.severity, f.data["environments"]) for f in out] == [(Severity.ERROR, ["default", "extra a, extra b"])]

    out = judge_environments(_lock(), envs, lambda e: [_finding()] if B in e.choices else [])
    assert len(out) == 1 and out[0].severity == Severity.ERROR
    assert out[0].data["alone_in"] == ["extra b"] and "extra b alone has it too" in out[0].message

    # info findings are never reclassified
    out = judge_environments(_lock(), envs, lambda e: [_finding(Severity.INFO)] if {A, B} <= e.choices else [])
    assert [f.severity for f in out] == [Severity.INFO]
