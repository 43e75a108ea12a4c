"""What an install of a local project asks for, read from the build context (WD403).

`pip install .` / `pip install -e .[extra]` / `uv pip install ./pkg` of a project whose
`pyproject.toml` the Dockerfile copies from the build context: its `[project] dependencies`
(and the optional dependencies of the extras named), or, for `dynamic = ["dependencies"]`, the
requirements files `[tool.setuptools.dynamic] dependencies = {file = [...]}` names. Read
statically through `DockerFacts.file_text` (at most 1 MiB a file, never outside the context,
regular files only); nothing is built or run, so a `setup.py` project stays unknown.

`uv sync` is not modelled here: it installs into the project's own virtual environment, not
over the torch of the image.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from wheeldoc.dockerfile.facts import DockerFacts, Step

MAX_PROJECT_REQUIREMENTS = 2000
_EXTRAS = re.compile(r"^(.*?)\[([^\]]*)\]$")


@dataclass(frozen=True)
class Project:
    path: str  # in the image
    origin: str  # where the pyproject.toml came from ("COPY pyproject.toml …, line 12")
    requirements: tuple[str, ...]  # PEP 508 strings, markers kept
    holds_torch: bool  # [tool.uv] override-/constraint-dependencies name torch


def split_extras(spec: str) -> tuple[str, tuple[str, ...]]:
    """"./app[gpu, test]" -> ("./app", ("gpu", "test"))."""
    m = _EXTRAS.match(spec.strip())
    if not m:
        return spec.strip(), ()
    return m[1], tuple(e.strip().lower() for e in m[2].split(",") if e.strip())


def project(facts: DockerFacts, step: Step, spec: str) -> Project | None:
    """The project a local path spec installs, when its pyproject.toml can be read; else None."""
    path, extras = split_extras(spec)
    if "://" in path or path.endswith((".whl", ".tar.gz", ".zip", ".tgz")):
        return None
    root = facts.abs_path(step.ins, path)
    if root is None:
        return None
    got = facts.file_text(step, posixpath.join(root, "pyproject.toml"))
    if got is None or got[0] is None:
        return None
    text, origin = got
    try:
        import tomli

        doc = tomli.loads(text)
    except Exception:  # a broken pyproject.toml is the build's problem: nothing known
        return None
    proj = doc.get("project") if isinstance(doc, dict) else None
    if not isinstance(proj, dict):
        return None
    reqs: list[str] = []
    deps = proj.get("dependencies")
    if isinstance(deps, list):
        reqs += [d for d in deps if isinstance(d, str)]
    optional = proj.get("optional-dependencies")
    if isinstance(optional, dict):
        for extra in extras:
            for k, v in optional.items():
                if re.sub(r"[-_.]+", "-", str(k)).lower() == re.sub(r"[-_.]+", "-", extra) and isinstance(v, list):
                    reqs += [d for d in v if isinstance(d, str)]
    dynamic = proj.get("dynamic")
    if isinstance(dynamic, list) and "dependencies" in dynamic:
        tool = doc.get("tool") if isinstance(doc.get("tool"), dict) else {}
        st = tool.get("setuptools") if isinstance(tool.get("setuptools"), dict) else {}
        dyn = st.get("dynamic") if isinstance(st.get("dynamic"), dict) else {}
        spec_files = dyn.get("dependencies") if isinstance(dyn.get("dependencies"), dict) else {}
        files = spec_files.get("file")
        for f in ([files] if isinstance(files, str) else files if isinstance(files, list) else []):
            if not isinstance(f, str):
                continue
            rf = facts.requirements(step, posixpath.join(root, f))
            if rf is None:
                return None  # part of the requirements cannot be read: the project is not known
            reqs += [r.line for r in rf.requirements]
    holds = False
    tool = doc.get("tool") if isinstance(doc.get("tool"), dict) else {}
    uv = tool.get("uv") if isinstance(tool.get("uv"), dict) else {}
    for key in ("override-dependencies", "constraint-dependencies"):
        v = uv.get(key)
        if isinstance(v, list) and any(isinstance(x, str) and re.match(r"\s*torch\b(?![-_.\w])", x) for x in v):
            holds = True
    return Project(root, origin, tuple(reqs[:MAX_PROJECT_REQUIREMENTS]), holds)
