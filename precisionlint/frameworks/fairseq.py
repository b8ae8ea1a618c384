"""fairseq Hydra configs: `common.fp16`, `common.bf16`, `common.memory_efficient_fp16`.

Evidence: a `common:` mapping beside fairseq's other config groups (`task`, `criterion`, `optimization`,
`checkpoint`, `dataset`, `distributed_training`) - certain. Vocabulary: fairseq/dataclass/configs.py
(`CommonConfig.fp16` / `bf16` / `memory_efficient_fp16` booleans; fp16 trains float16 weights through
FP16Optimizer with float32 master weights and dynamic loss scaling from `fp16_init_scale`).
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.frameworks.base import (
    CERTAIN,
    Facts,
    Mode,
    Row,
    Section,
    Vocabulary,
    boolean_suggestions,
    child_map,
    described,
    lax_boolean,
)

if TYPE_CHECKING:
    from typing import Any

NAME = "fairseq"
TITLE = "fairseq"
# What a config, or a Python file, that it reads a setting from holds (one of them at least: engine.prefilter).
CONFIG_WORDS: tuple[bytes, ...] = (b"fp16", b"bf16")
PYTHON_WORDS: tuple[bytes, ...] = ()


def _switch(key: str, dtype: str) -> Vocabulary:
    return Vocabulary(
        framework=NAME, title=TITLE, key=f"common.{key}", accepted=(True, False), canonical=lax_boolean(),
        modes={True: Mode(dtype, "mixed")}, rejection="fails OmegaConf's validation of CommonConfig at start-up",
        source="fairseq/dataclass/configs.py (CommonConfig)", suggest=boolean_suggestions,
    )


VOCABULARIES = {"fp16": _switch("fp16", "fp16"), "bf16": _switch("bf16", "bf16")}
ROWS = (Row(NAME, ("fp16",), "fp16"), Row(NAME, ("bf16",), "bf16"))
GROUPS = frozenset({"task", "criterion", "optimization", "checkpoint", "dataset", "distributed_training",
                    "lr_scheduler", "optimizer", "model", "bpe", "tokenizer"})


def attribute(root: Any, facts: Facts) -> Iterator[Section]:
    common = child_map(root, "common")
    if common is None or (common.get("fp16") is None and common.get("bf16") is None):
        return
    found = root.keys() & GROUPS
    if len(found) >= 2:
        yield Section(NAME, "fairseq.common", common, ("common",), ROWS, CERTAIN,
                      f"fairseq's `common:` group beside {described(found)}")
