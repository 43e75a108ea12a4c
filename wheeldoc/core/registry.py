"""The rule registry: one table of codes, each rule documented beside its check.

A rule's docstring holds the fixed sections `## What it does`, `## Why is this bad?`,
`## Example` and `## Fix` (ruff's shape); `wheeldoc rule CODE` prints it. Each rule also
names example invocations over committed fixtures that must (or must not) raise it;
the test-suite runs them, so a rule without a doc or a fixture fails the build.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Callable

from wheeldoc.core.model import Applicability, Severity

FAMILIES = {
    "WD0": "input",
    "WD1": "lockfile",
    "WD2": "abi",
    "WD3": "kernels",
    "WD4": "dockerfile",
    "WD5": "environment",
}
FAMILY_MODULES = {
    "WD0": "wheeldoc.core.input_rules",
    "WD1": "wheeldoc.lockfile.rules",
    "WD2": "wheeldoc.abi.rules",
    "WD3": "wheeldoc.kernels.rules",
    "WD4": "wheeldoc.dockerfile.rules",
    "WD5": "wheeldoc.environment.rules",
}
RULE_MODULES = tuple(FAMILY_MODULES.values())
DOC_SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Fix")


@dataclass(frozen=True)
class Example:
    """A CLI invocation (argv after `wheeldoc`) over fixtures, and whether it must raise the rule."""

    argv: tuple[str, ...]
    hit: bool


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    title: str
    severity: Severity
    fix_applicability: Applicability
    check: Callable
    examples: tuple[Example, ...]

    @property
    def family(self) -> str:
        return FAMILIES[self.code[:3]]

    @property
    def doc(self) -> str:
        return inspect.cleandoc(self.check.__doc__ or "")


_RULES: dict[str, Rule] = {}


def rule(
    code: str,
    name: str,
    *,
    title: str,
    severity: Severity,
    fix: Applicability = "display-only",
    examples: tuple[Example, ...] = (),
) -> Callable[[Callable], Callable]:
    def register(fn: Callable) -> Callable:
        if code in _RULES:
            raise RuntimeError(f"rule code {code} registered twice")
        _RULES[code] = Rule(code, name, title, severity, fix, fn, examples)
        fn.rule = _RULES[code]  # type: ignore[attr-defined]
        return fn

    return register


def _load(prefix: str) -> None:
    """Import the rule modules whose family a code prefix can reach (one for `WD101` or `WD1`,
    all for `WD`): a command pays only for its own family at start-up."""
    for family, module in FAMILY_MODULES.items():
        if family.startswith(prefix[:3]) or prefix.startswith(family):
            importlib.import_module(module)


def all_rules() -> dict[str, Rule]:
    _load("WD")
    return dict(sorted(_RULES.items()))


def get_rule(code: str) -> Rule | None:
    code = code.upper()
    _load(code)
    return _RULES.get(code)


def family_rules(prefix: str) -> list[Rule]:
    """The rules whose code starts with `prefix`, in code order, importing only their family."""
    _load(prefix)
    return [r for c, r in sorted(_RULES.items()) if c.startswith(prefix)]
