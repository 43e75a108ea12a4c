"""What `import torch` loads by name before any extension is opened, read from the torch build's
own `torch/__init__.py` (parsed with `ast`, never imported).

torch's `_load_global_deps()` opens `torch/lib/libtorch_global_deps.so` RTLD_GLOBAL; then, when
that pulled in `libcudart`, it preloads CUDA libraries with `ctypes.CDLL` (RTLD_LOCAL: their
sonames are loaded, so a later DT_NEEDED on them is satisfied, but their symbols are not in the
global scope). Which ones differs by release:

- 2.5 – 2.10: `_preload_cuda_deps("cuda_nvrtc", "libnvrtc.so.*[0-9]")` and friends, one call
  each (nvrtc, nvrtc-builtins, nvJitLink), `required=True` inside a `try`: the first one missing
  stops the rest;
- 2.11+: `_preload_cuda_deps(required=False)`: every entry of its `cuda_libs` list (cublasLt,
  cublas, cudnn, nvrtc, cudart, cupti, cufft, curand, nvJitLink, cusparse, cusparseLt, cusolver,
  nccl, nvshmem, cufile), each best effort, then nvToolsExt.

When `libtorch_global_deps.so` itself fails to load on a CUDA library (`except OSError`), torch
preloads the whole `cuda_libs` table (`required=True`) and tries again. Each library is looked
for, per `sys.path` entry, in `nvidia/<folder>/lib/`, `nvidia/cu<major>/lib/` (releases whose
`_get_cuda_dep_paths` says so) and `<folder>/lib/`: the first glob match wins.
"""

from __future__ import annotations

import ast
import fnmatch
from dataclasses import dataclass, field

INIT = "torch/__init__.py"


@dataclass(frozen=True)
class Preload:
    folder: str  # "cuda_nvrtc"
    pattern: str  # "libnvrtc.so.*[0-9]"
    required: bool  # a miss stops the preloads that follow (they run inside one `try`)


@dataclass
class TorchPreloads:
    """The preloads of one torch build (empty lists: it preloads nothing, or it could not be read)."""

    after_global_deps: list[Preload] = field(default_factory=list)  # when libcudart is loaded
    on_global_deps_failure: list[Preload] = field(default_factory=list)
    cu_major_folder: bool = False  # also looks in nvidia/cu<major>/lib
    read: bool = False  # torch/__init__.py was found and parsed


def read_preloads(text: str) -> TorchPreloads:
    """The preload calls of `_load_global_deps` in the text of `torch/__init__.py`."""
    out = TorchPreloads()
    funcs = _functions(text)
    if funcs is None:
        return out
    load = funcs.get("_load_global_deps")
    if load is None:
        return out
    out.read = True
    paths = funcs.get("_get_cuda_dep_paths")
    out.cu_major_folder = paths is not None and "maj_cuda_version" in ast.unparse(paths)
    table = _table(funcs.get("_preload_cuda_deps"))
    outer = next((n for n in ast.walk(load) if isinstance(n, ast.Try)
                  and any("RTLD_GLOBAL" in ast.unparse(s) for s in n.body[:1])), None)
    if outer is None:
        return out
    for stmt in outer.body[1:]:
        out.after_global_deps += _calls(stmt, table)
    for handler in outer.handlers:
        out.on_global_deps_failure += _calls(handler, table, in_handler=True)
    return out


_WANTED = ("_load_global_deps", "_get_cuda_dep_paths", "_preload_cuda_deps")


def _functions(text: str) -> dict[str, ast.FunctionDef] | None:
    """The module-level functions the preloads are read from (None: the text does not parse).
    Only their own source is parsed (a tenth of the file); the whole file when that fails."""
    lines = text.splitlines(keepends=True)
    starts = {}
    for i, line in enumerate(lines):
        if line.startswith("def ") and line[4: line.find("(")] in _WANTED:
            starts[line[4: line.find("(")]] = i  # the last definition wins, as at run time
    pieces = []
    for i in sorted(starts.values()):
        j = i + 1
        while j < len(lines) and (not lines[j].strip() or lines[j][0] in " \t#)]}"):
            j += 1
        pieces.append("".join(lines[i:j]))
    for source in (("\n".join(pieces),) if pieces else ()) + (text,):
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        if source is text or len(funcs) == len(starts):
            return funcs
    return None


def _table(func) -> list[tuple[str, str]]:
    """`cuda_libs` of `_preload_cuda_deps` (2.11+: a list of pairs; a dict in older releases'
    `_load_global_deps`), as (folder, pattern) pairs."""
    if func is None:
        return []
    return _cuda_libs(func)


def _cuda_libs(node) -> list[tuple[str, str]]:
    for n in ast.walk(node):
        value = None
        if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name) and n.target.id == "cuda_libs":
            value = n.value
        elif isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "cuda_libs" for t in n.targets):
            value = n.value
        if value is None:
            continue
        try:
            lit = ast.literal_eval(value)
        except ValueError:
            return []
        pairs = list(lit.items()) if isinstance(lit, dict) else list(lit)
        return [(str(a), str(b)) for a, b in pairs]
    return []


def _calls(stmt, table: list[tuple[str, str]], in_handler: bool = False) -> list[Preload]:
    """Preload calls in source order. A call with two string arguments preloads one library; a
    call without them (`_preload_cuda_deps(required=False)`, `_preload_cuda_deps(err)`) the
    table; in the `except OSError` branch of old releases the table is a local `cuda_libs` loop."""
    out: list[Preload] = []
    local = _cuda_libs(stmt) if in_handler else []
    for n in ast.walk(stmt):
        if isinstance(n, ast.For) and local:
            out += [Preload(f, p, True) for f, p in local]
    for n in sorted((n for n in ast.walk(stmt) if isinstance(n, ast.Call)), key=lambda c: (c.lineno, c.col_offset)):
        name = n.func.id if isinstance(n.func, ast.Name) else None
        if name not in ("_preload_cuda_deps", "_preload_cuda_lib"):
            continue
        required = True
        for kw in n.keywords:
            if kw.arg == "required" and isinstance(kw.value, ast.Constant):
                required = bool(kw.value.value)
        strings = [a.value for a in n.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if len(strings) >= 2:
            if not (local and any((strings[0], strings[1]) == p for p in local)):
                out.append(Preload(strings[0], strings[1], required))
        elif table:
            out += [Preload(f, p, required) for f, p in table]
            out += [Preload("nvtx", "libnvToolsExt.so.*[0-9]", False)]
    # a loop over the local table happens where the `for` is; keep the table first, nvtx after
    return out


def locate(preloads: list[Preload], paths: list[str], cuda_major: str | None, cu_major_folder: bool) -> list[tuple[Preload, str | None]]:
    """Each preload with the site path torch's glob would pick (None: not installed). A required
    one that is missing ends the list (torch's `try` stops there)."""
    out: list[tuple[Preload, str | None]] = []
    ordered = sorted(paths)
    for p in preloads:
        folders = [f"nvidia/{p.folder}/lib"]
        if cu_major_folder and cuda_major:
            folders.append(f"nvidia/cu{cuda_major}/lib")
        folders.append(f"{p.folder}/lib")
        hit = None
        for folder in folders:
            hit = next((path for path in ordered if path.rsplit("/", 1)[0] == folder
                        and fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], p.pattern)), None)
            if hit:
                break
        out.append((p, hit))
        if hit is None and p.required:
            break
    return out
