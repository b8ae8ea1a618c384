"""## What it does
Finds a file that uses the legacy TF32 controls (`torch.backends.cuda.matmul.allow_tf32`,
`torch.backends.cudnn.allow_tf32`, `torch.set_float32_matmul_precision(...)`,
`torch.get_float32_matmul_precision()`) together with the new `fp32_precision` settings
(`torch.backends.fp32_precision`, `torch.backends.cuda.matmul.fp32_precision`,
`torch.backends.cudnn.conv.fp32_precision`, ...). Each legacy use is reported. Uses in the two arms of one
`if`/`else` or `try`/`except` never run together, and uses that both sit in version switches (a version or
`hasattr` test, a `try` with an `except AttributeError/ImportError`) are the author handling old and new
PyTorch: neither is reported. Nor are writes that leave both states saying the same thing for every
backend the new API sets (`set_float32_matmul_precision("high")` beside `cuda.matmul.fp32_precision =
"tf32"`): reading either API then sees agreement and never raises.

## Why is this bad?
Since PyTorch 2.9 the two APIs share state but are not kept in sync both ways: the new setters do not update
the legacy state, and reading legacy state that disagrees with the new settings raises
`RuntimeError: ... you have used mix of the legacy and new APIs to set the TF32 status ...`. The read may happen
in your code or in a library (Lightning reads the matmul precision at setup), far from the line that set it.

## Example
```python
torch.backends.cuda.matmul.fp32_precision = "tf32"
torch.backends.cudnn.allow_tf32 = True
```

## Use instead
```python
torch.backends.cuda.matmul.fp32_precision = "tf32"
torch.backends.cudnn.conv.fp32_precision = "tf32"
```

## Fix safety
No fix: translating between the APIs needs the torch version the script targets.

## References
- https://pytorch.org/docs/main/notes/cuda.html#tensorfloat-32-tf32-on-ampere-and-later-devices
- https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/Context.cpp
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity

if TYPE_CHECKING:
    from precisionlint.script.model import Tf32Use
    from precisionlint.script.tf32 import Tf32Write

CODE = "PL213"
NAME = "mixed-tf32-apis"
SEVERITY = Severity.ERROR
SUMMARY = "Legacy allow_tf32 / float32_matmul_precision mixed with the new fp32_precision API (RuntimeError on 2.9+)."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"tf32", b"fp32_precision", b"precision")
MODEL_WORDS: tuple[str, ...] = ("tf32", "fp32_precision", "matmul_precision")  # the TF32 switches the model records


def check(ctx: CheckContext) -> Iterator[Finding]:
    uses = ctx.script.tf32_uses
    new = [u for u in uses if u.kind == "new"]
    if not new:
        return
    writes = {(w.api, w.span.line): w for w in ctx.script.tf32_writes}
    legacy_state = _legacy_state(writes)
    for legacy in (u for u in uses if u.kind == "legacy"):
        partners = [
            n for n in new if not _exclusive(legacy, n) and not (legacy.version_switched and n.version_switched)
        ]
        if not partners or _agree(legacy, partners, writes, legacy_state):
            continue
        other = partners[0]
        yield ctx.report(
            legacy.span,
            f"legacy TF32 API `{legacy.api}` is mixed with the new `{other.api}` (line {other.span.line}): on "
            "PyTorch 2.9+ reading legacy TF32 state that disagrees with the new settings raises RuntimeError; "
            "use only the fp32_precision settings",
        )


def _exclusive(a: Tf32Use, b: Tf32Use) -> bool:
    """In different arms of the same if/else or try/except: never both run."""
    arms = dict(a.branches)
    return any(node in arms and arms[node] != arm for node, arm in b.branches)


# What the legacy state holds when nothing in the file writes it (matmul off since torch 1.12, cuDNN on)
_LEGACY_DEFAULT = {"matmul": False, "cudnn": True}


def _legacy_state(writes: dict[tuple[str, int], Tf32Write]) -> dict[str, bool | None]:
    """What the legacy state of each backend holds after the file's legacy writes (None: written both ways)."""
    state: dict[str, bool | None] = dict(_LEGACY_DEFAULT)
    seen: set[str] = set()
    for write in writes.values():
        if write.family != "legacy":
            continue
        state[write.backend] = None if write.backend in seen and state.get(write.backend) != write.enables \
            else write.enables
        seen.add(write.backend)
    return state


def _agree(legacy: Tf32Use, partners: list[Tf32Use], writes: dict[tuple[str, int], Tf32Write],
           legacy_state: dict[str, bool | None]) -> bool:
    """The legacy use is a write, and for every backend a new write it meets sets, the legacy state of that
    backend (its legacy writes, or the default) says the same thing: reading either API then sees agreement.
    (A legacy setter also updates the new state; a new setter leaves the legacy state alone.)"""
    if (legacy.api, legacy.span.line) not in writes:
        return False
    for use in partners:
        new = writes.get((use.api, use.span.line))
        if new is None or new.enables is None:
            return False
        backends = ("matmul", "cudnn") if new.backend == "all" else (new.backend,)
        if any(b not in legacy_state or legacy_state[b] is not new.enables for b in backends):
            return False
    return True
