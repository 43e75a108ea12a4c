"""docs/rules/ is what scripts/make_rule_docs.py writes from the registry: one page per rule,
the text `wheeldoc rule CODE` prints (regenerate: `uv run python scripts/make_rule_docs.py`)."""

from __future__ import annotations

from tests.conftest import ROOT
from wheeldoc.core.registry import all_rules
from wheeldoc.verbs.rule import rule_pages

RULES = ROOT / "docs" / "rules"


def test_every_rule_page_is_current():
    pages = rule_pages()
    on_disk = {p.name for p in RULES.glob("*.md")}
    assert on_disk == set(pages), "run scripts/make_rule_docs.py (pages missing or left over)"
    stale = [name for name, text in pages.items() if (RULES / name).read_text(encoding="utf-8") != text]
    assert not stale, f"stale pages {stale}: run scripts/make_rule_docs.py"


def test_a_page_is_what_wheeldoc_rule_prints(cli):
    assert set(all_rules()) <= {name[:-3] for name in rule_pages()}
    for code in ("WD001", "WD301", "WD401"):
        res = cli("rule", code)
        assert res.code == 0 and res.out == (RULES / f"{code}.md").read_text(encoding="utf-8")


def test_a_changed_doc_makes_the_page_stale(monkeypatch):
    """The staleness check really compares: a rule doc edited in the code differs from its page."""
    rule = all_rules()["WD301"]
    monkeypatch.setattr(rule.check, "__doc__", rule.check.__doc__ + "\n    One more line.\n")
    assert rule_pages()["WD301.md"] != (RULES / "WD301.md").read_text(encoding="utf-8")
