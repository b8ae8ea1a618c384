"""## What it does
Reports a suppression comment (`# precisionlint: ignore[...]`, `file-ignore`, `disable`, or a `PL` code in a
Python `# noqa:`) that suppressed no finding in this run: the mistake it silenced was fixed, the code moved,
or the rule it names is not enabled. Off by default, as ruff's `unused-noqa` (RUF100): turn it on with
`extend-select = ["unused-suppression"]` or `--extend-select PL007`.

A suppression for a rule that needs a target GPU is not reported when no GPU was given: with one, it may
still be needed.

## Why is this bad?
Stale suppressions pile up. Each one hides any future finding of its rule on that line, so a real mistake
introduced later would go unreported.

## Example
```toml
[trainer_config]
precision = "bf16-mixed"  # precisionlint: ignore[legacy-precision-value]
```

## Use instead
```toml
[trainer_config]
precision = "bf16-mixed"
```

## Fix safety
Safe: the fix removes the comment when it holds nothing but the directive, or the unused names from its list;
comments are not part of any setting. A comment that also holds other text (another tool's `noqa` codes) is
left for you to edit.

## References
- ruff's unused-noqa: https://docs.astral.sh/ruff/rules/unused-noqa/
"""

from __future__ import annotations

from collections.abc import Iterable

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity

CODE = "PL007"
NAME = "unused-suppression"
SEVERITY = Severity.WARNING
SUMMARY = "A suppression comment that suppressed nothing (off by default)."
TARGET = "engine"
READS = "comments"
FIXABLE = True


def check(ctx: CheckContext) -> Iterable[Finding]:
    # Reported by the engine with the suppressions (precisionlint/engine/suppress.py), after every other rule ran.
    return ()
