"""`wheeldoc rule CODE`: print a rule's documentation; `--all` lists the table."""

from __future__ import annotations

import argparse
import json
import sys

from wheeldoc.core.registry import Rule, all_rules
from wheeldoc.core.terminal import stderr_line


def rule_table_markdown() -> str:
    lines = ["| code | name | severity | fix | title |", "|---|---|---|---|---|"]
    for code, r in all_rules().items():
        lines.append(f"| {code} | {r.name} | {r.severity.label} | {r.fix_applicability} | {r.title} |")
    return "\n".join(lines) + "\n"


def _rule_text(r: Rule) -> str:
    head = f"{r.code} ({r.name}): {r.title}\nfamily: {r.family}; default severity: {r.severity.label}; " \
           f"fix: {r.fix_applicability}\n\n"
    return head + r.doc + "\n"


def rule_pages() -> dict[str, str]:
    """docs/rules/: one page per rule, the text `wheeldoc rule CODE` prints (SARIF's helpUri
    points there), and an index. Written by scripts/make_rule_docs.py; a test fails when stale."""
    rules = all_rules()
    pages = {f"{code}.md": _rule_text(r) for code, r in rules.items()}
    lines = ["# wheeldoc rules", "",
             "One page per rule, generated from the registry by `scripts/make_rule_docs.py`; each is "
             "what `wheeldoc rule CODE` prints.", "",
             "| code | name | severity | fix | title |", "|---|---|---|---|---|"]
    lines += [f"| [{code}]({code}.md) | {r.name} | {r.severity.label} | {r.fix_applicability} | {r.title} |"
              for code, r in rules.items()]
    pages["README.md"] = "\n".join(lines) + "\n"
    return pages


def run(args: argparse.Namespace) -> int:
    rules = all_rules()
    if args.all or not args.code:
        if args.format == "json":
            print(json.dumps([{"code": c, "name": r.name, "title": r.title, "severity": r.severity.label,
                               "family": r.family, "fix": r.fix_applicability} for c, r in rules.items()],
                             indent=2))
        elif args.format == "markdown":
            sys.stdout.write(rule_table_markdown())
        else:
            for c, r in rules.items():
                print(f"{c}  {r.severity.label:<7}  {r.name:<32} {r.title}")
        return 0
    r = rules.get(args.code.upper())
    if r is None:
        stderr_line(f"wheeldoc: error: unknown rule {args.code!r} (see `wheeldoc rule --all`)")
        return 2
    if args.format == "json":
        print(json.dumps({"code": r.code, "name": r.name, "title": r.title, "severity": r.severity.label,
                          "family": r.family, "fix": r.fix_applicability, "doc": r.doc}, indent=2))
    else:
        sys.stdout.write(_rule_text(r))
    return 0
