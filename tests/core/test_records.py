"""core.records.NamedTuple builds the class typing.NamedTuple builds (without importing typing)."""

from __future__ import annotations

import pickle
import typing

import pytest

from wheeldoc.core.records import NamedTuple


class Light(NamedTuple):
    """A record."""

    a: int
    b: str
    c: int | None = None

    LIMIT = 3

    @property
    def twice(self) -> int:
        return self.a * 2


class Typed(typing.NamedTuple):
    """A record."""

    a: int
    b: str
    c: int | None = None

    LIMIT = 3

    @property
    def twice(self) -> int:
        return self.a * 2


def test_same_class_as_typing():
    for cls in (Light, Typed):
        r = cls(2, "x")
        assert r == (2, "x", None) and r.c is None and r.twice == 4 and cls.LIMIT == 3
        assert cls._fields == ("a", "b", "c") and cls._field_defaults == {"c": None}
        assert cls.__doc__ == "A record." and cls.__module__ == __name__
        assert list(cls.__annotations__) == ["a", "b", "c"]
        assert isinstance(r, tuple) and r._replace(a=5).twice == 10
        assert pickle.loads(pickle.dumps(r)) == r
        assert not hasattr(r, "__dict__")
    assert repr(Light(1, "y")) == "Light(a=1, b='y', c=None)"


def test_misuse_is_refused_as_typing_refuses_it():
    with pytest.raises(TypeError):
        class Bad(NamedTuple):  # noqa: F841
            a: int = 1
            b: int
    with pytest.raises(AttributeError):
        class Worse(NamedTuple):  # noqa: F841
            a: int

            def _make(self):
                return None
