"""Known precision bugs of released library versions: data, one entry per bug, read by known-precision-bug.

Every entry names the package and the exact range of affected releases (`affected`: first affected, first fixed;
each read in the library's own source at those tags), the thread that reports it (`source`), and when a config
meets it: `framework`, the framework a config section must be attributed to, `when`, key paths (dotted, from the
section's top) with the values that trigger the bug, and `unless`, key paths whose values avoid it. Adding a bug
is adding an entry; no code changes.

An entry about a script rather than a config says so with `formats: ("python",)`: its `when` then names the
framework's settings as the script passes them (`TrainingArguments(tf32=True)`: `{"tf32": (True, False)}`), and
`script` names what else the script must do (`"new-tf32-api"`: it writes PyTorch's `fp32_precision` settings).
`with` names other packages whose pins must allow a release from the version given (a package nothing declares
is taken to install its newest release, which does). `last_affected` names the last affected release where the
first fixed one starts a new major or minor version (before 5.0.0 came 4.57.6).
"""

from __future__ import annotations

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
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
        "id": "accelerate-fp8-deepspeed-noop",
        "package": "accelerate",
        # Under DeepSpeed, AcceleratorState.mixed_precision is read off the DeepSpeed config (state.py, v1.3.0
        # lines 969-976), where `fp8` has become `bf16.enabled` (utils/dataclasses.py line 1258), so the
        # Accelerator's fp8_backend (accelerator.py line 3603 at v1.3.0, 3605 at v1.0.0) is None and the model is
        # never converted to Transformer Engine layers (line 1330). 1.4.0 reads the argument instead (#3361).
        # 0.34.x did the same unless the script passed an FP8RecipeKwargs handler: a config cannot tell, so only
        # 1.0.0 to 1.3.0, where the handler makes no difference, is listed.
        "affected": ((1, 0, 0), (1, 4, 0)),
        "last_affected": "1.3.0",
        "framework": "accelerate",
        "when": {"mixed_precision": ("fp8",), "distributed_type": ("DEEPSPEED",)},
        "unless": {},
        "what": "with DeepSpeed, Accelerate 1.0.0 to 1.3.0 takes its mixed precision from the DeepSpeed config, where "
                "`fp8` has become bf16, so the model is never converted to Transformer Engine's FP8 layers: the run "
                "trains in bf16 with no warning",
        "instead": "require accelerate>=1.4.0",
        "source": "https://github.com/huggingface/accelerate/issues/3360",
    },
    {
        "id": "deepspeed-bf16-zero2-overflow",
        "package": "deepspeed",
        # 0.11.2 made ZeRO-1/2's overflow check fp16-only (stage_1_and_2.py `if self.dtype == torch.float16:`,
        # DeepSpeed#4512); 0.17.1 added bf16.check_grad_overflow (default False); 0.19.3 defaults it to True.
        "affected": ((0, 11, 2), (0, 19, 3)),
        "framework": "deepspeed",
        "when": {"bf16.enabled": (True,), "zero_optimization.stage": (2, "2")},
        "unless": {"bf16.check_grad_overflow": (True,),
                   "zero_optimization.offload_optimizer.device": ("cpu", "nvme")},
        "what": "with bf16 and ZeRO-2 (no offload), DeepSpeed 0.11.2 to 0.19.2 does not check gradients for overflow "
                "(the option 0.17.1 added, `bf16.check_grad_overflow`, defaults to false), so one inf in the averaged "
                "gradients turns Adam's "
                "states and the float32 master weights to NaN and the run is lost without a diagnostic",
        "instead": 'set "check_grad_overflow": true in the bf16 block (DeepSpeed 0.17.1+), or require '
                   "deepspeed>=0.19.3, whose default is true",
        "source": "https://github.com/deepspeedai/DeepSpeed/pull/8035",
    },
    {
        "id": "transformers-tf32-legacy-flags",
        "package": "transformers",
        # 4.13.0 added `tf32` (training_args.py sets torch.backends.cuda.matmul.allow_tf32); 4.57.6, the last 4.x,
        # still sets the legacy flags; 5.0.0 calls utils.import_utils.enable_tf32, which on torch >= 2.9 writes
        # torch.backends.fp32_precision instead (transformers#42428).
        "affected": ((4, 13, 0), (5, 0, 0)),
        "last_affected": "4.57.6",  # the release before 5.0.0 (a major version: not derived from the bound)
        "framework": "hf",
        "formats": ("python",),
        "when": {"tf32": (True, False)},
        "unless": {},
        "script": "new-tf32-api",
        "with": {"torch": (2, 9, 0)},
        "what": "TrainingArguments(tf32=...) before Transformers 5.0.0 writes the legacy "
                "`torch.backends.cuda.matmul.allow_tf32` / `cudnn.allow_tf32` flags even on PyTorch 2.9+, beside "
                "this script's `fp32_precision` settings: PyTorch then raises RuntimeError (\"mix of the legacy and "
                "new APIs\") where the TF32 state is next read, in the training step",
        "instead": "require transformers>=5.0.0, or set TF32 in one API only (drop `tf32=` and keep the "
                   "`fp32_precision` settings)",
        "source": "https://github.com/huggingface/transformers/issues/42371",
    },
)
