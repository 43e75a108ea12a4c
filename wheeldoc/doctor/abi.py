"""The ABI verdict of every distribution whose shared objects link torch, against the torch
installed beside it: the ABI analyzer's loader model (wheeldoc.abi.facts / loader) on
the environment's own files, and its WD2xx rules.

The analyzer reads `MemberSource`s; `EnvDistribution` is one over any `FileSystem` (the host's,
or a container image's merged layers), built from the RECORD the environment reader already
parsed, so an image is checked exactly like a venv. The CUDA libraries are the `nvidia-*` /
`cuda-*` distributions installed in the environment (the analyzer's "environment" mode).

The outcome (per-object verdicts and the findings) is cached under a content key: every
library's key (environment.scan: RECORD sha256, size, mtime) with its path inside site-packages,
never where the environment is. uv hard-links identical files into every venv, so two venvs
share that key: the cached findings name members, and this run's paths are put back on them.
"""

from __future__ import annotations

import base64
import hashlib
import posixpath
from dataclasses import dataclass

from wheeldoc.environment.facts import EnvFacts
from wheeldoc.core.engine import Context, Selection
from wheeldoc.core.errors import InputError
from wheeldoc.core.model import Finding, Location
from wheeldoc.environment.reader import Distribution, FileSystem
from wheeldoc.binary.members import Member, MemberData, MemberSource, RejectedMember

CACHE_VERSION = "abi-6"


@dataclass(frozen=True)
class AbiResult:
    library: str  # path relative to site-packages
    distribution: str
    verdict: str  # "loads", "fails", "unverified", "not loaded here" (chosen at run time, not for this target)
    detail: str

    def record(self) -> dict:
        return {"library": self.library, "distribution": self.distribution, "verdict": self.verdict,
                "detail": self.detail}


class EnvDistribution(MemberSource):
    """An installed distribution read through a `FileSystem`: the members its RECORD lists."""

    def __init__(self, fs: FileSystem, dist: Distribution) -> None:
        super().__init__()
        self.fs = fs
        self.root = dist.site_packages
        self.path = fs.where(dist.dist_info_path)
        self.dist_info = dist.dist_info
        members, rejected = [], []
        for row in dist.record:
            name = posixpath.normpath(row.path)
            if name.startswith("../") or name.startswith("/"):
                rejected.append(RejectedMember(row.path, "outside site-packages"))
                continue
            digest = None
            if row.sha256:
                try:
                    digest = base64.urlsafe_b64decode(row.sha256 + "=" * (-len(row.sha256) % 4)).hex()
                except ValueError:
                    digest = None
            members.append(Member(name, row.size or 0, row.size or 0, digest))
        self.members, self.rejected = tuple(members), tuple(rejected)

    def open(self, name: str) -> MemberData:
        m = self._require(name)
        full = posixpath.join(self.root, name)
        if not self.fs.is_file(full):
            raise InputError(self.path, "listed in RECORD but missing", member=name)
        ctx = self.fs.open_buffer(full)
        buf = ctx.__enter__()
        data = MemberData(self.path, name, buf, expected_sha256=m.sha256,
                          close=lambda: ctx.__exit__(None, None, None))
        if m.sha256:
            # The outcome is cached under a key made from RECORD's digests: the bytes read must
            # be the bytes RECORD names, or a lying RECORD would store its verdict for an honest one.
            try:
                data.verified_sha256()
            except InputError:
                data.close()
                raise
        return data


def check(facts: EnvFacts, ctx: Context, cache) -> tuple[list[AbiResult], list[Finding], str | None]:
    """(per-object verdicts, WD2xx findings, a note when nothing was checked)."""
    if facts.torch_dist is None:
        return [], [], "torch is not installed: nothing to check"
    owners = sorted({lib.distribution for lib in facts.env.torch_linked if lib.distribution})
    if not owners:
        return [], [], "no extension module links torch"
    from wheeldoc.core.model import finding_from_dict

    key = _key(facts, owners) if cache is not None else None
    if key:
        hit = cache.get("doctor-abi", key, CACHE_VERSION)
        if hit is not None:
            try:
                found = _places(facts, hit["findings"], restore=True)
                return ([AbiResult(**r) for r in hit["results"]],
                        [_located(finding_from_dict(f), facts, facts.installed[d]) for d, f in found],
                        hit["note"])
            except (KeyError, TypeError, ValueError):
                cache.discard("doctor-abi", key, CACHE_VERSION)
    results, raw, note = _check(facts, owners, cache)
    if key:
        from wheeldoc.core.model import finding_to_dict

        cache.put("doctor-abi", key, CACHE_VERSION, {"results": [r.record() for r in results],
                                                     "findings": _places(facts, [[d, finding_to_dict(f)] for d, f in raw]),
                                                     "note": note})
    return results, [_located(f, facts, facts.installed[d]) for d, f in raw], note


def _key(facts: EnvFacts, owners: list[str]) -> str | None:
    keys = facts.extra.get("library_keys")
    if not keys or len(keys) < len(facts.env.libraries):  # a file without a content key: no cache
        return None
    text = "\n".join(sorted(f"{_inside(p)}|{k}" for p, k in keys.items())) + "\n" + ",".join(owners)
    return hashlib.sha256(text.encode()).hexdigest()


