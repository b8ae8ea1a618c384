"""## What it does
Finds a plain `GradScaler` (`torch.amp.GradScaler`, `torch.cuda.amp.GradScaler`) in a script that shards the
model with FSDP1 computing in float16 (`FullyShardedDataParallel(..., mixed_precision=MixedPrecision(
param_dtype=torch.float16))`), where PyTorch provides `torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler`.

## Why is this bad?
A GradScaler skips the optimizer step when a gradient overflowed. Under FSDP each rank holds only its shard of
the gradients, so each rank's plain GradScaler sees only its own infs: one rank skips the step and the others
take it, and the shards of the parameters stop being one consistent model. `ShardedGradScaler` all-reduces the
found-inf flag across the process group before deciding (`dist.all_reduce(found_inf, ...)` in
torch/distributed/fsdp/sharded_grad_scaler.py), and also handles gradients offloaded to the CPU.

## Example
```python
model = FSDP(model, mixed_precision=MixedPrecision(param_dtype=torch.float16))
scaler = torch.amp.GradScaler("cuda")
```

## Use instead
```python
from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

model = FSDP(model, mixed_precision=MixedPrecision(param_dtype=torch.float16))
scaler = ShardedGradScaler()
```

## Fix safety
No fix: the import and the process group are the user's to choose.

## References
- `ShardedGradScaler`: "Sync inf/nan for scaled gradient tensors ... across nodes" and "Support CPU offloaded
  tensors" (docstring, lines 46-54), the `dist.all_reduce(found_inf, ...)` of `unscale_` (lines 274-282),
  `torch/distributed/fsdp/sharded_grad_scaler.py` in PyTorch 2.13.0:
  https://github.com/pytorch/pytorch/blob/v2.13.0/torch/distributed/fsdp/sharded_grad_scaler.py#L235-L285
- FSDP2 is different: its gradients are DTensors, and DTensor's dispatch reduces the found-inf flag of
  `_amp_foreach_non_finite_check_and_unscale_` across the mesh (`found_inf_reduce_handler`,
  `torch/distributed/tensor/_dispatch.py` lines 117-158 and 198 in 2.13.0), so a plain `torch.amp.GradScaler`
  serves FSDP2; Accelerate picks it for FSDP2 ("FSDP2 doesn't use ShardedGradScaler",
  `src/accelerate/accelerator.py` lines 579-581 and `get_fsdp2_grad_scaler`, `utils/fsdp_utils.py` lines
  861-869 at v1.14.0): https://github.com/huggingface/accelerate/blob/v1.14.0/src/accelerate/utils/fsdp_utils.py#L861-L869
- https://docs.pytorch.org/docs/stable/fsdp.html
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import is_test_code
from precisionlint.core.model import Finding, Severity

CODE = "PL216"
NAME = "plain-grad-scaler-with-fsdp"
SEVERITY = Severity.WARNING
SUMMARY = "A plain GradScaler under FSDP1 float16: ranks skip overflowed steps on their own; use ShardedGradScaler."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"GradScaler", b"precision")
MODEL_WORDS: tuple[str, ...] = ("GradScaler", ".scale(", "unscale_", "MixedPrecision(")  # FSDP1's policy


def check(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.checks._fsdp import policies

    policy = next((p for p in policies(ctx) if p.kind == "fsdp1" and p.param_dtype == "float16"), None)
    if policy is None:
        return
    model = ctx.script
    for scaler in model.scalers.values():
        if scaler.api is None or scaler.span is None or scaler.enabled is False:
            continue
        if scaler.api.endswith("ShardedGradScaler"):
            return  # the file uses the sharded one (a plain one beside it serves another path)
    for scaler in model.scalers.values():
        if scaler.api is None or scaler.span is None or scaler.enabled is False:
            continue
        yield ctx.report(
            scaler.span,
            f"`{scaler.api}` beside FSDP computing in float16 (`MixedPrecision(param_dtype=torch.float16)`, line "
            f"{policy.span.line}): each rank checks only its own gradient shard for overflow, so ranks can disagree "
            "on skipping a step and their parameter shards diverge; use `ShardedGradScaler` from "
            "torch.distributed.fsdp.sharded_grad_scaler",
            severity=Severity.INFO if is_test_code(ctx.document.path) else None,
        )
        return
