"""Write docs/rules/ from the registry: `uv run python scripts/make_rule_docs.py`.

One page per rule (docs/rules/WD301.md: the text `wheeldoc rule WD301` prints) and an index
(docs/rules/README.md). SARIF's `helpUri` points at these pages (`RULE_DOCS_URL` in
wheeldoc/render/sarif.py); tests/render/test_rule_docs.py fails when a page is stale.
Pages of rules that no longer exist are removed (a code is never reused).
"""

from __future__ import annotations

from pathlib import Path

from wheeldoc.verbs.rule import rule_pages

RULES = Path(__file__).resolve().parents[1] / "docs" / "rules"


def main() -> None:
    RULES.mkdir(parents=True, exist_ok=True)
    pages = rule_pages()
    for old in RULES.glob("*.md"):
        if old.name not in pages:
            old.unlink()
    for name, text in pages.items():
        (RULES / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(pages)} pages into {RULES}")


if __name__ == "__main__":
    main()
