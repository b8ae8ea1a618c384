"""## What it does
Reports a suppression comment that cannot do what it says: it names a rule that does not exist (a typo such
as `legacy-precison-value`), or it is a `file-ignore` / `disable` directive placed after code on a line,
where it has no effect. A close rule name is suggested.

## Why is this bad?
A misspelt suppression is accepted silently by most tools: the finding it was meant to silence stays, or,
worse, the author believes a rule is silenced when it is not. Reporting the directive makes the mistake
visible at the line where it was made.

## Example
```yaml
trainer:
  precision: 16  # precisionlint: ignore[legacy-precison-value]
```

## Use instead
```yaml
trainer:
  precision: 16  # precisionlint: ignore[legacy-precision-value]
```

## Fix safety
No fix: which rule was meant is the author's call (the message suggests the closest names).

## References
- The "Suppressing a finding" section of precisionlint's README.
- ruff's equivalent for `noqa` codes: https://docs.astral.sh/ruff/rules/invalid-rule-code/
"""

from __future__ import annotations

from collections.abc import Iterable

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity

CODE = "PL006"
NAME = "invalid-suppression"
SEVERITY = Severity.WARNING
SUMMARY = "A suppression comment names an unknown rule, or is placed where it has no effect."
TARGET = "engine"
READS = "comments"


def check(ctx: CheckContext) -> Iterable[Finding]:
    # Reported by the engine with the suppressions (precisionlint/engine/suppress.py), after every other rule ran.
    return ()
