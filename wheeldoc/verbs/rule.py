"""`wheeldoc rule CODE`: print a rule's documentation; `--all` lists the table."""

from __future__ import annotations

import argparse
import json
import sys

from wheeldoc.core.registry import Rule, all_rules


def rule_table_markdown() -> str:
    lines = ["| code | name | severity | fix | title |", "|---|---|---|---|---|"]
    for code, r in all_rules().items():
        lines.append(f"| {code} | {r.name} | {r.severity.label} | {r.fix_applicability} | {r.title} |")
    return "\n".join(lines) + "\n"


def _rule_text(r: Rule) -> str:
    head = f"{r.code} ({r.name}): {r.title}\nfamily: {r.family}; default severity: {r.severity.label}; " \
           f"fix: {r.fix_applicability}\n\n"
    return head + r.doc + "\n"


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
        print(f"wheeldoc: error: unknown rule {args.code!r} (see `wheeldoc rule --all`)", file=sys.stderr)
        return 2
    if args.format == "json":
        print(json.dumps({"code": r.code, "name": r.name, "title": r.title, "severity": r.severity.label,
                          "family": r.family, "fix": r.fix_applicability, "doc": r.doc}, indent=2))
    else:
        sys.stdout.write(_rule_text(r))
    return 0
