"""WD2xx: an extension's binaries against a torch build and the target system.

Each rule reads `AbiFacts` (wheeldoc/abi/facts.py): what the loader model
(wheeldoc/abi/loader.py) found when it loaded every extension object after `import torch`.
Messages state facts and name the libraries; the binary decides, not the label or the pin.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from wheeldoc.abi.facts import AbiFacts, ref_flavour
from wheeldoc.abi.loader import torch_owned
from wheeldoc.core.engine import Context
from wheeldoc.core.model import Finding, Fix, Location, Severity
from wheeldoc.core.registry import Example, rule

A = "fixtures/abi"
EXT = f"{A}/wheels/ext-1.0-cp311-cp311-linux_x86_64.whl"
T11 = f"{A}/wheels/fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl"
T12 = f"{A}/wheels/fake_torch-2.12.0+cu130-cp311-cp311-linux_x86_64.whl"
TCPU = f"{A}/wheels/fake_torch-2.11.0+cpu-cp311-cp311-linux_x86_64.whl"
LOCAL = ("--no-index", "--find-links", f"{A}/wheels")
MAX_SYMBOL_FINDINGS = 200  # per extension object; the rest are counted in one more finding
_TORCH_LIB = re.compile(r"^lib(c10|torch|caffe2|shm)[\w]*\.so")


def _finding(code: str, facts: AbiFacts, library: str | None, message: str, *, evidence=(), fix=None,
             severity: Severity | None = None, at_symbol: str | None = None, **data) -> Finding:
    r = _CHECKS[code].rule  # type: ignore[attr-defined]
    path, member = _where(facts, library)
    return Finding(code, r.title, severity or r.severity, Location(path, member=member, symbol=at_symbol),
                   message, tuple(evidence), fix, {"library": library, "torch": facts.torch_display, **data})


def _where(facts: AbiFacts, library: str | None) -> tuple[str, str | None]:
    """The extension input's path, and the member inside it (for a wheel, a tree, a dist-info)."""
    from wheeldoc.binary.members import SingleFile

    for source, _ in facts.extension.sources:
        if library is not None and source.member(library) is not None:
            return source.path, None if isinstance(source, SingleFile) else library
    return facts.extension.label, None


def _torch(facts: AbiFacts) -> str:
    return f"{facts.torch_display} ({facts.torch_build})"


def _search_words(searched: tuple[str, ...]) -> list[str]:
    outside = [d for d in searched if not d.startswith(("$ORIGIN", "${ORIGIN}"))]
    inside = [d for d in searched if d.startswith(("$ORIGIN", "${ORIGIN}"))]
    out = []
    if inside:
        out.append(f"its search path {_folders(inside)} does not hold it")
    if outside:
        out.append(f"{_folders(outside)} is a folder of the build machine, not of the target")
    return out


def _folders(dirs: list[str], show: int = 8) -> str:
    """A search path as the message shows it: the first `show` folders, then how many more."""
    if len(dirs) <= show:
        return ":".join(dirs)
    return ":".join(dirs[:show]) + f" (and {len(dirs) - show:,} more folders)"


# -- WD201 ----------------------------------------------------------------------------------------

@rule("WD201", "needed-library-not-found", title="a needed library is found nowhere",
      severity=Severity.ERROR,
      examples=(Example(("abi", EXT, TCPU, *LOCAL), True),
                Example(("abi", f"{A}/ext/ext_missing.so", T11, *LOCAL), True),
                Example(("abi", EXT, T11, *LOCAL), False)))
