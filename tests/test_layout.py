"""The package's layering, read from its imports (an AST walk over wheeldoc/, lazy imports too).

- a family never imports another family's command or view;
- nothing below the verbs imports a verb (the CLI, wheeldoc/verbs/, a family's `command*`);
- the shared folders below the families (core, data, binary, render) import no family;
- folders import each other without a cycle, and files of different folders take part in no cycle;
- every folder's `__init__` opens with a docstring of two lines saying what it owns.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "wheeldoc"
SHARED = {"core", "data", "binary", "render"}
FAMILIES = {"lockfile", "abi", "kernels", "dockerfile", "environment", "image", "doctor"}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_edges(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the wheeldoc modules it imports (a `from pkg import name` counts pkg.name when
    that is a module of the package, else pkg)."""
    files = {module_name(p): p for p in package.rglob("*.py")}
    edges: dict[str, set[str]] = {m: set() for m in files}
    for mod, path in files.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in files else node.module
                           for a in node.names]
            else:
                continue
            edges[mod] |= {t for t in targets if t.split(".")[0] == "wheeldoc" and t != mod}
    return edges


def folder(mod: str) -> str:
    """The folder a module lives in; a top-level module (the CLI, the package root) is its own."""
    parts = mod.split(".")
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and (PACKAGE / parts[1]).is_dir()) else mod


def is_verb(mod: str) -> bool:
    parts = mod.split(".")
    return mod in ("wheeldoc.cli", "wheeldoc.__main__") or (len(parts) > 1 and parts[1] == "verbs") \
        or (len(parts) == 3 and parts[1] in FAMILIES and parts[2].startswith("command"))


def is_view(mod: str) -> bool:
    parts = mod.split(".")
    return len(parts) == 3 and parts[1] in FAMILIES and parts[2].startswith("view")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    n = stack.pop()
                    on.discard(n)
                    comp.append(n)
                    if n == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def violations(edges: dict[str, set[str]]) -> list[str]:
    found = []
    for mod, targets in sorted(edges.items()):
        for t in sorted(targets):
            if folder(t) != folder(mod) and folder(mod) in FAMILIES and (is_verb(t) or is_view(t)):
                found.append(f"{mod} imports another family's command/view {t}")
            if is_verb(t) and not is_verb(mod):
                found.append(f"{mod} (below the verbs) imports the verb {t}")
            if folder(mod) in SHARED and folder(t) in FAMILIES | {"verbs"}:
                found.append(f"{mod} (shared machinery) imports the family module {t}")
    folders: dict[str, set[str]] = {}
    for mod, targets in edges.items():
        folders.setdefault(folder(mod), set()).update(folder(t) for t in targets if folder(t) != folder(mod))
    found += [f"folders import each other in a cycle: {' -> '.join(c)}" for c in cycles(folders)]
    found += [f"files of different folders import each other in a cycle: {', '.join(c)}"
              for c in cycles(edges) if len({folder(m) for m in c}) > 1]
    return found


def test_the_package_is_layered():
    assert violations(import_edges()) == []


@pytest.mark.parametrize("bad, expect", [
    ({"wheeldoc.doctor.view": {"wheeldoc.kernels.view"}, "wheeldoc.kernels.view": set()},
     "another family's command/view"),
    ({"wheeldoc.doctor.abi": {"wheeldoc.abi.command"}, "wheeldoc.abi.command": set()},
     "another family's command/view"),
    ({"wheeldoc.abi.facts": {"wheeldoc.abi.command"}, "wheeldoc.abi.command": set()},
     "below the verbs"),
    ({"wheeldoc.core.engine": {"wheeldoc.cli"}, "wheeldoc.cli": set()}, "below the verbs"),
    ({"wheeldoc.render.text": {"wheeldoc.kernels.facts"}, "wheeldoc.kernels.facts": set()},
     "shared machinery"),
    ({"wheeldoc.kernels.facts": {"wheeldoc.abi.facts"}, "wheeldoc.abi.facts": {"wheeldoc.kernels.rules"},
      "wheeldoc.kernels.rules": set()}, "folders import each other in a cycle"),
    ({"wheeldoc.lockfile.facts": {"wheeldoc.environment.reader"},
      "wheeldoc.environment.reader": {"wheeldoc.lockfile.facts"}}, "files of different folders"),
])
def test_the_checker_catches(bad, expect):
    assert any(expect in v for v in violations(bad)), violations(bad)


def test_every_folder_says_what_it_owns():
    for init in sorted(PACKAGE.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc, f"{init} has no docstring"
        assert len(doc.strip().splitlines()) == 2, f"{init}: the docstring should say in two lines what it owns"


def test_tests_mirror_the_package():
    tests = Path(__file__).resolve().parent
    for sub in sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()):
        assert (tests / sub).is_dir(), f"tests/{sub}/ is missing: tests mirror wheeldoc/{sub}/"


if __name__ == "__main__":  # `uv run python tests/test_layout.py` prints the folder graph
    graph: dict[str, set[str]] = {}
    for m, ts in import_edges().items():
        graph.setdefault(folder(m), set()).update(folder(t) for t in ts if folder(t) != folder(m))
    for name in sorted(graph):
        print(f"{name:<18} -> {', '.join(sorted(graph[name]))}")
