"""`wheeldoc check Dockerfile`: parse, analyze, run WD4xx; `--diff` shows the safe fixes,
`--fix` applies them (temp file + rename) and checks the result again.

Suppression is hadolint's: `# wheeldoc: ignore=WD401,WD405` in the comment block directly
above an instruction (or between its continued lines) silences those codes for findings
inside that instruction.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Callable, Iterable

from wheeldoc.dockerfile.facts import DockerFacts
from wheeldoc.core.engine import Context
from wheeldoc.core.model import Edit, Finding, Report
from wheeldoc.dockerfile.parser import MAX_DOCKERFILE_BYTES, Dockerfile, parse_text
from wheeldoc.dockerfile.stages import analyze
from wheeldoc.core.errors import InputError, LimitExceeded
from wheeldoc.core.files import open_regular

_BOM = "\ufeff"


def _read(path: Path) -> bytes:
    p = str(path)
    try:
        size = os.path.getsize(p)
        if size > MAX_DOCKERFILE_BYTES:
            raise LimitExceeded(p, f"Dockerfile is {size} bytes, over the {MAX_DOCKERFILE_BYTES} byte limit")
        with open_regular(p) as fh:
            return fh.read(MAX_DOCKERFILE_BYTES + 1)
    except OSError as e:
        raise InputError(p, f"cannot read: {e.strerror or e}") from None


def wd4_rules() -> list:
    """The WD4 rules; the registry imports only their module, which keeps the pre-commit path light."""
    from wheeldoc.core.registry import family_rules

    return family_rules("WD4")


def analyze_text(text: str, path: str, ctx: Context, bases: dict | None = None,
                 context: str | None = None, env=None) -> tuple[Dockerfile, list[Finding]]:
    """Parse, build the stage graph and run every enabled WD4 rule. Raises `InputError`
    (`LimitExceeded` when variable expansion runs past its budget, see lexer.expansion_budget).
    `bases`: image ref -> BaseImage read from the Docker daemon (`--pull-base`); `context`: the
    build context folder (default: the Dockerfile's)."""
    from wheeldoc.core.errors import LimitExceeded
    from wheeldoc.dockerfile.lexer import ExpansionLimit, expansion_budget

    df = parse_text(text, path)
    try:
        with expansion_budget(len(text)):
            graph = analyze(df)
            facts = DockerFacts(df, graph, ctx.target, context=context, text=text, bases=bases, env=env)
            findings: list[Finding] = []
            for r in wd4_rules():
                if ctx.enabled(r.code):
                    findings.extend(r.check(facts, ctx))
    except ExpansionLimit as e:
        raise LimitExceeded(path, str(e)) from None
    return df, findings


def build_context(args: argparse.Namespace) -> str | None:
    """`--context DIR`: the build context for every Dockerfile checked; None: each Dockerfile's folder."""
    value = getattr(args, "context", None)
    if value is None:
        return None
    if not os.path.isdir(value):
        from wheeldoc.core.settings import UsageError

        raise UsageError(f"--context {value}: not a directory")
    return value


def pull_base_wanted(settings, args: argparse.Namespace) -> bool:
    """`--pull-base`, or `pull-base = true` in [tool.wheeldoc]."""
    if getattr(args, "pull_base", False):
        return True
    value = settings.config.get("pull-base", False)
    if not isinstance(value, bool):
        from wheeldoc.core.settings import UsageError

        raise UsageError(f"{settings.config.path}: [tool.wheeldoc] pull-base must be true or false")
    return value


def _pull_base(df: Dockerfile, text: str, path: str, ctx: Context, report: Report) -> tuple[dict, list[Finding]]:
    """Read each external base's config from the Docker daemon (inspect only: nothing is pulled),
    record where each base fact came from (report `bases`), and one WD002 note (info) when the
    daemon could not say anything about some base."""
    from wheeldoc.core.model import Location, Severity
    from wheeldoc.dockerfile import daemon

    facts = DockerFacts(df, analyze(df), ctx.target, text=text)
    roots = daemon.external_bases(facts)
    got = daemon.inspect_bases(st.base for st in roots)
    bases = {ref: daemon.merge(ref, env) for ref, env in got.env.items()}
    records = daemon.base_records(facts, bases, got)
    report.extra.setdefault("bases", []).extend(records)
    notes: list[Finding] = []
    unread = [r for r in records if r["source"] != "daemon"]
    if unread:
        why = got.unavailable or "; ".join(sorted({r["note"] for r in unread if "note" in r}))
        judged = ", ".join(f"{r['image']} (line {r['line']}): {'the base-image table' if r['source'] == 'table' else 'unknown'}"
                           for r in unread)
        notes.append(Finding("WD002", "part of an input could not be analyzed", Severity.INFO,
                             Location(path, unread[0]["line"]),
                             f"--pull-base: {why}; the base images were judged without their real config: {judged}",
                             data={"pull_base": True}))
    return bases, notes


def suppressor(df: Dockerfile, path: str) -> Callable[[Finding], bool]:
    def suppressed(f: Finding) -> bool:
        if f.location.path != path or f.location.line is None:
            return False
        ins = df.at_line(f.location.line)
        return ins is not None and f.rule in df.ignored_codes(ins)

    return suppressed


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply line edits (numbered as BuildKit numbers lines), keeping BOM and CRLF. Inserts
    after the same line keep their order, identical ones are applied once; of several
    replacements of one line the first wins."""
    bom = _BOM if text.startswith(_BOM) else ""
    body = text[len(bom):]
    crlf = "\r\n" in body
    parts = body.split("\n")
    replace: dict[int, str] = {}
    inserts: dict[int, list[str]] = {}
    for e in edits:
        if e.action == "replace":
            replace.setdefault(e.line, e.content)
        else:
            bucket = inserts.setdefault(e.line, [])
            if e.content not in bucket:
                bucket.append(e.content)
    out: list[str] = []
    last = len(parts) - (1 if body.endswith("\n") else 0)
    for n, part in enumerate(parts, start=1):
        if n in replace and n <= last:
            part = replace[n] + ("\r" if part.endswith("\r") else "")
        out.append(part)
        if n <= last:
            for content in inserts.get(n, ()):
                if n == last and not body.endswith("\n"):  # the file ends without a newline
                    out[-1] += "\r" if crlf else ""
                out.append(content + ("\r" if crlf else ""))
    return bom + "\n".join(out)


def unified_diff(old: str, new: str, path: str) -> str:
    import difflib

    a = old.lstrip(_BOM).splitlines(keepends=True)
    b = new.lstrip(_BOM).splitlines(keepends=True)
    return "".join(difflib.unified_diff(a, b, f"a/{path.lstrip('/')}", f"b/{path.lstrip('/')}"))


def write_atomically(path: Path, text: str) -> None:
    """Write next to the file, then rename over it: a crash never leaves half a Dockerfile."""
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".wheeldoc", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        except OSError:
            pass
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def safe_edits(findings: Iterable[Finding], suppressed: Callable[[Finding], bool]) -> list[tuple[Finding, Edit]]:
    return [(f, e) for f in findings if f.fix is not None and f.fix.applicability == "safe" and not suppressed(f)
            for e in f.fix.edits]


def check_dockerfile(path: Path, settings, ctx: Context, args: argparse.Namespace,
                     report: Report, data: bytes | None = None) -> tuple[list[Finding], Callable[[Finding], bool]]:
    """`data`: the Dockerfile read from stdin (`check - --stdin-filename NAME`): never written back."""
    p = str(path)
    from_stdin = data is not None
    if data is None:
        data = _read(path)
    df = parse_text(data, p)  # validates (binary, encoding, limits) before anything else
    text = data.decode("utf-8")
    context = build_context(args)
    bases = None
    env, read_notes = _resolve(df, text, p, ctx, context, args) if getattr(args, "resolve", False) else (None, [])
    try:
        if pull_base_wanted(settings, args):
            bases, notes = _pull_base(df, text, p, ctx, report)
            df, findings = analyze_text(text, p, ctx, bases, context, env)
            findings.extend(notes)
        else:
            df, findings = analyze_text(text, p, ctx, context=context, env=env)
        findings.extend(read_notes)
        return _fixes(findings, df, text, p, ctx, args, report, bases, context, env, from_stdin, path)
    finally:
        if env is not None:
            from wheeldoc.dockerfile import resolve

            resolve.forget()


def _resolve(df: Dockerfile, text: str, path: str, ctx: Context, context: str | None,
             args: argparse.Namespace) -> tuple[object, list[Finding]]:
    """`--resolve`: packages the torch-pin table does not hold, read from the index for this run
    (dockerfile/resolve.py); the tool environment that counts them as torch dependents, and a WD002
    note (info) for what could not be read."""
    from dataclasses import replace

    from wheeldoc.binary.indexmeta import PYPI, IndexReader, IndexReadError
    from wheeldoc.core.cache import default_dir
    from wheeldoc.core.model import Location, Severity
    from wheeldoc.data.base_images import torch_pins
    from wheeldoc.dockerfile import resolve

    facts = DockerFacts(df, analyze(df), ctx.target, context=context, text=text)
    try:
        reader = IndexReader(getattr(args, "index_url", None) or PYPI, default_dir() / "index-metadata")
        got = resolve.read(facts, reader)
    except IndexReadError as e:
        got = resolve.Resolved({}, frozenset(), error=str(e))
    for name, body in got.bodies.items():
        torch_pins().add(name, body)
    env = replace(facts.env, torch_dependents=facts.env.torch_dependents | got.dependents)
    notes = []
    if got.error or got.left:
        why = "; ".join(x for x in (f"the index could not be read ({got.error})" if got.error else "",
                                    f"{len(got.left)} packages past the first {resolve.MAX_PACKAGES} were not "
                                    f"read ({', '.join(got.left[:5])}{' …' if len(got.left) > 5 else ''})"
                                    if got.left else "") if x)
        notes.append(Finding("WD002", "part of an input could not be analyzed", Severity.INFO, Location(path, 1),
                             f"--resolve: {why}; what those packages ask of torch stays unknown",
                             data={"resolve": True}))
    return env, notes


def _fixes(findings: list[Finding], df: Dockerfile, text: str, p: str, ctx: Context, args: argparse.Namespace,
           report: Report, bases, context, env, from_stdin: bool, path: Path
           ) -> tuple[list[Finding], Callable[[Finding], bool]]:
    suppressed = suppressor(df, p)
    want_diff = bool(getattr(args, "diff", False))
    want_fix = bool(getattr(args, "fix", False)) and not want_diff and not from_stdin
    if not (want_diff or want_fix):
        return findings, suppressed
    pairs = safe_edits(findings, suppressed)
    if not pairs:
        return findings, suppressed
    new_text = apply_edits(text, (e for _, e in pairs))
    if new_text == text:
        return findings, suppressed
    if want_diff:
        report.extra.setdefault("diff", []).append({"path": p, "diff": unified_diff(text, new_text, p)})
        return findings, suppressed
    new_df, after = analyze_text(new_text, p, ctx, bases, context, env)  # never write a file that no longer parses
    try:
        write_atomically(Path(os.path.realpath(path)), new_text)  # through a symlink, not over it
    except OSError as e:
        raise InputError(p, f"cannot write the fixes: {e.strerror or e}") from None
    remaining = {(f.rule, f.message) for f in after}
    fixed = []
    seen = set()
    for f, _ in pairs:
        if (f.rule, f.location.line, f.message) in seen:
            continue
        seen.add((f.rule, f.location.line, f.message))
        fixed.append({"path": p, "rule": f.rule, "line": f.location.line, "title": f.fix.title if f.fix else "",
                      "resolved": (f.rule, f.message) not in remaining})
    report.extra.setdefault("fixed", []).extend(fixed)
    return after, suppressor(new_df, p)


def text_sections(report: Report) -> tuple[Callable, ...]:
    """Text output for --diff and --fix, shown before the findings."""
    diffs = report.extra.get("diff", [])
    fixed = report.extra.get("fixed", [])

    def section(out) -> None:
        for d in diffs:
            for line in d["diff"].rstrip("\n").splitlines():
                style = "green" if line.startswith("+") else "red" if line.startswith("-") else ""
                out.add((line, style))
            out.add()
        if fixed:
            n = sum(1 for f in fixed if f["resolved"])
            files = len({f["path"] for f in fixed})
            out.add((f"Fixed {n} finding{'s' if n != 1 else ''} in {files} file{'s' if files != 1 else ''}:",
                     "green"))
            for f in fixed:
                out.add(f"  {f['path']}:{f['line']}: {f['rule']} {f['title']}")
            out.add()

    bases = report.extra.get("bases", [])

    def base_section(out) -> None:
        out.add(("Base images (--pull-base):", "bold"))
        for b in bases:
            src = {"daemon": "config from the Docker daemon", "table": "the base-image table",
                   "unknown": "unknown"}[b["source"]]
            out.add(f"  {b['path']}:{b['line']}: {b['image']}: {src}")
            for k, v in b.get("facts", {}).items():
                out.add(f"    {k} = {v['value']} ({v['source']})")
        out.add()

    return ((section,) if diffs or fixed else ()) + ((base_section,) if bases else ())
