"""Every rule is documented ruff-style and has fixtures that raise it and fixtures that do not."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest

from wheeldoc.core.model import Severity
from wheeldoc.core.registry import DOC_SECTIONS, all_rules

ROOT = Path(__file__).resolve().parents[2]
RULES = all_rules()
EXAMPLES = [(code, ex) for code, r in RULES.items() for ex in r.examples]


def test_codes_are_well_formed_and_unique_names():
    assert all(re.fullmatch(r"WD[0-5]\d\d", c) for c in RULES)
    names = [r.name for r in RULES.values()]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_has_every_doc_section(code):
    doc = RULES[code].doc
    positions = [doc.find(s) for s in DOC_SECTIONS]
    assert all(p >= 0 for p in positions), f"{code} lacks one of {DOC_SECTIONS}"
    assert positions == sorted(positions), f"{code}: sections out of order"
    for a, b in zip(DOC_SECTIONS, (*DOC_SECTIONS[1:], None)):
        body = doc.split(a, 1)[1].split(b, 1)[0] if b else doc.split(a, 1)[1]
        assert body.strip(), f"{code}: section {a!r} is empty"


@pytest.mark.parametrize("code", sorted(RULES))
def test_doc_examples_agree_with_the_registered_severity(code):
    """The registry's severity is the worst a rule reports by default (`wheeldoc rule --all`
    prints it); an example in the doc never shows a worse one."""
    shown = {Severity.parse(s) for s in re.findall(rf"{code} (error|warning|info)\b", RULES[code].doc)}
    assert all(s <= RULES[code].severity for s in shown), (code, RULES[code].severity.label, shown)


@pytest.mark.parametrize("code", sorted(RULES))
def test_rule_has_hit_and_clean_fixtures(code):
    kinds = {ex.hit for ex in RULES[code].examples}
    assert kinds == {True, False}, f"{code} needs at least one hit and one non-hit example"


@pytest.mark.parametrize("code,example", EXAMPLES, ids=[f"{c}-{'hit' if e.hit else 'clean'}-{i}"
                                                        for i, (c, e) in enumerate(EXAMPLES)])
def test_rule_example(code, example, cli):
    for arg in example.argv:
        if arg.startswith("fixtures/"):
            assert (ROOT / arg).exists(), f"{code}: fixture {arg} is missing"
    res = cli(*example.argv, "--format", "json", "--fail-on", "never")
    assert res.code in (0, 2), res.err
    doc = res.json()
    hits = [f for f in doc["findings"] if f["rule"] == code]
    if example.hit:
        assert hits, f"{code} not raised by `wheeldoc {shlex.join(example.argv)}`"
        worst = max(Severity.parse(f["severity"]) for f in hits)
        assert worst <= RULES[code].severity, \
            f"{code} emits {worst.label} above its registered (documented) severity {RULES[code].severity.label}"
    else:
        assert not hits, f"{code} raised by `wheeldoc {shlex.join(example.argv)}`: {hits[0]['message']}"


def test_rule_command_prints_doc(cli):
    res = cli("rule", "WD101")
    assert res.code == 0 and "## Why is this bad?" in res.out
    assert cli("rule", "WD999").code == 2


def test_readme_rule_table_is_generated_from_registry():
    import importlib.util

    spec = importlib.util.spec_from_file_location("update_readme", ROOT / "scripts" / "update_readme.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = (ROOT / "README.md").read_text()
    assert mod.render(text) == text, "README rule table is stale: run `uv run python scripts/update_readme.py`"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.strip() for line in block.strip().splitlines()]
    assert len(commands) == 2, "the quick start has exactly two commands"
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci
    assert subprocess.run(["bash", "-n", str(ROOT / ".ci" / "run")]).returncode == 0
