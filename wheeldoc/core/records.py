"""`typing.NamedTuple`'s class syntax without importing `typing`.

`typing` imports `re` (and with it `enum`): about 5 ms of a command's start-up, which
`wheeldoc kernels --list` (raced against cuobjdump, bench/bench_kernels.py) pays for the
record types of the modules it reads with. Those modules write

    TYPE_CHECKING = False
    if TYPE_CHECKING:
        from typing import NamedTuple
    else:
        from wheeldoc.core.records import NamedTuple

so type checkers see `typing.NamedTuple`, and at run time the class statement builds the same
class `typing` would: `collections.namedtuple` over the annotated fields (with their defaults),
the class body's other names (methods, properties, constants, the docstring) set on it.
"""

from __future__ import annotations

from collections import namedtuple

_SPECIAL = frozenset({"__module__", "__qualname__", "__annotations__", "__orig_bases__",
                      "__classcell__", "__static_attributes__", "__firstlineno__"})
_PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields",
                         "_field_defaults", "_make", "_replace", "_asdict", "_source"})


class _NamedTupleMeta(type):
    def __new__(mcls, name: str, bases: tuple, ns: dict):
        if ns.get("_root"):
            return super().__new__(mcls, name, bases, ns)
        fields = list(ns.get("__annotations__", {}))
        defaults = []
        for field in fields:
            if field in ns:
                defaults.append(ns[field])
            elif defaults:
                raise TypeError(f"non-default field {field!r} follows a default field in {name}")
        cls = namedtuple(name, fields, defaults=defaults, module=ns.get("__module__"))
        cls.__annotations__ = dict(ns.get("__annotations__", {}))
        cls.__qualname__ = ns.get("__qualname__", name)
        for key, value in ns.items():
            if key in _PROHIBITED:
                raise AttributeError(f"cannot overwrite NamedTuple attribute {key}")
            if key not in _SPECIAL and key not in fields:
                setattr(cls, key, value)
        return cls


class NamedTuple(metaclass=_NamedTupleMeta):
    """Subclass it as `typing.NamedTuple`: the class statement gives a namedtuple class."""

    _root = True