def _places(facts: EnvFacts, doc, restore: bool = False):
    """The findings' JSON with this run's locations (the environment, its site-packages folders)
    replaced by placeholders, or the placeholders by this run's locations."""
    import json

    places = [(f"\u0000site{i}\u0000", facts.fs.where(sp)) for i, sp in enumerate(_site_dirs(facts))]
    places.append(("\u0000env\u0000", facts.where))
    text = json.dumps(doc)
    for token, where in sorted(places, key=lambda tw: -len(tw[1])) if not restore else places:
        if not where:
            continue
        where_js, token_js = json.dumps(where)[1:-1], json.dumps(token)[1:-1]
        text = text.replace(token_js, where_js) if restore else text.replace(where_js, token_js)
    return json.loads(text)


def _site_dirs(facts: EnvFacts) -> list[str]:
    return sorted({d.site_packages for d in facts.installed.values()})


def _inside(path: str) -> str:
    """A library's path inside its environment (what the analysis depends on), not where it is."""
    at = path.rfind("/site-packages/")
    return path[at + len("/site-packages/"):] if at >= 0 else path.rsplit("/", 1)[-1]


def _check(facts: EnvFacts, owners: list[str], cache) -> tuple[list[AbiResult], list[tuple[str, Finding]], str | None]:
    """Per-object verdicts and (distribution, finding) pairs, the findings not yet located."""
    from wheeldoc.abi.facts import CudaPlan, Side
    from wheeldoc.abi.inputs import _installed_tags

    fs = facts.fs
    torch = EnvDistribution(fs, facts.torch_dist)
    torch_side = Side(f"torch installed in {facts.where}", [(torch, "torch")], "torch", facts.torch_dist.version,
                      _metadata(torch), *_installed_tags(torch))
    cuda = [d for d in facts.installed.values() if d.name.startswith(("nvidia-", "cuda-"))]
    plan = CudaPlan("environment", [(EnvDistribution(fs, d), d.dist_info[: -len(".dist-info")]) for d in cuda])
    plan.described = [f"{name}: installed" for _, name in plan.sources]
    arch = facts.target.platform.split("-", 1)[1] if facts.target.platform and "-" in facts.target.platform \
        else facts.env.location.markers.get("platform_machine") or None
    rule_ctx = Context(facts.target, Selection())  # every WD2 rule; the selection applies later
    results: list[AbiResult] = []
    findings: list[tuple[str, Finding]] = []
    try:
        _check_each(facts, owners, torch_side, plan, arch, cache, rule_ctx, results, findings)
    finally:
        from wheeldoc.abi.site import shutdown_readers

        shutdown_readers()  # the reader threads end with the check
    return results, findings, None


def _check_each(facts, owners, torch_side, plan, arch, cache, rule_ctx, results, findings) -> None:
    from wheeldoc.abi.facts import Side, analyze
    from wheeldoc.abi.inputs import _installed_tags
    from wheeldoc.data.abi_tables import system_target
    from wheeldoc.abi import rules as wd2

    fs = facts.fs
    for name in owners:
        dist = facts.installed[name]
        src = EnvDistribution(fs, dist)
        ext = Side(f"{name} {dist.version}", [(src, name)], name, dist.version, _metadata(src), *_installed_tags(src))
        target = system_target(ext.platform_tags + torch_side.platform_tags, arch=arch)
        gpu = (facts.target.gpu.major, facts.target.gpu.minor) if facts.target.gpu else None
        a = analyze(ext, torch_side, target=target, cuda=plan, cache=cache,
                    python=facts.env.location.markers.get("python_version") or None, gpu=gpu)
        idle = wd2.not_loaded_here(a)
        for r in a.results:
            ok = r.loads and not a.torch_import.failures
            unverified = [u for u in r.unresolved if u.status == "unverified"]
            unread = list(getattr(r, "unreadable", ()))
            verdict = "fails" if not ok else "unverified" if unverified or unread else "loads"
            if not ok and r.root in idle:
                verdict = "not loaded here"
            detail = (f"{_failure(a, r)}; {idle[r.root]}" if r.root in idle else _failure(a, r)) if not ok else (
                f"not verified: {', '.join(unread[:3])} could not be read" if unread else
                f"{len(unverified)} symbol{'s' if len(unverified) != 1 else ''} not verified "
                "(libraries known from metadata only)" if unverified else
                f"{len(r.closure)} libraries in its closure resolve")
            results.append(AbiResult(r.root, name, verdict, detail))
        for f in wd2.run(a, rule_ctx):
            findings.append((name, f))


def _failure(a, r) -> str:
    """Every library the object cannot find (torch's first), else the analyzer's first failure."""
    from wheeldoc.abi.facts import first_failure

    names = list(dict.fromkeys(m.soname for m in r.missing_libraries))
    if names and not a.torch_import.failures:
        names.sort(key=lambda n: not n.startswith(("libc10", "libtorch")))
        return f"not found: {', '.join(names)}"
    return first_failure(a, r)


def _metadata(src: MemberSource):
    try:
        return src.metadata()
    except InputError:
        return None


def _located(f: Finding, facts: EnvFacts, dist: Distribution) -> Finding:
    """The ABI rules name the extension's source (its dist-info) and the member: point at the file."""
    if f.location.member and facts.fs.where(dist.dist_info_path) == f.location.path:
        path = facts.fs.where(posixpath.join(dist.site_packages, f.location.member))
        loc = Location(path, f.location.line, f.location.end_line, None, f.location.section, f.location.symbol)
        return Finding(f.rule, f.title, f.severity, loc, f.message, f.evidence, f.fix, f.data)
    if not f.location.member and not f.location.path.startswith(("/", facts.where)):  # the side's label
        return Finding(f.rule, f.title, f.severity, Location(facts.metadata_path(dist)), f.message, f.evidence,
                       f.fix, f.data)
    return f
