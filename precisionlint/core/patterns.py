"""A module's regular expression, compiled when it is first used rather than when the module is imported.

Compiling a pattern costs 0.1 to 1 ms, and a one-file `check` imports modules holding some forty of them, most of
which that file never needs (a TOML config needs no pin-file pattern, a script that names no optimizer none of the
receivers' name patterns). A module writes

    _WORD = lazy_pattern(globals(), "_WORD", r"...", re.IGNORECASE)

and uses `_WORD.match(...)` as it would use the compiled pattern. The first use compiles it and puts the compiled
pattern in the module's namespace under that name, so later uses in the module are the compiled pattern's own,
at no cost; a module that imported the name keeps this object, which forwards each call.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, AnyStr, Generic
else:
    from precisionlint.core.light_typing import AnyStr, Generic


class LazyPattern(Generic[AnyStr]):
    __slots__ = ("_namespace", "_name", "_source", "_flags", "_compiled")

    def __init__(self, namespace: dict[str, Any], name: str, source: AnyStr, flags: int = 0) -> None:
        self._namespace = namespace
        self._name = name
        self._source: AnyStr = source
        self._flags = flags
        self._compiled: re.Pattern[AnyStr] | None = None

    @property
    def compiled(self) -> re.Pattern[AnyStr]:
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self._source, self._flags)
            if self._namespace.get(self._name) is self:
                self._namespace[self._name] = compiled
        return compiled

    @property
    def pattern(self) -> AnyStr:
        return self._source

    @property
    def flags(self) -> int:
        return self.compiled.flags

    def match(self, string: AnyStr, *span: int) -> re.Match[AnyStr] | None:
        return self.compiled.match(string, *span)

    def fullmatch(self, string: AnyStr, *span: int) -> re.Match[AnyStr] | None:
        return self.compiled.fullmatch(string, *span)

    def search(self, string: AnyStr, *span: int) -> re.Match[AnyStr] | None:
        return self.compiled.search(string, *span)

    def findall(self, string: AnyStr, *span: int) -> list[Any]:
        return self.compiled.findall(string, *span)

    def finditer(self, string: AnyStr, *span: int) -> Iterator[re.Match[AnyStr]]:
        return self.compiled.finditer(string, *span)

    def split(self, string: AnyStr, maxsplit: int = 0) -> list[AnyStr | Any]:
        return self.compiled.split(string, maxsplit)

    def sub(self, repl: Any, string: AnyStr, count: int = 0) -> AnyStr:
        return self.compiled.sub(repl, string, count)

    def subn(self, repl: Any, string: AnyStr, count: int = 0) -> tuple[AnyStr, int]:
        return self.compiled.subn(repl, string, count)


def lazy_pattern(namespace: dict[str, Any], name: str, source: AnyStr, flags: int = 0) -> LazyPattern[AnyStr]:
    """`re.compile(source, flags)` when first used, as `namespace[name]` from then on (see the module's text)."""
    return LazyPattern(namespace, name, source, flags)


def pattern_on_use(source: AnyStr, flags: int = 0) -> LazyPattern[AnyStr]:
    """`re.compile(source, flags)` when first used, for a pattern held in a table rather than by a name of the
    module: every call goes through the returned object."""
    return LazyPattern({}, "", source, flags)
