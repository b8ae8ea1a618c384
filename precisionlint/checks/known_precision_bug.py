"""## What it does
Finds a config that meets a known precision bug of a library release the project may install: the project's
pins (requirements files, pyproject.toml, setup.py, ...) allow an affected release, and the config sets what
triggers the bug. The bugs are a table of data (`precisionlint/checks/_known_bugs.py`), each entry with its exact
range of affected releases, read in the library's source at those tags, and the thread that reports it:

| Package | Affected | Triggered by | Report |
|---|---|---|---|
| accelerate | 1.13.0 | `fsdp_version: 2` and `mixed_precision: bf16`/`fp16` | accelerate#3979 |
| deepspeed | 0.16.9 to 0.19.2 | bf16, ZeRO-2 without offload or `check_grad_overflow` | DeepSpeed#8035 |

A project that declares no version of the package is not reported: nothing says it installs an affected
release. A range with no upper bound (`accelerate>=1.4.0`, a library's floor) makes the finding information:
an installer picks the newest release, which has the fix, unless something else holds the package back; an
exact pin or a ceiling that keeps an affected release in reach is a warning.

## Why is this bad?
These bugs fail silently: the run starts and trains, worse than it should.

- Accelerate 1.13.0 meant to upcast FSDP2's trainable 16-bit parameters to float32 master weights under mixed
  precision, but its loop wrote `param = param.to(torch.float32)`, which rebinds the loop variable and changes no
  parameter (`src/accelerate/utils/fsdp_utils.py`); 1.12.0 upcast the whole model with `model.to(torch.float32)`
  and 1.14.0 assigns `param.data = param.data.to(torch.float32)`. A model loaded in bf16 then trains with
  bf16 weights and optimizer states.
- DeepSpeed's bf16 mode does no loss scaling, and until 0.19.3 it did not check gradients for overflow by
  default (`check_grad_overflow: bool = False` in `deepspeed/runtime/precision_config.py` from 0.17.1, where the
  option appeared, to 0.19.2; True from 0.19.3). Under ZeRO-2 a single inf in the averaged gradients makes
  Adam's update NaN, which corrupts its states and the float32 master weights at once; the report reproduced it
  on 0.16.9 to 0.17.1.

## Example
```yaml
# requirements.txt: accelerate==1.13.0
distributed_type: FSDP
mixed_precision: bf16
fsdp_config:
  fsdp_version: 2
```

## Use instead
```
accelerate>=1.14.0
```

## Fix safety
No fix: the pin or the config is the user's to change.

## References
- https://github.com/huggingface/accelerate/issues/3979
- https://github.com/huggingface/accelerate/blob/v1.13.0/src/accelerate/utils/fsdp_utils.py
- https://github.com/deepspeedai/DeepSpeed/pull/8035
- https://github.com/deepspeedai/DeepSpeed/blob/v0.19.3/deepspeed/runtime/precision_config.py
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity

CODE = "PL407"
NAME = "known-precision-bug"
SEVERITY = Severity.WARNING
SUMMARY = "A config meets a known precision bug of a library release that the project's pins allow."
TARGET = "settings"
READS = "accelerate, deepspeed, pins"
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.document.format not in ("yaml", "json", "toml"):
        return
    from precisionlint.checks._known_bugs import KNOWN_BUGS
    from precisionlint.project.versions import show
    from precisionlint.sources.tree import roots

    frameworks = {setting.framework for setting in ctx.settings}
    for bug in KNOWN_BUGS:
        if bug["framework"] not in frameworks:
            continue
        declared = ctx.project.version(bug["package"])
        first, fixed = bug["affected"]
        if declared is None or declared.all_at_least(fixed) or declared.all_below(first):
            continue
        for root in roots(ctx.document.tree):
            matched = _matches(root, bug["when"])
            if matched is None or _matches(root, bug["unless"], any_of=True) is not None:
                continue
            # A range with no ceiling resolves to the newest release, which has the fix, unless something else
            # holds the package back (a library's floor, `accelerate>=1.4.0`): information. A pin or a ceiling
            # that keeps an affected release in reach is a warning.
            open_ended = declared.ceiling is None
            yield ctx.report(
                ctx.document.span_of(matched.start, matched.end),
                f"{declared.declared(bug['package'])} allows an affected {bug['package']} release ({show(first)} to "
                f"{_before(fixed)}): {bug['what']}; {bug['instead']} ({bug['source']})",
                severity=Severity.INFO if open_ended else None,
            )


def _before(fixed: tuple[int, ...]) -> str:
    """The last affected release, as people name it: "1.13.x" before 1.14.0, "0.19.2" before 0.19.3."""
    if fixed[-1] == 0 and len(fixed) == 3:
        return f"{fixed[0]}.{fixed[1] - 1}.x"
    return ".".join(str(part) for part in (*fixed[:-1], fixed[-1] - 1))


def _value(root: Any, path: str) -> Any:
    node = root
    for key in path.split("."):
        if node is None or getattr(node, "kind", None) != "map":
            return None
        entry = node.get(key)
        node = entry.value if entry is not None else None
    return node


def _matches(root: Any, conditions: dict[str, tuple[Any, ...]], any_of: bool = False) -> Any:
    """The node of the first condition met when every one is (or, with `any_of`, when one is); None otherwise."""
    first = None
    for path, values in conditions.items():
        node = _value(root, path)
        met = node is not None and node.kind == "scalar" and any(
            node.value == v and type(node.value) is type(v) for v in values)
        if met and first is None:
            first = node
        if any_of and met:
            return node
        if not any_of and not met:
            return None
    return None if any_of else first
