"""core.light_typing's named tuples behave as typing.NamedTuple's for every use a check makes of them."""

from __future__ import annotations

import pickle
import typing

import pytest

from precisionlint.core import light_typing
from precisionlint.core.model import Finding, Severity, Span


def _pair(base: type) -> type:
    """The same class body on either base."""

    class Point(base):  # type: ignore[valid-type, misc]
        """A point with an optional label."""

        x: int
        y: int
        label: str = "origin"
        tags: tuple[str, ...] = ()

        @classmethod
        def at(cls, x: int) -> Point:
            return cls(x, x)

        @property
        def norm(self) -> int:
            return abs(self.x) + abs(self.y)

        def moved(self, dx: int) -> Point:
            return self._replace(x=self.x + dx)

    return Point


LIGHT, TYPED = _pair(light_typing.NamedTuple), _pair(typing.NamedTuple)


def test_a_light_named_tuple_is_the_namedtuple_typing_builds() -> None:
    for attribute in ("_fields", "_field_defaults", "__doc__", "__name__", "__qualname__", "__module__"):
        assert getattr(LIGHT, attribute) == getattr(TYPED, attribute), attribute
    assert LIGHT.__mro__[1:] == TYPED.__mro__[1:] == (tuple, object)
    light, typed = LIGHT(1, -2), TYPED(1, -2)
    assert tuple(light) == tuple(typed) == (1, -2, "origin", ())
    assert repr(light) == repr(typed) == "Point(x=1, y=-2, label='origin', tags=())"
    assert light.norm == typed.norm == 3
    assert tuple(LIGHT.at(4)) == tuple(TYPED.at(4)) and isinstance(LIGHT.at(4), LIGHT)
    assert tuple(light.moved(2)) == tuple(typed.moved(2)) and isinstance(light.moved(2), LIGHT)
    assert light._asdict() == typed._asdict()
    assert light == (1, -2, "origin", ()) and hash(light) == hash(typed)
    assert LIGHT(y=2, x=1, label="a") == LIGHT._make([1, 2, "a", ()])
    assert sorted([LIGHT(2, 0), LIGHT(1, 5)]) == [LIGHT(1, 5), LIGHT(2, 0)]


def test_a_light_named_tuple_refuses_what_typing_refuses() -> None:
    with pytest.raises(TypeError):
        class Bad(light_typing.NamedTuple):
            x: int = 0
            y: int

    with pytest.raises(AttributeError):
        class Clash(light_typing.NamedTuple):
            x: int

            def _replace(self) -> None:  # type: ignore[override]
                pass

    with pytest.raises(TypeError):
        class Mixed(light_typing.NamedTuple, int):  # type: ignore[misc]
            x: int


def test_the_records_a_check_sends_between_processes_pickle_as_before() -> None:
    span = Span(3, 5, 3, 9)
    finding = Finding("PL201", "missing-grad-scaler", Severity.ERROR, "train.py", span, "message")
    assert isinstance(span, tuple) and type(span).__module__ == "precisionlint.core.model"
    for value in (span, finding, Span.point(2, 4)):
        again = pickle.loads(pickle.dumps(value))
        assert again == value and type(again) is type(value)
    assert pickle.loads(pickle.dumps(finding)).span.end_column == 9


def test_generic_accepts_a_subscript_and_adds_nothing() -> None:
    class Box(light_typing.Generic[light_typing.AnyStr]):  # type: ignore[misc]
        __slots__ = ("value",)

    assert Box.__mro__ == (Box, light_typing.Generic, object)
    box = Box()
    box.value = "x"
    assert not hasattr(box, "__dict__")
