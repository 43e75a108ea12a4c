from __future__ import annotations

import pytest

from wheeldoc.core.engine import Selection, exit_code, finalize
from wheeldoc.core.model import Finding, Location, Report, Severity


def f(code: str, sev: Severity = Severity.WARNING) -> Finding:
    return Finding(code, "t", sev, Location("p", 1), "m")


@pytest.mark.parametrize("select,ignore,code,expected", [
    (("WD",), (), "WD101", True),
    (("WD1",), (), "WD301", False),
    (("WD",), ("WD1",), "WD101", False),
    (("WD",), ("WD1",), "WD001", True),       # input errors survive a family ignore
    (("WD",), ("WD001",), "WD001", False),    # but not an explicit one
    (("WD101",), ("WD1",), "WD101", True),    # the longer prefix wins
    (("WD1",), ("WD101",), "WD102", True),
])
def test_selection(select, ignore, code, expected):
    assert Selection(select, ignore).enabled(code) is expected


def test_exit_codes_follow_fail_on():
    r = finalize(Report("check", {}), [f("WD101", Severity.WARNING)], Selection())
    assert exit_code(r, "warning") == 1
    assert exit_code(r, "error") == 0
    assert exit_code(r, "never") == 0
    r.input_errors = 1
    assert exit_code(r, "never") == 2


def test_severity_override_and_suppression():
    sel = Selection(severity={"WD101": Severity.INFO})
    r = finalize(Report("check", {}), [f("WD101", Severity.ERROR), f("WD102")], sel,
                 suppressed=lambda x: x.rule == "WD102")
    assert [(x.rule, x.severity) for x in r.findings] == [("WD101", Severity.INFO)]
    assert exit_code(r, "warning") == 0
