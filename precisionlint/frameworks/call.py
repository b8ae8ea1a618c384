"""A framework's constructor call, the one type of the frameworks that a Python file's settings pass needs
(frameworks.python_calls, through the generated calls_catalog.py): it sits here, apart from base.py's config types,
so that checking a script imports none of those."""

from __future__ import annotations

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from precisionlint.core.light_typing import NamedTuple


class Call(NamedTuple):
    """A constructor (or function) whose keyword arguments are a framework's settings: a module's PYTHON_CALLS."""

    modules: tuple[str, ...]  # the callee must resolve into one of these packages
    names: tuple[str, ...]  # ...and be named one of these
    framework: str
    keywords: dict[str, str]  # keyword argument -> canonical name
    positional: str | None = None  # canonical name of the first positional argument, if it has one
