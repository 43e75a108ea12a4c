"""C++ demangling through a real demangler, many names at a time.

In-process through the `cxxfilt` package (libstdc++'s `__cxa_demangle`); when it cannot load,
one batch call of binutils' `c++filt`. Names longer than `MAX_INPROCESS` go to `c++filt` too:
a hostile name must never be able to crash this process inside the C demangler (both
demanglers also refuse names beyond about a thousand components). A name that no demangler
understands is returned unchanged. The output is c++filt's: `__cxa_demangle`'s short forms of
the standard substitutions (`std::string`, `std::ostream`, ...) are written out in full, so
both backends give the same text.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import lru_cache
from typing import Callable, Iterable

MAX_INPROCESS = 4096  # libtorch's longest exported name is 574 characters
CXXFILT_TIMEOUT_S = 60

# __cxa_demangle's abbreviations of the Ss/Si/So/Sd substitutions, and c++filt's full forms.
_VERBOSE = {
    "std::string": "std::basic_string<char, std::char_traits<char>, std::allocator<char> >",
    "std::istream": "std::basic_istream<char, std::char_traits<char> >",
    "std::ostream": "std::basic_ostream<char, std::char_traits<char> >",
    "std::iostream": "std::basic_iostream<char, std::char_traits<char> >",
}
_SHORT = re.compile(r"\bstd::(?:string|istream|ostream|iostream)\b")


def demangle(name: str) -> str:
    """The demangled form of one name (unchanged when it is not a mangled C++ name)."""
    return demangle_many([name])[name]


def demangle_many(names: Iterable[str]) -> dict[str, str]:
    """Mangled name -> demangled name, for every distinct name given."""
    out: dict[str, str] = {}
    rest: list[str] = []
    inproc = _inprocess()
    for name in names:
        if name in out:
            continue
        if not name.startswith("_Z"):
            out[name] = name
        elif inproc is not None and len(name) <= MAX_INPROCESS:
            out[name] = inproc(name)
        else:
            rest.append(name)
    if rest:
        out.update(zip(rest, _cxxfilt_batch(rest)))
    return out


def backend() -> str:
    """Which demangler `demangle_many` uses for ordinary names: "cxxfilt", "c++filt" or "none"."""
    if _inprocess() is not None:
        return "cxxfilt"
    return "c++filt" if shutil.which("c++filt") else "none"


def function_name(demangled: str) -> str:
    """`ns::Class::method` from `ns::Class::method(int, bool) const`: the name without its
    parameter list, qualifiers and (for templates) return type; non-functions unchanged."""
    text = demangled.strip()
    if not text.endswith((")", "const", "volatile", "&", "&&", "noexcept")):
        return text
    close = _last_params_close(text)
    if close is None:
        return text
    open_ = _matching_open(text, close)
    if open_ is None or open_ == 0:
        return text
    head = text[:open_]
    # A return type precedes a template function's name: cut at the last top-level space.
    depth, cut = 0, 0
    for i, ch in enumerate(head):
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif ch == " " and depth == 0 and not head[:i].endswith("operator"):
            cut = i + 1
    return head[cut:]


# -- backends ------------------------------------------------------------------
@lru_cache(maxsize=1)
def _inprocess() -> Callable[[str], str] | None:
    demangleb = _cxa_demangle()
    if demangleb is None:
        try:
            import cxxfilt  # noqa: PLC0415 (loads libstdc++ through ctypes: import lazily)

            cxxfilt.demangle("_Z1fv")  # fails here when libstdc++ could not be found
        except Exception:  # noqa: BLE001 (any failure to load means: use c++filt)
            return None
        demangleb = cxxfilt.demangleb

    def run(name: str) -> str:
        try:
            text = demangleb(name.encode("utf-8", "surrogateescape")).decode("utf-8", "replace")
        except Exception:  # noqa: BLE001 (InvalidName and friends: leave the name as it is)
            return name
        return _SHORT.sub(lambda m: _VERBOSE[m.group(0)], text) if "std::" in text else text

    return run


def _cxa_demangle() -> Callable[[bytes], bytes] | None:
    """libstdc++'s `__cxa_demangle` by its soname, as the `cxxfilt` package calls it, without the
    package's `ctypes.util.find_library` (which runs `ldconfig -p` twice: ~25 ms). None when
    libstdc++.so.6 does not load (then the package's search is tried)."""
    try:
        import ctypes  # noqa: PLC0415

        cxx = ctypes.CDLL("libstdc++.so.6")
        free = ctypes.CDLL(None).free
        fn = cxx.__cxa_demangle
    except (OSError, AttributeError):
        return None
    free.argtypes = [ctypes.c_void_p]
    fn.restype = ctypes.c_void_p
    fn.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int)]

    def demangleb(name: bytes) -> bytes:
        if not name.startswith(b"_Z"):
            return name
        status = ctypes.c_int()
        ptr = fn(name, None, None, ctypes.byref(status))
        try:
            if status.value != 0 or not ptr:
                raise ValueError(f"__cxa_demangle status {status.value}")
            return ctypes.string_at(ptr)
        finally:
            if ptr:
                free(ptr)

    try:
        if demangleb(b"_Z1fv") != b"f()":
            return None
    except ValueError:
        return None
    return demangleb


def _cxxfilt_batch(names: list[str]) -> list[str]:
    """Demangle through one `c++filt` process; names that cannot travel on a line stay as-is."""
    tool = shutil.which("c++filt")
    sendable = [n for n in names if "\n" not in n and "\r" not in n]
    if tool is None or not sendable:
        return list(names)
    try:
        proc = subprocess.run([tool], input="\n".join(sendable) + "\n", capture_output=True,
                              text=True, encoding="utf-8", errors="replace",
                              timeout=CXXFILT_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return list(names)
    lines = proc.stdout.split("\n")[: len(sendable)]
    if proc.returncode != 0 or len(lines) != len(sendable):
        return list(names)
    done = dict(zip(sendable, lines))
    return [done.get(n, n) for n in names]


# -- parsing demangled text ----------------------------------------------------
def _last_params_close(text: str) -> int | None:
    """Index of the `)` closing the parameter list (before any cv/ref/noexcept qualifiers)."""
    end = len(text)
    while True:
        stripped = text[:end].rstrip()
        for suffix in (" const", " volatile", " &&", " &", " noexcept"):
            if stripped.endswith(suffix):
                end = len(stripped) - len(suffix)
                break
        else:
            return len(stripped) - 1 if stripped.endswith(")") else None


def _matching_open(text: str, close: int) -> int | None:
    depth = 0
    for i in range(close, -1, -1):
        ch = text[i]
        if ch == ")":
            depth += 1
        elif ch == "(":
            depth -= 1
            if depth == 0:
                return i
    return None
