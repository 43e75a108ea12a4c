"""Regenerate the rule table in README.md from the registry: `uv run python scripts/update_readme.py`."""

from __future__ import annotations

import re
from pathlib import Path

from wheeldoc.verbs.rule import rule_table_markdown

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"<!-- rules:start -->\n.*?<!-- rules:end -->", re.S)


def render(text: str) -> str:
    return BLOCK.sub(lambda m: "<!-- rules:start -->\n" + rule_table_markdown() + "<!-- rules:end -->", text)


if __name__ == "__main__":
    README.write_text(render(README.read_text(encoding="utf-8")), encoding="utf-8")
