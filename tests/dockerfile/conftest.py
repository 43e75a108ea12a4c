"""A Dockerfile (and files of its build context) checked through the CLI, for the rule tests."""

from __future__ import annotations

import textwrap

import pytest


@pytest.fixture
def check(cli, tmp_path):
    """Lint Dockerfile text with extra `flags`, and `files` (relative path -> text) beside it;
    returns every finding of the JSON report, or, when another exit `code` is expected, the
    result itself. A module may override it (test_rules.py takes fixture paths too)."""

    def run(text: str, *flags: str, files: dict[str, str] | None = None, code: int = 0):
        path = tmp_path / "Dockerfile"
        path.write_text(textwrap.dedent(text).lstrip("\n"))
        for rel, body in (files or {}).items():
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / rel).write_text(body)
        res = cli("check", str(path), *flags, "--format", "json", "--fail-on", "never")
        assert res.code == code, res.err
        return res.json()["findings"] if code == 0 else res

    return run