def needed_library_not_found(facts: AbiFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Follows each extension object's DT_NEEDED entries the way ld.so does after `import torch`:
    libraries torch already loaded (matched by soname), then the requester's RUNPATH (or RPATH)
    with `$ORIGIN` expanded inside site-packages (the extension's wheel, torch's, the CUDA
    wheels), then the target platform's system libraries and the NVIDIA driver's. Reports a
    needed library found by none of them, with who needs it and what torch build was checked.
    It also reports a library torch itself needs and cannot find: then `import torch` fails.

    ## Why is this bad?
    It is the first failure: `import` stops with `ImportError: libc10_cuda.so: cannot open
    shared object file: No such file or directory` before any symbol is looked at. A CUDA
    extension against a CPU build of torch fails this way (a CPU torch ships no
    `libc10_cuda.so` and no CUDA runtime), whatever the version pins say.

    ## Example
    ```
    $ wheeldoc abi fixtures/abi/wheels/ext-1.0-cp311-cp311-linux_x86_64.whl \\
        fixtures/abi/wheels/fake_torch-2.11.0+cpu-cp311-cp311-linux_x86_64.whl \\
        --no-index --find-links fixtures/abi/wheels
    …ext-1.0-cp311-cp311-linux_x86_64.whl!ext/_C.so: WD201 error a needed library is found nowhere
      libc10_cuda.so, needed by ext/_C.so, is found nowhere: fake-torch 2.11.0+cpu (CPU-only)
      ships no libc10_cuda.so; its search path $ORIGIN/../torch/lib does not hold it; it is not
      a system library of the target
      fix: Install a CUDA build of torch (this one, fake-torch 2.11.0+cpu, is CPU-only)
    ```

    ## Fix
    Install the torch build the extension was compiled for (a CUDA build for a CUDA
    extension), ship the library in the wheel (`auditwheel repair` vendors it into `*.libs/`),
    or depend on the package that installs it.
    """
    seen = set()
    torch_names = {e.name for e in facts.site.files.values() if e.origin == "torch"}
    for failure in facts.torch_import.failures:
        key = ("torch", failure.soname, failure.needed_by)
        if key in seen:
            continue
        seen.add(key)
        msg = (f"{failure.soname}, needed by {failure.needed_by} of {_torch(facts)}, is found nowhere: "
               f"`import torch` itself fails, so nothing built against it loads")
        hint = _provider_hint(facts, failure.soname)
        yield _finding("WD201", facts, None, msg + hint, needed=failure.soname, needed_by=failure.needed_by,
                       in_torch_import=True,
                       fix=Fix(f"Install what provides {failure.soname} for {facts.torch_display}"
                               + (f" ({', '.join(facts.cuda_unknown)})" if facts.cuda_unknown else "")))
    described: dict[int, list[str]] = {}
    for result in facts.results:
        for m in result.missing_libraries:
            key = ("ext", m.soname, m.needed_by)
            if key in seen:
                continue
            seen.add(key)
            why = []
            if _TORCH_LIB.match(m.soname) and m.soname not in torch_names:
                why.append(f"{_torch(facts)} ships no {m.soname}")
            elif m.soname in torch_names:
                why.append(f"{_torch(facts)} ships it but `import torch` does not load it")
            else:
                why.append("`import torch` did not load it")
            if m.searched:
                said = described.get(id(m.searched))  # one search path (one tuple), many names
                if said is None:
                    said = described[id(m.searched)] = _search_words(m.searched)
                why += said
            why.append("it is not a system library of the target")
            msg = f"{m.soname}, needed by {m.needed_by}, is found nowhere: " + "; ".join(why)
            if _TORCH_LIB.match(m.soname) and "CPU" in facts.torch_build and "cuda" in m.soname:
                fix = Fix(f"Install a CUDA build of torch (this one, {facts.torch_display}, is CPU-only)")
            elif _TORCH_LIB.match(m.soname):
                fix = Fix(f"Install the torch build {m.needed_by} was compiled against")
            else:
                fix = Fix(f"Vendor {m.soname} into the wheel (auditwheel repair) or install the package "
                          "that provides it")
            yield _finding("WD201", facts, m.needed_by, msg + _provider_hint(facts, m.soname),
                           fix=fix, needed=m.soname, needed_by=m.needed_by)


def _provider_hint(facts: AbiFacts, soname: str) -> str:
    if facts.cuda_unknown and (soname.startswith(("libcu", "libnv", "libnccl")) or "cuda" in soname):
        return (f" (torch requires {', '.join(facts.cuda_unknown)}, whose libraries wheeldoc could not "
                "read: pass --find-links or --index-url to a place that has the wheels)")
    return ""


# -- WD202 ----------------------------------------------------------------------------------------

@rule("WD202", "undefined-symbol", title="a symbol the extension needs is defined nowhere",
      severity=Severity.ERROR,
      examples=(Example(("abi", EXT, T12, *LOCAL), True),
                Example(("abi", f"{A}/ext/ext_oldabi.so", T11, *LOCAL), True),
                Example(("abi", EXT, T11, *LOCAL), False),
                Example(("abi", f"{A}/ext/ext_weak.so", T11, *LOCAL), False)))
def undefined_symbol(facts: AbiFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Looks up every non-weak undefined symbol of the extension's objects in the scope ld.so
    searches: the interpreter (`Py*`), glibc, what torch loaded RTLD_GLOBAL, and the
    extension's whole DT_NEEDED closure (torch's libraries, the CUDA libraries, libstdc++).
    A definition counts when it is GLOBAL, WEAK or GNU_UNIQUE with default or protected
    visibility; a versioned reference (`cudaStreamQuery@libcudart.so.13`) needs that version.
    Reports each symbol defined nowhere, demangled, with the nearest exported relative (the
    same function under another signature) when torch has one.

    ## Why is this bad?
    With RTLD_NOW the import fails: `ImportError: …/_C.so: undefined symbol:
    _ZNK3c104cuda10CUDAStream5queryEv`. This is the story's trap 2 seen from the other side:
    what decides whether a wheel works with a torch build is whether the symbols it was
    compiled against are exported, not the version label of either.

    ## Example
    ```
    $ wheeldoc abi fixtures/abi/wheels/ext-1.0-cp311-cp311-linux_x86_64.whl \\
        fixtures/abi/wheels/fake_torch-2.12.0+cu130-cp311-cp311-linux_x86_64.whl \\
        --no-index --find-links fixtures/abi/wheels
    …ext-1.0-cp311-cp311-linux_x86_64.whl!ext/_C.so: WD202 error a symbol the extension needs is defined nowhere
      c10::cuda::CUDAStream::query() const is not exported by fake-torch 2.12.0+cu130 (CUDA 13.0):
      it exports c10::cuda::CUDAStream::query(bool) const from torch/lib/libc10_cuda.so
      (fake-torch 2.12.0+cu130 added a parameter to c10::cuda::CUDAStream::query)
      fix: Install the torch build ext/_C.so was compiled against, or rebuild it against fake-torch 2.12.0+cu130
    ```

    ## Fix
    Install the torch build the extension was compiled against, or rebuild the extension
    against this one.
    """
    for result in facts.results:
        if result.missing_libraries or facts.torch_import.failures:
            continue  # ld.so stops at the missing library (WD201) before any symbol
        count = 0
        for u in result.missing_symbols:
            for library in u.libraries:
                count += 1
                if count > MAX_SYMBOL_FINDINGS:
                    continue
                yield _symbol_finding(facts, u, library)
        if count > MAX_SYMBOL_FINDINGS:
            yield _finding("WD202", facts, result.root,
                           f"{count - MAX_SYMBOL_FINDINGS} more undefined symbols in the closure of "
                           f"{result.root} (not listed one by one)", count=count - MAX_SYMBOL_FINDINGS)
        for v in result.version_failures:
            if v.system:
                continue
            yield _finding("WD202", facts, v.library,
                           f"{v.library} needs version {v.version} of {v.file}, which that library does not "
                           f"define: ld.so stops with `version '{v.version}' not found`",
                           needed=v.version, file=v.file)


def _symbol_finding(facts: AbiFacts, u, library: str) -> Finding:
    demangled = facts.demangled.get(u.symbol, u.symbol)
    shown = demangled + (f"@{u.version}" if u.version else "")
    owned = torch_owned(u.symbol, demangled)
    rel = facts.relatives.get(u.symbol)
    from wheeldoc.binary.demangle import function_name

    qualified = function_name(demangled)
    namespace = "::".join(qualified.split("::")[:-1]) if "::" in qualified else ""
    if owned:
        msg = f"{shown} is not exported by {_torch(facts)}"
        if rel is not None:
            msg += (f": it exports {rel.demangled} from {rel.library} ({facts.torch_display} {rel.change} "
                    f"{function_name(rel.demangled)})")
        else:
            msg += ", under this or any other signature"
    else:
        msg = f"{shown}, needed by {library}, is defined by no library in its lookup scope"
    fix = Fix(f"Install the torch build {library} was compiled against, or rebuild it against "
              f"{facts.torch_display}") if owned else None
    return _finding("WD202", facts, library, msg, fix=fix, at_symbol=demangled, demangled=demangled, version=u.version, namespace=namespace,
                    relative=({"symbol": rel.symbol, "demangled": rel.demangled, "library": rel.library,
                               "change": rel.change} if rel else None),
                    symbol=u.symbol)


# -- WD203 ----------------------------------------------------------------------------------------

@rule("WD203", "cxx11-abi-mismatch", title="the C++ string ABI differs from torch's",
      severity=Severity.ERROR,
      examples=(Example(("abi", f"{A}/ext/ext_oldabi.so", T11, *LOCAL), True),
                Example(("abi", f"{A}/ext/ext_cxx11.so", T11, *LOCAL), False)))
def cxx11_abi_mismatch(facts: AbiFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Compares the `std::string` ABI of the torch symbols an extension cannot find with torch's:
    names with `std::__cxx11::` come from `_GLIBCXX_USE_CXX11_ABI=1`, names with the old
    `std::basic_string` (mangled `Ss`) from `=0`. torch's flavour is read from the names its
    libraries export.

    ## Why is this bad?
    The two flavours mangle differently, so every torch function taking or returning a
    `std::string` (or a `std::list`) is a different symbol: the import fails with an undefined
    symbol although a function of that name exists. PyTorch wheels switched to the cxx11 ABI
    (2.7 and later); an extension built with `-D_GLIBCXX_USE_CXX11_ABI=0` against an older
    torch cannot load on them.

    ## Example
    ```
    $ wheeldoc abi fixtures/abi/ext/ext_oldabi.so \\
        fixtures/abi/wheels/fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl \\
        --no-index --find-links fixtures/abi/wheels
    fixtures/abi/ext/ext_oldabi.so: WD203 error the C++ string ABI differs from torch's
      ext_oldabi.so was built with the pre-cxx11 string ABI (_GLIBCXX_USE_CXX11_ABI=0);
      fake-torch 2.11.0+cu130 uses the cxx11 ABI: 1 torch symbol cannot match
      | torch::make_name(std::basic_string<char, std::char_traits<char>, std::allocator<char> > const&)
      fix: Rebuild with -D_GLIBCXX_USE_CXX11_ABI=1
    ```

    ## Fix
    Rebuild the extension with the flavour torch uses (`torch._C._GLIBCXX_USE_CXX11_ABI`;
    `-D_GLIBCXX_USE_CXX11_ABI=1` for current PyTorch wheels).
    """
    if facts.torch_flavour is None:
        return
    for result in facts.results:
        if result.missing_libraries or facts.torch_import.failures:
            continue
        by_lib: dict[str, list[str]] = {}
        for u in result.missing_symbols:
            dem = facts.demangled.get(u.symbol, u.symbol)
            flavour = ref_flavour(dem)
            if flavour is not None and flavour != facts.torch_flavour and torch_owned(u.symbol, dem):
                for lib in u.libraries:
                    by_lib.setdefault(lib, []).append(dem)
        for lib, names in by_lib.items():
            other = "pre-cxx11" if facts.torch_flavour == "cxx11" else "cxx11"
            flag = "0" if other == "pre-cxx11" else "1"
            msg = (f"{lib} was built with the {other} string ABI (_GLIBCXX_USE_CXX11_ABI={flag}); "
                   f"{facts.torch_display} uses the {facts.torch_flavour} ABI: {len(names)} torch "
                   f"symbol{'s' if len(names) != 1 else ''} cannot match")
            want = "1" if facts.torch_flavour == "cxx11" else "0"
            yield _finding("WD203", facts, lib, msg, evidence=names[:6],
                           fix=Fix(f"Rebuild with -D_GLIBCXX_USE_CXX11_ABI={want}"),
                           flavour=other, torch_flavour=facts.torch_flavour)


# -- WD204 ----------------------------------------------------------------------------------------

@rule("WD204", "cuda-runtime-mismatch", title="the CUDA runtime major differs from torch's",
      severity=Severity.ERROR,
      examples=(Example(("abi", f"{A}/ext/ext_cudart12.so", T11, *LOCAL), True),
                Example(("abi", f"{A}/ext/ext_cudart13.so", T11, *LOCAL), False)))
def cuda_runtime_mismatch(facts: AbiFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Compares the CUDA runtime each extension object links (`libcudart.so.12`, `.so.13`, or a
    renamed copy vendored by auditwheel such as `libcudart.faf08d9a.so.13`) with the one torch
    loads (or, without it, torch's `version.cuda`).

    ## Why is this bad?
    An extension linking `libcudart.so.12` next to a CUDA 13 torch finds no such library
    (an error: the import fails), or, when it vendors its own copy, runs two CUDA runtimes in
    one process (a warning: memory and streams do not cross between them, and the driver must
    support both). The label on the wheel (`.cu133`, `+cu130`) says nothing reliable about
    this; the DT_NEEDED entries do.

    ## Example
    ```
    $ wheeldoc abi fixtures/abi/ext/ext_cudart12.so \\
        fixtures/abi/wheels/fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl \\
        --no-index --find-links fixtures/abi/wheels
    fixtures/abi/ext/ext_cudart12.so: WD204 error the CUDA runtime major differs from torch's
      ext_cudart12.so links the CUDA 12 runtime (libcudart.so.12); fake-torch 2.11.0+cu130
      loads CUDA 13 (libcudart.so.13)
      fix: Install the build of the extension for CUDA 13
    ```

    ## Fix
    Install the extension's build for torch's CUDA major (or the torch build for the
    extension's), so both use one runtime.
    """
    majors = facts.torch_cudart
    for link in facts.ext_cudart:
        if majors and link.major in majors:
            continue
        if link.vendored and not majors:
            continue  # its own runtime, and torch brings none: nothing to clash with
        if not majors:
            msg = (f"{link.library} links the CUDA {link.major} runtime ({link.soname}); "
                   f"{_torch(facts)} loads no CUDA runtime")
        else:
            msg = (f"{link.library} links the CUDA {link.major} runtime ({link.soname}); {facts.torch_display} "
                   f"loads CUDA {'/'.join(map(str, majors))} (libcudart.so.{majors[0]})")
        sev = Severity.WARNING if link.vendored else Severity.ERROR
        if link.vendored:
            msg += ": two CUDA runtimes in one process"
        yield _finding("WD204", facts, link.library, msg, severity=sev,
                       fix=Fix(f"Install the build of the extension for CUDA {majors[0]}" if majors
                               else "Install a CUDA build of torch"),
                       needed=link.soname, cuda_major=link.major, torch_cuda_majors=majors)


# -- WD205 ----------------------------------------------------------------------------------------

@rule("WD205", "pin-disagrees-with-binary", title="the wheel's torch pin disagrees with its binaries",
      severity=Severity.INFO,
      examples=(Example(("abi", EXT, TCPU, *LOCAL), True),
                Example(("abi", EXT, T12, *LOCAL), False),
                Example(("abi", EXT, T11, *LOCAL), False)))
def pin_disagrees(facts: AbiFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Evaluates the extension's own requirement on torch (its `Requires-Dist`, markers for the
    target) against the torch version checked, and reports when that answer differs from the
    loader's verdict, either way.

    ## Why is this bad?
    Pins are written by people and resolvers obey them; binaries obey the loader. A pin
    `torch==2.13.0` is satisfied by `2.13.0+cpu`, on which a CUDA extension cannot load; a pin
    `torch==2.14.0` turns away `2.14.1`, on which it loads fine. Information only: the binary
    decides.

    ## Example
    ```
    $ wheeldoc abi fixtures/abi/wheels/ext-1.0-cp311-cp311-linux_x86_64.whl \\
        fixtures/abi/wheels/fake_torch-2.11.0+cpu-cp311-cp311-linux_x86_64.whl \\
        --no-index --find-links fixtures/abi/wheels
    …ext-1.0-cp311-cp311-linux_x86_64.whl: WD205 info the wheel's torch pin disagrees with its binaries
      ext 1.0 requires fake-torch==2.11.0, which 2.11.0+cpu satisfies, yet its binaries cannot
      load on it: the binary decides
    ```

    ## Fix
    Trust the verdict; to install, override the pin (`uv pip install … --override` with the
    torch the binaries load on) or pick the release whose binaries match.
    """
    if facts.pin_satisfied is None or facts.verdict == "unknown" or \
            facts.pin_satisfied == (facts.verdict == "compatible"):
        return
    who = f"{facts.extension.name} {facts.extension.version}" if facts.extension.name else facts.extension.label
    if facts.pin_satisfied:
        msg = (f"{who} requires {facts.pin}, which {facts.torch.version} satisfies, yet its binaries cannot "
               f"load on it: the binary decides")
    else:
        msg = (f"{who} requires {facts.pin}, which {facts.torch.version} does not satisfy, yet its binaries "
               f"load on it: the binary decides")
    yield _finding("WD205", facts, None, msg, pin=facts.pin, pin_satisfied=facts.pin_satisfied,
                   verdict=facts.verdict,
                   fix=None if facts.pin_satisfied else Fix(
                       f"Override the pin to install it beside {facts.torch.name}=={facts.torch.version}",
                       command=f"uv pip install … --override <(echo '{facts.torch.name}=={facts.torch.version}')"))


# -- WD206 ----------------------------------------------------------------------------------------

@rule("WD206", "system-version-beyond-target", title="needs a glibc or libstdc++ newer than the target",
      severity=Severity.ERROR,
      examples=(Example(("abi", f"{A}/ext/ext_oldabi.so", T11, "--glibc", "2.28", *LOCAL), True),
                Example(("abi", f"{A}/ext/ext_cxx11.so", T11, "--libstdcxx", "3.4.19", *LOCAL), True),
                Example(("abi", f"{A}/ext/ext_cxx11.so", T11, "--glibc", "2.28", *LOCAL), False)))
def system_version_beyond_target(facts: AbiFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Checks the symbol versions the extension's objects require from system libraries
    (`GLIBC_2.34` from `libc.so.6`, `GLIBCXX_3.4.32` and `CXXABI_1.3.15` from `libstdc++.so.6`,
    `GCC_12.0.0` from `libgcc_s.so.1`) against the target platform: the manylinux policy of the
    wheels' tags (auditwheel's table: `manylinux_2_28` means glibc 2.28 and the GCC of that
    policy), or `--glibc` / `--libstdcxx`. The host's own libraries are never consulted.

    ## Why is this bad?
    ld.so checks version needs before any symbol: on an older system the import fails with
    `version 'GLIBC_2.34' not found (required by …)`. A wheel tagged `manylinux_2_28` that
    needs more than glibc 2.28 is mislabelled and breaks on the systems the tag promises.

    ## Example
    ```
    $ wheeldoc abi fixtures/abi/ext/ext_oldabi.so \\
        fixtures/abi/wheels/fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl --glibc 2.28 \\
        --no-index --find-links fixtures/abi/wheels
    fixtures/abi/ext/ext_oldabi.so: WD206 error needs a glibc or libstdc++ newer than the target
      ext_oldabi.so needs GLIBC_2.32 from libc.so.6; the target (--glibc 2.28) has up to
      GLIBC_2.28: ld.so stops with `version 'GLIBC_2.32' not found`
      fix: Build ext_oldabi.so in the manylinux image of the target, or raise the target if your systems are newer
    ```

    ## Fix
    Build in the manylinux image of the target (or an older one), or raise the target
    (`--glibc`, a newer manylinux tag) when the deployment systems really are newer.
    """
    for result in facts.results:
        grouped: dict[tuple[str, str], list] = {}
        for v in result.version_failures:
            if v.system:
                grouped.setdefault((v.library, v.file), []).append(v)
        for (lib, file), items in grouped.items():
            items.sort(key=lambda v: v.version)
            names = ", ".join(v.version for v in items)
            caps = ", ".join(sorted({v.cap for v in items if v.cap}))
            msg = (f"{lib} needs {names} from {file}; the target ({facts.target.label}) has up to {caps}: "
                   f"ld.so stops with `version '{items[-1].version}' not found`")
            yield _finding("WD206", facts, lib, msg, needed=[v.version for v in items], file=file,
                           target=facts.target.label,
                           fix=Fix(f"Build {lib} in the manylinux image of the target, or raise the target "
                                   "if your systems are newer"))


# -- WD207 ----------------------------------------------------------------------------------------

@rule("WD207", "wrong-target", title="the binaries cannot run on the explicit target",
      severity=Severity.ERROR,
      examples=(Example(("abi", EXT, T11, "--gpu", "gb10", *LOCAL), True),
                Example(("abi", EXT, T11, "--driver", "12.8", *LOCAL), True),
                Example(("abi", EXT, T11, "--gpu", "h200", "--driver", "580.95.05", *LOCAL), False)))
def wrong_target(facts: AbiFacts, ctx: Context) -> Iterator[Finding]:
    """
    ## What it does
    Checks the wheels against the target given explicitly (`--platform`, `--gpu`, `--driver`),
    as `kernels` and `doctor` do: the architecture of the wheels' platform tags against the
    target's (`--gpu gb10` implies linux-aarch64), and the CUDA runtime torch and the extension
    are built with against the CUDA version the driver supports.

    ## Why is this bad?
    An x86-64 wheel does not install on an aarch64 machine (pip refuses it; copied in, ld.so
    rejects the ELF class/machine). A CUDA 13 runtime on a driver that supports CUDA 12.x fails
    its first call with `cudaErrorInsufficientDriver` (CUDA's minor-version compatibility spans
    one major only): `import torch` works, `torch.cuda.is_available()` is False.

    ## Example
    ```
    $ wheeldoc abi fixtures/abi/wheels/ext-1.0-cp311-cp311-linux_x86_64.whl \
        fixtures/abi/wheels/fake_torch-2.11.0+cu130-cp311-cp311-linux_x86_64.whl --gpu gb10
    WD207 error the binaries cannot run on the explicit target
      ext 1.0 is built for x86_64 (linux_x86_64); the target (GB10) is linux-aarch64
    ```

    ## Fix
    Use the wheels built for the target's platform, or a driver that supports the CUDA major
    the wheels are built with (or wheels built for the driver's CUDA).
    """
    target = ctx.target
    want = target.platform.split("-", 1)[1] if target.platform and target.platform.startswith("linux-") else None
    if want:
        for side in (facts.extension, facts.torch):
            arches = {_tag_arch(t) for t in side.platform_tags} - {None, "any"}
            if arches and want not in arches:
                who = f"{side.name} {side.version}" if side.name and side.version else side.label
                yield _finding("WD207", facts, None,
                               f"{who} is built for {', '.join(sorted(arches))} ({', '.join(side.platform_tags)}); "
                               f"the target ({target.describe()}) is {target.platform}",
                               kind="platform", built_for=sorted(arches), target_platform=target.platform,
                               fix=Fix(f"Use the {want} wheels of {side.name or side.label}"))
    driver = target.driver
    if driver is None:
        return
    runtimes: list[tuple[str, int, str | None]] = []
    if facts.torch_cuda:
        runtimes.append((_torch(facts), int(facts.torch_cuda.split(".")[0]), facts.torch_cuda))
    for link in facts.ext_cudart:
        runtimes.append((f"{link.library} ({link.soname})", link.major, None))
    seen = set()
    for who, major, full in runtimes:
        if major <= driver.cuda[0] or (who, major) in seen:
            continue
        seen.add((who, major))
        yield _finding("WD207", facts, None,
                       f"{who} needs a CUDA {full or major} runtime; the driver ({driver.version or 'CUDA ' + driver.cuda_str}) "
                       f"supports up to CUDA {driver.cuda_str}: its first CUDA call fails with "
                       "cudaErrorInsufficientDriver (minor-version compatibility spans one major only)",
                       kind="driver", runtime_major=major, driver_cuda=driver.cuda_str,
                       fix=Fix(f"Install a driver that supports CUDA {major}, or wheels built for CUDA {driver.cuda[0]}"))


def _tag_arch(tag: str) -> str | None:
    from wheeldoc.data.abi_tables import policy_for_tag

    found = policy_for_tag(tag)
    if found:
        return found[1]
    if tag.startswith("linux_"):
        return tag[len("linux_"):]
    return "any" if tag == "any" else None


_CHECKS = {fn.rule.code: fn for fn in (needed_library_not_found, undefined_symbol, cxx11_abi_mismatch,  # type: ignore[attr-defined]
                                       cuda_runtime_mismatch, pin_disagrees, system_version_beyond_target,
                                       wrong_target)}


def run(facts: AbiFacts, ctx: Context) -> list[Finding]:
    """Every enabled WD2xx rule, without importing the other families' rule modules (start-up).
    A finding on an object the package does not load for this target (abi/facts.run_time_choices)
    is information, and says why."""
    found = [f for code, check in sorted(_CHECKS.items()) if ctx.enabled(code) for f in check(facts, ctx)]
    idle = not_loaded_here(facts)
    tried = none_of_the_alternatives(facts)
    if not idle and not tried:
        return found
    # One warning per group of alternatives, the other failures are notes; the warning names a
    # library the site does not ship (FFmpeg's, not the package's own core it loads first).
    shipped = {e.name for e in facts.site.files.values()}

    def ships(f: Finding) -> bool:  # the missing library is one the site has (loaded first by Python)
        needed = f.data.get("needed")
        return any(n in shipped for n in ([needed] if isinstance(needed, str) else needed or ()) if isinstance(n, str))

    warn: dict[str, Finding] = {}
    for f in found:
        lib = f.data.get("library")
        if isinstance(lib, str) and lib in tried and lib not in idle and f.severity == Severity.ERROR:
            best = warn.get(tried[lib])
            if best is None or (ships(best) and not ships(f)):
                warn[tried[lib]] = f
    out = []
    for f in found:
        lib = f.data.get("library")
        reason = idle.get(lib) if isinstance(lib, str) else None
        if reason is None and isinstance(lib, str) and lib in tried and f.severity == Severity.ERROR:
            severity = Severity.WARNING if warn.get(tried[lib]) is f else Severity.INFO
            out.append(Finding(f.rule, f.title, severity, f.location,
                               f"{f.message} ({tried[lib]})", f.evidence, f.fix, {**f.data, "alternatives": tried[lib]}))
            continue
        if reason is None or f.severity == Severity.INFO:
            out.append(f)
            continue
        out.append(Finding(f.rule, f.title, Severity.INFO, f.location,
                           f"{f.message} (not loaded for this target: {reason})", f.evidence, f.fix,
                           {**f.data, "not_loaded_here": reason}))
    return out


def none_of_the_alternatives(facts: AbiFacts) -> dict[str, str]:
    """Objects of a group the package tries in turn (chosen: unknown) where none loads: the
    package lacks that feature here (torchcodec without a system FFmpeg), its import does not fail."""
    members: dict[str, list] = {}
    for r in facts.results:
        c = facts.choices.get(r.root)
        if c is not None and c.group and c.chosen is None:
            members.setdefault(c.group, []).append(r)
    out: dict[str, str] = {}
    for group, results in members.items():
        if any(facts.root_verdict(r) == "compatible" for r in results):
            continue
        for r in results:
            for k in set(r.checked) | {r.root}:
                out.setdefault(k, f"none of the {len(results)} alternatives {group} loads here; the package "
                                  "tries them in turn at run time, so only the feature that needs one is missing")
    return out


def not_loaded_here(facts: AbiFacts) -> dict[str, str]:
    """Extension objects (and what only they load) that do not count for this target: not chosen,
    or alternatives whose group has a member that loads."""
    group_ok: dict[str, bool] = {}
    for r in facts.results:
        c = facts.choices.get(r.root)
        if c is not None and c.group:
            group_ok[c.group] = group_ok.get(c.group, False) or facts.root_verdict(r) == "compatible"
    counted: set[str] = set()
    idle: dict[str, str] = {}
    for r in facts.results:
        c = facts.choices.get(r.root)
        skip = c is not None and (c.chosen is False or (c.chosen is None and group_ok.get(c.group or "", False)))
        keys = set(r.checked) | {r.root}
        if skip:
            for k in keys:
                idle.setdefault(k, c.reason)
        else:
            counted |= keys
    return {k: v for k, v in idle.items() if k not in counted}
