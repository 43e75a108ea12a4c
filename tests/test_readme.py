"""README.md for a newcomer: the sections one looks for, every environment variable the code
reads, the install lines, and both test commands that `.ci/run` runs.
(The rule table and the quick start's two commands: tests/core/test_registry.py; the links:
tests/test_packaging.py.)"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
ENV_READ = re.compile(r"""(?:environ(?:\.get|\.pop|\.setdefault)?\s*[\(\[]|getenv\s*\()\s*["']([A-Z][A-Z0-9_]*)["']""")


def _section(title: str) -> str:
    parts = re.split(r"(?m)^## ", README)
    match = [p for p in parts if p.startswith(title + "\n")]
    assert match, f"README has no '## {title}' section"
    return match[0]


def test_sections_a_newcomer_looks_for():
    titles = re.findall(r"(?m)^## (.+)$", README)
    for t in ("Install", "Quick start", "Commands", "Configuration", "Output and exit codes",
              "CI and pre-commit", "Cache", "Environment variables", "Troubleshooting", "Documentation", "Rules"):
        assert t in titles, t
    assert len(README.splitlines()) < 300, "measurements and internals belong in docs/"


def test_install_lines():
    block = _section("Install")
    for line in ("uvx wheeldoc", "uv tool install wheeldoc", "pip install wheeldoc", "wheeldoc[resolve]"):
        assert line in block, line


def test_every_environment_variable_the_code_reads_is_documented():
    read = set()
    for path in (ROOT / "wheeldoc").rglob("*.py"):
        read |= set(ENV_READ.findall(path.read_text()))
    assert {"WHEELDOC_CACHE_DIR", "XDG_CACHE_HOME", "WHEELDOC_WORKERS", "LD_LIBRARY_PATH"} <= read, read
    table = _section("Environment variables")
    missing = sorted(v for v in read if f"`{v}`" not in table)
    assert not missing, f"README's environment variable table misses {missing}"


def test_cache_commands_are_documented():
    block = _section("Cache")
    assert "wheeldoc cache dir" in block and "wheeldoc cache clean" in block


def test_both_test_commands_are_documented_and_run_by_ci():
    quick = _section("Quick start")
    assert "uv run pytest -m slow" in quick and ".ci/run" in quick
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^\s*uv run pytest(?: \|\||$)", ci, re.M), "the default run"
    assert re.search(r"^\s*uv run pytest -m slow(?: \|\||$)", ci, re.M), "the slow run"
