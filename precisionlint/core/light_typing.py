"""What the modules of a `check` need from `typing` at run time, without importing `typing`.

Importing `typing` costs a one-file `check` about 5 ms of CPU (measured: `python -c "import typing"` against
`python -c pass`, 40 alternated runs: 46.2 against 40.9 ms), an eighth of the interpreter's own start-up, and the
modules of a check use it for annotations, which `from __future__ import annotations` never evaluates. So a module
on a check's path writes

    from precisionlint.core.light_typing import TYPE_CHECKING

    if TYPE_CHECKING:
        from typing import Any, NamedTuple
    else:
        from precisionlint.core.light_typing import NamedTuple

Type checkers read the first branch (mypy takes any name TYPE_CHECKING as true); at run time the second gives the
few things a class statement evaluates:

    NamedTuple   `class Span(NamedTuple): start: int; end: int = 0` builds the collections.namedtuple that
                 typing.NamedTuple builds (fields in the order of the annotations, defaults from the class body,
                 the body's methods and docstring copied onto it), so instances are the same tuples: equal,
                 hashed, unpacked, pickled and shown alike. Generic named tuples are not supported.
    Generic      a base class that accepts a subscript (`Generic[AnyStr]`) and adds nothing, as at run time
                 typing.Generic adds nothing a class of this package uses.
    AnyStr       a placeholder for the subscript above.

tests/test_light_typing.py compares these classes with typing's; tests/test_startup.py fails when a one-file check
imports `typing` again.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Callable

TYPE_CHECKING = False

_make_namedtuple: Callable[..., type] = namedtuple  # called with names known only at run time

# The names a named tuple's class body may not redefine (typing's list), and those it does not copy.
_PROHIBITED = frozenset({"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
                         "_make", "_replace", "_asdict", "_source"})
_NOT_COPIED = frozenset({"__module__", "__name__", "__annotations__"})


class _NamedTupleMeta(type):
    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, object]) -> type:
        if not bases:  # NamedTuple itself
            return super().__new__(mcs, name, bases, namespace)
        if bases != (NamedTuple,):
            raise TypeError("a named tuple class can only inherit from NamedTuple")
        annotations: dict[str, object] = namespace.get("__annotations__", {})  # type: ignore[assignment]
        fields = list(annotations)
        defaults = [namespace[field] for field in fields if field in namespace]
        with_default = [field in namespace for field in fields]
        if with_default != sorted(with_default):
            raise TypeError(f"{name}: a field without a default follows one with a default")
        built = _make_namedtuple(name, fields, defaults=defaults, module=str(namespace["__module__"]))
        for key, value in namespace.items():
            if key in _PROHIBITED:
                raise AttributeError(f"cannot overwrite NamedTuple attribute {key}")
            if key not in _NOT_COPIED and key not in fields:
                setattr(built, key, value)
        return built


class NamedTuple(metaclass=_NamedTupleMeta):
    """Base of a class-syntax named tuple (see the module's text); the class built is a plain namedtuple."""


class Generic:
    """Base of a generic class at run time: `Generic[AnyStr]` is Generic, which adds nothing."""

    __slots__ = ()

    def __class_getitem__(cls, item: object) -> type:
        return cls


AnyStr = "AnyStr"

