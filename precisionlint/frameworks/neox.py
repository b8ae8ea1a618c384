"""GPT-NeoX YAML configs: `precision` and the DeepSpeed `fp16` / `bf16` blocks they carry.

Evidence: two or more of NeoX's model/parallelism keys (`pipe_parallel_size`, `model_parallel_size`,
`num_layers`, `hidden_size`, `num_attention_heads`, `seq_length`, ...; dashes or underscores, NeoX accepts both)
- certain. Vocabulary: megatron/neox_arguments/neox_args.py `NeoXArgsModel.precision:
Literal["fp16", "fp32", "bfloat16"]` (validated at start-up); the fp16/bf16 blocks are passed to DeepSpeed.
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.frameworks import deepspeed
from precisionlint.frameworks.base import (
    CERTAIN,
    Facts,
    Mode,
    Row,
    Section,
    Vocabulary,
    described,
    exact,
    normalized_keys,
)

if TYPE_CHECKING:
    from typing import Any

NAME = "neox"
TITLE = "GPT-NeoX"
# What a config, or a Python file, that it reads a setting from holds (one of them at least: engine.prefilter).
CONFIG_WORDS: tuple[bytes, ...] = (b"precision", b"fp16", b"bf16")
PYTHON_WORDS: tuple[bytes, ...] = ()

PRECISION = ("fp16", "fp32", "bfloat16")
MODES = {"fp16": Mode("fp16", "mixed"), "bfloat16": Mode("bf16", "mixed"), "fp32": Mode("fp32", "true")}
VOCABULARY = Vocabulary(
    framework=NAME, title=TITLE, key="precision", accepted=PRECISION, canonical=exact(PRECISION), modes=MODES,
    rejection="fails NeoX's argument validation at start-up",
    source="megatron/neox_arguments/neox_args.py (NeoXArgsModel.precision)",
)
VOCABULARIES = {"precision": VOCABULARY}
ROWS = (Row(NAME, ("precision",), "precision"),)
MARKERS = frozenset({"pipe_parallel_size", "model_parallel_size", "num_layers", "hidden_size", "num_attention_heads",
                     "seq_length", "max_position_embeddings", "pos_emb", "norm", "tokenizer_type", "train_iters",
                     "lr_decay_iters", "attention_config", "partition_activations",
                     "scaled_upper_triang_masked_softmax_fusion",
                     "bias_gelu_fusion", "checkpoint_activations", "synchronize_each_layer"})


def attribute(root: Any, facts: Facts) -> Iterator[Section]:
    if root is None or root.kind != "map":
        return
    found = normalized_keys(root) & MARKERS
    if len(found) < 2 or _instantiated(root):
        return
    evidence = f"GPT-NeoX keys {described(found)}"
    if root.get("precision") is not None:
        yield Section(NAME, "neox", root, (), ROWS, CERTAIN, evidence)
    if deepspeed.has_blocks(root):
        yield Section(deepspeed.NAME, "neox.deepspeed", root, (), deepspeed.ROWS, CERTAIN,
                      f"DeepSpeed blocks of a GPT-NeoX config ({evidence})")


def _instantiated(root: Any) -> bool:
    """A config whose top names the class it builds (`target: nemo.collections...MegatronT5Model`, Hydra's
    `_target_`) belongs to that class, not to NeoX: NeoX's arguments have no such key, while NeMo's saved model
    configs carry NeoX-like model keys (`num_layers`, `hidden_size`, `max_position_embeddings`)."""
    for key in ("target", "_target_"):
        entry = root.get(key)
        value = entry.value.value if entry is not None and entry.value.kind == "scalar" else None
        if isinstance(value, str) and "." in value:
            return True
    return False
