"""Version numbers and the ranges a requirement allows, reduced to what the rules ask: a floor and a ceiling.

Only the release part of a version counts (`2.4.1+cu121` is 2.4.1, `2.5.0rc1` is 2.5.0): the rules compare
against the release in which an API or spelling appeared. Specifiers follow PEP 440 (`==`, `>=`, `>`, `<=`,
`<`, `~=`, `==X.*`; `!=` does not narrow a range), Poetry (`^1.2`, `~1.2`, `1.2.*`, a bare `1.2.3`) and conda
(`pytorch=1.13` means 1.13.*). A specifier that cannot be read leaves that side of the range unknown.
"""

from __future__ import annotations

import re

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.patterns import lazy_pattern

if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from precisionlint.core.light_typing import NamedTuple

Version = tuple[int, ...]

_RELEASE = lazy_pattern(globals(), "_RELEASE", r"\s*v?(\d+(?:\.\d+)*)(\.\*)?")


def parse_version(text: str) -> tuple[Version, bool] | None:
    """(release, wildcard) of `2.4`, `2.4.1+cu121`, `2.*`; None when it is not a version."""
    match = _RELEASE.match(text)
    if match is None:
        return None
    try:
        release = tuple(int(part) for part in match.group(1).split("."))
    except ValueError:  # a part of more than 4,300 digits, which Python refuses to read: not a version
        return None
    return _trim(release), match.group(2) is not None


def _trim(version: Version) -> Version:
    """2.4.0 == 2.4: trailing zeros do not change the order."""
    end = len(version)
    while end > 1 and version[end - 1] == 0:
        end -= 1
    return version[:end]


def show(version: Version) -> str:
    return ".".join(str(part) for part in (version if len(version) > 1 else (*version, 0)))


def _next_series(version: Version, length: int) -> Version:
    """The first release after the series `version[:length]`: (2, 4, 1) and 2 -> (2, 5)."""
    head = list(version[:length]) + [0] * (length - len(version[:length]))
    head[-1] += 1
    return _trim(tuple(head))


class Bound(NamedTuple):
    version: Version
    inclusive: bool


class VersionRange(NamedTuple):
    """The versions a declaration allows. `floor`/`ceiling` None: unbounded on that side (or unknown).
    `source` says where it was declared, for messages ("requirements.txt: torch==1.13.1")."""

    floor: Bound | None
    ceiling: Bound | None
    source: str = ""

    def all_below(self, version: Version) -> bool:
        """Every allowed version is older than `version` (so an API that appeared in it is missing)."""
        if self.ceiling is None:
            return False
        top = self.ceiling
        return top.version < _trim(version) or (top.version == _trim(version) and not top.inclusive)

    def all_at_least(self, version: Version) -> bool:
        """Every allowed version is `version` or newer."""
        if self.floor is None:
            return False
        return self.floor.version >= _trim(version)

    def admits_below(self, version: Version) -> bool:
        """The declared floor is older than `version`: the range promises a version that lacks what
        `version` introduced (`torch>=2.2` and an API of 2.3). A range without a floor promises nothing."""
        return self.floor is not None and self.floor.version < _trim(version)

    def union(self, other: VersionRange) -> VersionRange:
        """The loosest reading of two declarations of one package (requirements.txt and pyproject.toml may
        both name torch): a rule that fires on `all_below` or trusts `all_at_least` stays right for either."""
        if self.floor is None or other.floor is None:
            floor = None
        else:
            floor = min(self.floor, other.floor, key=lambda b: (b.version, not b.inclusive))
        if self.ceiling is None or other.ceiling is None:
            ceiling = None
        else:
            ceiling = max(self.ceiling, other.ceiling, key=lambda b: (b.version, b.inclusive))
        # The declaration that sets the floor (or, without one, the ceiling) speaks for the union in messages.
        if self.source == other.source:
            source = self.source
        elif floor is not None:
            source = self.source if floor == self.floor else other.source
        else:
            source = self.source if self.floor is None else other.source
        return VersionRange(floor, ceiling, source)

    def declared(self, package: str) -> str:
        """How the declaration reads, and where: "pytorch-lightning==1.9.5 (requirements.txt)"."""
        where, _, written = self.source.partition(": ")
        if not written:
            return f"{package}{self.describe()}"
        return f"{written} ({where})"

    def describe(self) -> str:
        if self.floor and self.ceiling and self.floor.version == self.ceiling.version and self.ceiling.inclusive:
            return f"=={show(self.floor.version)}"
        parts = []
        if self.floor:
            parts.append((">=" if self.floor.inclusive else ">") + show(self.floor.version))
        if self.ceiling:
            parts.append(("<=" if self.ceiling.inclusive else "<") + show(self.ceiling.version))
        return ",".join(parts) or "any version"


_CLAUSE = lazy_pattern(globals(), "_CLAUSE", r"^\s*(===|==|~=|!=|>=|<=|>|<|\^|~|=)?\s*(.+?)\s*$")


def parse_specifier(text: str, source: str = "", conda: bool = False) -> VersionRange | None:
    """The range of a specifier (`>=1.12,<2.0`, `^2.1`, `==2.1.*`, conda `1.13.*`), or None when it says
    nothing that can be read (empty, `*`, a URL)."""
    floor: Bound | None = None
    ceiling: Bound | None = None
    read_any = False
    for clause in re.split(r"[,\s]+(?=[<>=!~^\d])|,", text):
        clause = clause.strip()
        if not clause or clause == "*":
            continue
        match = _CLAUSE.match(clause)
        if match is None:
            return None
        operator, rest = match.group(1) or "", match.group(2)
        parsed = parse_version(rest)
        if parsed is None:
            return None
        version, wildcard = parsed
        low: Bound | None = None
        high: Bound | None = None
        written = tuple(int(p) for p in re.findall(r"\d+", rest.split("+")[0])) or version
        if operator in ("==", "===") or (operator == "" and not conda):
            if wildcard:
                low, high = Bound(version, True), Bound(_next_series(written, len(written)), False)
            else:
                low, high = Bound(version, True), Bound(version, True)
        elif operator == "=" or (operator == "" and conda):
            # conda's `=1.13` (and a bare conda version) is the series 1.13.*
            low, high = Bound(version, True), Bound(_next_series(written, len(written)), False)
        elif operator == ">=":
            low = Bound(version, True)
        elif operator == ">":
            low = Bound(version, False)
        elif operator == "<=":
            high = Bound(version, True)
        elif operator == "<":
            high = Bound(version, False)
        elif operator == "~=":
            if len(written) < 2:
                return None
            low, high = Bound(version, True), Bound(_next_series(written, len(written) - 1), False)
        elif operator == "^":
            # Poetry: the left-most non-zero part may not change
            index = next((i for i, part in enumerate(written) if part != 0), len(written) - 1)
            low, high = Bound(version, True), Bound(_next_series(written, index + 1), False)
        elif operator == "~":
            # Poetry: ~1.2.3 -> <1.3; ~1.2 -> <1.3; ~1 -> <2
            low, high = Bound(version, True), Bound(_next_series(written, max(1, min(2, len(written)))), False)
        elif operator == "!=":
            read_any = True
            continue
        read_any = True
        if low is not None and (floor is None or low.version > floor.version):
            floor = low
        if high is not None and (ceiling is None or high.version < ceiling.version):
            ceiling = high
    if not read_any:
        return None
    return VersionRange(floor, ceiling, source)
