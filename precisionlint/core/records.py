"""Bases for the plain record classes that `check` builds (the script model, its values and scopes).

They were dataclasses. Every worker process of a `check` run imports the script model's modules, and
`dataclasses` costs it about 7 ms of import (it pulls in inspect, dis and tokenize) plus about 0.35 ms per
decorated class, whose methods it generates with exec(): with about 27 classes, some 16 ms of every worker's
start-up and of every one-file run (measured with `python -X importtime`). So the classes write their __init__ by
hand, and inherit here the parts a dataclass would have generated: its repr, and where it compared by value its
equality (and hash, for a frozen one). Equality is otherwise identity, as with `@dataclass(eq=False)`.

    class Record        identity equality, hashable by identity          (@dataclass(eq=False))
    class ValueRecord   equal when the class and every field are equal;
                        unhashable, as the record is mutable           (@dataclass)
    class FrozenRecord  equal as ValueRecord, hashed on the fields      (@dataclass(frozen=True); not enforced)

A subclass lists its fields in `_fields`, in the dataclass's order (the repr shows them, in that order; pass
`_repr_fields` to leave some out of the repr, as `field(repr=False)` did).
"""

from __future__ import annotations

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, ClassVar

_IN_REPR: set[int] = set()  # records being shown: a record reached again inside its own repr is shown as "..."


class Record:
    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _repr_fields: ClassVar[tuple[str, ...] | None] = None  # None: every field

    def __repr__(self) -> str:
        key = id(self)
        if key in _IN_REPR:
            return "..."
        _IN_REPR.add(key)
        try:
            names = self._fields if self._repr_fields is None else self._repr_fields
            shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
            return f"{type(self).__qualname__}({shown})"
        finally:
            _IN_REPR.discard(key)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)


def _equal(self: Record, other: object) -> bool:
    """A dataclass's __eq__: the same class and equal fields, else NotImplemented (so `x == "text"` is False)."""
    if other.__class__ is self.__class__:
        return self._values() == other._values()  # type: ignore[attr-defined, no-any-return]
    return NotImplemented


class ValueRecord(Record):
    __slots__ = ()
    __eq__ = _equal
    __hash__ = None  # type: ignore[assignment]


class FrozenRecord(Record):
    __slots__ = ()
    __eq__ = _equal

    def __hash__(self) -> int:
        return hash(self._values())
