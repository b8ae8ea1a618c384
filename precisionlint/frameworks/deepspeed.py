"""DeepSpeed: the `fp16` / `bf16` (old `bfloat16`) / `amp` blocks of a DeepSpeed config.

Evidence: precision blocks given as objects (not booleans) together with DeepSpeed's own top-level keys
(`zero_optimization`, `train_micro_batch_size_per_gpu`, ...) - certain; the blocks alone - likely. Embedded
DeepSpeed configs (a Transformers `deepspeed:` mapping, GPT-NeoX YAML) are attributed by their host's module.
Vocabulary: deepspeed/runtime/precision_config.py (fp16: enabled, auto_cast, loss_scale (0 = dynamic),
initial_scale_power, loss_scale_window, hysteresis, consecutive_hysteresis, min_loss_scale; bf16: enabled).
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.frameworks.base import CERTAIN, LIKELY, Facts, Row, Section, described

if TYPE_CHECKING:
    from typing import Any

NAME = "deepspeed"
TITLE = "DeepSpeed"
# What a config, or a Python file, that it reads a setting from holds (one of them at least: engine.prefilter).
CONFIG_WORDS: tuple[bytes, ...] = (b"fp16", b"bf16", b"bfloat16", b'"amp"', b"amp:", b"amp =", b"loss_scale")
PYTHON_WORDS: tuple[bytes, ...] = ()
VOCABULARIES: dict[str, Any] = {}

BF16_LOSS_SCALING = "bf16_loss_scaling"
LOSS_SCALING_KEYS = ("loss_scale", "initial_scale_power", "loss_scale_window", "hysteresis", "consecutive_hysteresis",
                     "min_loss_scale")
ROWS = (
    Row(NAME, ("fp16", "enabled"), "fp16"),
    Row(NAME, ("fp16", "loss_scale"), "loss_scale"),
    Row(NAME, ("fp16", "initial_scale_power"), "initial_scale_power"),
    Row(NAME, ("fp16", "loss_scale_window"), "loss_scale_window"),
    Row(NAME, ("fp16", "hysteresis"), "hysteresis"),
    Row(NAME, ("fp16", "min_loss_scale"), "min_loss_scale"),
    Row(NAME, ("bf16", "enabled"), "bf16"),
    Row(NAME, ("bfloat16", "enabled"), "bf16"),  # the old spelling DeepSpeed still accepts
    Row(NAME, ("amp", "enabled"), "amp"),
    # fp16's loss-scaling keys copied into the bf16 block: DeepSpeed ignored them before 0.17.1 and rejects
    # them since (the bf16 block is validated with extra keys forbidden). Canonical name: bf16_loss_scaling.
    *(Row(NAME, (block, key), BF16_LOSS_SCALING) for block in ("bf16", "bfloat16") for key in LOSS_SCALING_KEYS),
    # torch.autocast run by the engine (DeepSpeed 0.17.2+, deepspeed/runtime/torch_autocast.py), the dtype gradients
    # are accumulated in (data_types.grad_accum_dtype: "fp32" | "fp16" | "bf16") and how many micro-batches are
    # accumulated
    Row(NAME, ("torch_autocast", "enabled"), "torch_autocast"),
    Row(NAME, ("data_types", "grad_accum_dtype"), "grad_accum_dtype"),
    Row(NAME, ("gradient_accumulation_steps",), "gradient_accumulation_steps"),
)
MARKERS = frozenset({"zero_optimization", "train_batch_size", "train_micro_batch_size_per_gpu",
                     "gradient_accumulation_steps", "gradient_clipping", "steps_per_print", "wall_clock_breakdown",
                     "zero_allow_untested_optimizer", "activation_checkpointing", "flops_profiler",
                     "prescale_gradients", "communication_data_type", "zero_force_ds_cpu_optimizer",
                     "optimizer", "scheduler"})
_BLOCK_KEYS = frozenset({"enabled", "auto_cast", "loss_scale", "initial_scale_power", "loss_scale_window",
                         "hysteresis", "consecutive_hysteresis", "min_loss_scale", "fp16_master_weights_and_grads",
                         "immediate_grad_update", "check_grad_overflow", "bf16_master_weights_and_grads",
                         "bf16_optimizer_states", "opt_level", "type", "fp16", "bf16"})


def has_blocks(node: Any) -> bool:
    """fp16/bf16/amp given as objects of DeepSpeed's block keys (not booleans, not someone else's maps)."""
    if node is None or node.kind != "map":
        return False
    for key in ("fp16", "bf16", "bfloat16", "amp"):
        entry = node.get(key)
        if entry is None or entry.value.kind != "map":
            continue
        keys = entry.value.keys()
        if keys and (keys <= _BLOCK_KEYS or "enabled" in keys or "loss_scale" in keys):
            return True
    return False


def attribute(root: Any, facts: Facts) -> Iterator[Section]:
    if not has_blocks(root):
        return
    found = root.keys() & MARKERS
    if found:
        yield Section(NAME, "deepspeed", root, (), ROWS, CERTAIN,
                      f"DeepSpeed precision blocks beside DeepSpeed keys {described(found)}")
    else:
        yield Section(NAME, "deepspeed", root, (), ROWS, LIKELY, "DeepSpeed-shaped fp16/bf16 blocks")
