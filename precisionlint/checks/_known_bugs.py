"""Known precision bugs of released library versions: data, one entry per bug, read by known-precision-bug.

Every entry names the package and the exact range of affected releases (`affected`: first affected, first fixed;
each read in the library's own source at those tags), the thread that reports it (`source`), and when a config
meets it: `framework`, the framework a config section must be attributed to, `when`, key paths (dotted, from the
section's top) with the values that trigger the bug, and `unless`, key paths whose values avoid it. Adding a bug
is adding an entry; no code changes.
"""

from __future__ import annotations

from typing import Any

KNOWN_BUGS: tuple[dict[str, Any], ...] = (
    {
        "id": "accelerate-fsdp2-upcast-noop",
        "package": "accelerate",
        "affected": ((1, 13, 0), (1, 14, 0)),
        "framework": "accelerate",
        "when": {"fsdp_config.fsdp_version": (2, "2"), "mixed_precision": ("bf16", "fp16")},
        "unless": {},
        "what": "Accelerate 1.13.0 does not upcast FSDP2's 16-bit trainable parameters to float32 under mixed "
                "precision (`param = param.to(torch.float32)` rebinds a loop variable; 1.14.0 assigns "
                "`param.data`), so a model loaded in bf16 trains with no float32 master weights",
        "instead": "require accelerate>=1.14.0 (or !=1.13.0), or load the model in float32",
        "source": "https://github.com/huggingface/accelerate/issues/3979",
    },
    {
        "id": "deepspeed-bf16-zero2-overflow",
        "package": "deepspeed",
        "affected": ((0, 16, 9), (0, 19, 3)),
        "framework": "deepspeed",
        "when": {"bf16.enabled": (True,), "zero_optimization.stage": (2, "2")},
        "unless": {"bf16.check_grad_overflow": (True,),
                   "zero_optimization.offload_optimizer.device": ("cpu", "nvme")},
        "what": "with bf16 and ZeRO-2 (no offload), DeepSpeed before 0.19.3 does not check gradients for overflow "
                "(`bf16.check_grad_overflow` defaults to false), so one inf in the averaged gradients turns Adam's "
                "states and the float32 master weights to NaN and the run is lost without a diagnostic",
        "instead": 'set "check_grad_overflow": true in the bf16 block (DeepSpeed 0.17.1+), or require '
                   "deepspeed>=0.19.3, whose default is true",
        "source": "https://github.com/deepspeedai/DeepSpeed/pull/8035",
    },
)
