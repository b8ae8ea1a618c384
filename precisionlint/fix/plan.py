"""Planning the edits of one fix pass: which fixes apply and which are taken together (edits.py makes their text).

Every step is linear in the file (or n log n in the number of fixes): a 140 kB script with 1,500 fixable
calls must not cost 1,500 parses. The fixes of a pass are taken in text order, skipping any that overlaps one
already taken (it is left for the next pass), and the whole batch is verified at once (one parse of the new
text). Only when the batch is refused is it split in halves, each verified on its own, so that one bad fix
costs O(log n) extra parses, not one parse per fix; MAX_VERIFICATIONS bounds a pass whatever happens.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from precisionlint.core.model import Document, Edit, Finding, Fix
from precisionlint.fix.edits import collide, well_formed

if TYPE_CHECKING:
    from precisionlint.fix.verify import Verifier
    from precisionlint.sources import Limits

# Parses of the fixed text one pass may spend on finding the fixes that verify. A pass whose batch verifies
# spends one; every refused fix costs about 2*log2(fixes) more.
MAX_VERIFICATIONS = 64


def is_applicable(finding: Finding, unsafe: bool) -> bool:
    fix = finding.fix
    return fix is not None and bool(fix.edits) and (fix.applicability == "safe" or unsafe)


def applicable_groups(findings: Iterable[Finding], unsafe: bool) -> list[tuple[Fix, int]]:
    """Applicable fixes in text order, identical ones merged (two findings with the same edits are fixed by
    applying them once), each with the number of findings it fixes."""
    counts: dict[tuple[Edit, ...], int] = {}
    first: dict[tuple[Edit, ...], Fix] = {}
    for finding in findings:
        if not is_applicable(finding, unsafe):
            continue
        assert finding.fix is not None
        key = tuple(sorted(finding.fix.edits, key=lambda e: (e.start, e.end)))
        counts[key] = counts.get(key, 0) + 1
        first.setdefault(key, finding.fix)
    ordered = sorted(first, key=lambda k: (k[0].start, k[-1].end))
    return [(first[key], counts[key]) for key in ordered]


class Refusal:
    """A fix that was not applied, and why (said to the user beside the finding)."""

    def __init__(self, fix: Fix, reason: str) -> None:
        self.fix = fix
        self.reason = reason


def select_fixes(document: Document, fixes: Sequence[Fix], limits: Limits | None = None,
                 refused: list[Refusal] | None = None) -> list[Fix]:
    """The fixes of one pass: in order, each one that is well-formed and does not overlap one already taken,
    then the largest part of that batch that verifies (see the module docstring). Fixes refused by the
    verifier are added to `refused` with the reason."""
    from precisionlint.fix.verify import Verifier as _Verifier
    from precisionlint.sources import Limits as DefaultLimits

    verifier = _Verifier(document, limits or DefaultLimits())
    taken = _EditSet()
    candidates: list[Fix] = []
    for fix in fixes:
        if not well_formed(fix.edits, len(document.text)):
            if refused is not None:
                refused.append(Refusal(fix, "its edits do not fit the file"))
            continue
        if taken.collides(fix.edits):
            continue  # overlaps a fix taken in this pass: the next pass re-checks and takes it then
        taken.add(fix.edits)
        candidates.append(fix)
    budget = [MAX_VERIFICATIONS]
    return _verified(verifier, candidates, budget, refused)


def _verified(verifier: Verifier, fixes: list[Fix], budget: list[int], refused: list[Refusal] | None) -> list[Fix]:
    if not fixes or budget[0] <= 0:
        return []
    budget[0] -= 1
    reason = verifier.refusal(fixes)
    if reason is None:
        return fixes
    if len(fixes) == 1:
        if refused is not None:
            refused.append(Refusal(fixes[0], reason))
        return []
    middle = len(fixes) // 2
    left = _verified(verifier, fixes[:middle], budget, refused)
    right = _verified(verifier, fixes[middle:], budget, refused)
    if left and right:
        if budget[0] <= 0:
            return left
        budget[0] -= 1
        if verifier.refusal(left + right) is not None:
            return left  # each half is clean alone but not together: the rest waits for the next pass
    return left + right


class _EditSet:
    """Taken edits, sorted and pairwise apart, with a collision test in O(log n) (instead of comparing every
    new edit with every taken one)."""

    def __init__(self) -> None:
        self.starts: list[tuple[int, int]] = []
        self.edits: list[Edit] = []

    def collides(self, edits: Sequence[Edit]) -> bool:
        for edit in edits:
            index = bisect_left(self.starts, (edit.start, edit.end))
            # Taken edits are disjoint, so only the one before and those starting up to this edit's end matter.
            position = max(index - 1, 0)
            while position < len(self.edits) and self.edits[position].start <= edit.end:
                if collide(self.edits[position], edit):
                    return True
                position += 1
        return False

    def add(self, edits: Sequence[Edit]) -> None:
        for edit in edits:
            index = bisect_left(self.starts, (edit.start, edit.end))
            self.starts.insert(index, (edit.start, edit.end))
            self.edits.insert(index, edit)

