"""Text edits: whether a fix's edits fit a text and stay apart, and the text they make.

The lowest room of the fixer: planning (plan.py), verifying (verify.py) and advise --write's setting changes
(setting_changes.py) all apply edits, and none of them needs the others for it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from precisionlint.core.model import Edit


def well_formed(edits: Sequence[Edit], length: int) -> bool:
    if not edits or any(not 0 <= e.start <= e.end <= length for e in edits):
        return False
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    return not any(collide(a, b) for a, b in zip(ordered, ordered[1:], strict=False))


def collide(a: Edit, b: Edit) -> bool:
    """Two edits conflict when their ranges share a character, or an insertion touches the other edit
    (which text comes first would be a guess)."""
    if max(a.start, b.start) < min(a.end, b.end):
        return True
    empty = a.start == a.end or b.start == b.end
    return empty and max(a.start, b.start) <= min(a.end, b.end)


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """`text` with non-overlapping edits applied; edits at the same offset are applied in the given order."""
    parts: list[str] = []
    position = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):  # stable: insertions keep their order
        if edit.start < position:
            raise ValueError(f"overlapping edits at offset {edit.start}")
        parts.append(text[position:edit.start])
        parts.append(edit.replacement)
        position = edit.end
    parts.append(text[position:])
    return "".join(parts)
