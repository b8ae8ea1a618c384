"""## What it does
Finds an FSDP mixed-precision policy that computes in 16 bits and reduces gradients in 16 bits too:
`MixedPrecisionPolicy(param_dtype=torch.bfloat16)` (FSDP2) or `MixedPrecision(param_dtype=...)` (FSDP1) with
`reduce_dtype` left unset or set to float16/bfloat16. The finding is information: it costs convergence, not a
crash, and some large runs accept it for the bandwidth.

## Why is this bad?
`reduce_dtype` is the dtype of the gradient reduce-scatter (or all-reduce) across ranks, and "if this is None but
param_dtype is not None, then the reduction uses the compute dtype" (FSDP2's `MixedPrecisionPolicy`; FSDP1's
`MixedPrecision` says the same: it "takes on the param_dtype value"). Summing the gradients of N ranks in
bfloat16 rounds each partial sum to 8 significant bits; and where gradient synchronisation is turned off for
accumulation (`set_requires_gradient_sync(False)`), "FSDP will accumulate gradients using reduce_dtype", so the
same policy also accumulates in 16 bits. torchtitan reduces in float32 under bf16 compute and offers nothing
else (`mixed_precision_reduce: Literal["float32"] = "float32"`); the float32 reduction doubles the
reduce-scatter's bytes, nothing else.

## Example
```python
fully_shard(model, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16))
```

## Use instead
```python
fully_shard(model, mp_policy=MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32))
```

## Fix safety
No fix: float32 reduction doubles the gradient traffic, which a bandwidth-bound run may not afford.

## References
- `MixedPrecisionPolicy.reduce_dtype`, `torch/distributed/fsdp/_fully_shard/_fsdp_api.py` lines 33-40 in
  PyTorch 2.13.0: https://github.com/pytorch/pytorch/blob/v2.13.0/torch/distributed/fsdp/_fully_shard/_fsdp_api.py#L33-L40
- FSDP1 `MixedPrecision.reduce_dtype`, `torch/distributed/fsdp/api.py` lines 123-126 in 2.13.0:
  https://github.com/pytorch/pytorch/blob/v2.13.0/torch/distributed/fsdp/api.py#L123-L126
- torchtitan's only choice, `torchtitan/config/configs.py` line 102 at commit b5bcd76c6 (line 290 of
  `torchtitan/config/job_config.py` at v0.2.2):
  https://github.com/pytorch/torchtitan/blob/v0.2.2/torchtitan/config/job_config.py#L290
- https://docs.pytorch.org/docs/stable/distributed.fsdp.fully_shard.html
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.model import Finding, Severity

CODE = "PL215"
NAME = "low-precision-gradient-reduction"
SEVERITY = Severity.INFO
SUMMARY = "An FSDP policy computes in 16 bits and reduces gradients across ranks in 16 bits too."
TARGET = "script"
READS = "torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"precision", b"float16")
MODEL_WORDS: tuple[str, ...] = ("MixedPrecisionPolicy",)  # FSDP2's policy (checks/_fsdp.py)

_SHORT = {"float16": "float16", "bfloat16": "bfloat16"}


def check(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.checks._fsdp import policies

    for policy in policies(ctx):
        if policy.param_dtype not in _SHORT:
            continue
        reduce = policy.reduce_dtype
        if reduce == "unset":
            how = f"`reduce_dtype` is not set, so gradients are reduced in the compute dtype, {policy.param_dtype}"
        elif reduce in _SHORT:
            how = f"`reduce_dtype` is {reduce}"
        else:
            continue  # float32, or a dtype not known here
        yield ctx.report(
            policy.span,
            f"FSDP computes in {policy.param_dtype} and {how}: the sum of every rank's gradients is rounded to "
            "16 bits, an error that grows with the number of ranks and accumulation steps; set "
            "`reduce_dtype=torch.float32` (twice the gradient traffic)",
        )
