"""Renderers: findings in, text on a stream out. Analysis never prints; only these modules write.

Each format lives in its own module and is imported only when asked for, so `check` pays for json and
click (colors) only when the chosen format needs them.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple, TextIO

if TYPE_CHECKING:
    from precisionlint.checks import Rule
    from precisionlint.model import Finding

FORMATS: tuple[str, ...] = ("text", "json", "github", "sarif")


class RenderOptions(NamedTuple):
    """What a renderer may need beside the findings; each format reads only its own fields."""

    rules: Sequence[Rule]
    color: bool = False
    summary: bool = True
    fixed: int = 0
    root: str | None = None


def render(
    fmt: str,
    findings: list[Finding],
    stream: TextIO,
    *,
    rules: Sequence[Rule],
    color: bool = False,
    summary: bool = True,
    fixed: int = 0,
    root: str | None = None,
) -> None:
    """Write `findings` (already sorted) to `stream` in format `fmt`.

    rules    the rule registry (or the selected rules); SARIF describes the rules its results use from it.
    color    ANSI colors in the text format (the caller decides: a terminal, --color, NO_COLOR).
    summary  the closing "Found N findings" / "All checks passed!" lines of the text format.
    fixed    how many findings --fix already repaired (text format summary).
    root     the project root; SARIF paths are made relative to it (uriBaseId %SRCROOT%).

    Only the text format uses color, summary and fixed: the machine formats must stay parseable.
    """
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r} (expected one of {', '.join(FORMATS)})")
    module = importlib.import_module(f"{__name__}.{fmt}")
    options = RenderOptions(rules=rules, color=color, summary=summary, fixed=fixed, root=root)
    module.render(findings, stream, options)
