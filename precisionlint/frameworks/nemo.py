"""NVIDIA NeMo: `trainer:` goes to a Lightning Trainer, except in Megatron configs, where NeMo's
MegatronTrainerBuilder consumes `precision` first.

Evidence for the Megatron case (certain): the model's Megatron keys (`tensor_model_parallel_size`,
`pipeline_model_parallel_size`, `megatron_amp_O2`, `mcore_gpt`) beside the `trainer:` section, or NeMo's own
`megatron_*.yaml` config naming with a `trainer:` section (NeMo's Megatron scripts, training and inference alike,
build the Trainer through the Megatron builder or hand it their own precision plugin). A plain NeMo config
(`exp_manager:` beside `trainer:`, no Megatron model) is Lightning's: see lightning.py.
In Megatron configs, NeMo turns 16 / "16" / "16-mixed" / "bf16" / "bf16-mixed" into its own precision plugin
(no Lightning legacy warning) and hands every other value to Lightning: the vocabulary stays Lightning's, the
legacy spellings are NeMo's normal ones. Source: nemo/collections/nlp/parts/megatron_trainer_builder.py
(`MegatronTrainerBuilder._plugins`).
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.frameworks import lightning
from precisionlint.frameworks.base import CERTAIN, Facts, Row, Section, Vocabulary, child_map

if TYPE_CHECKING:
    from typing import Any

NAME = "nemo"
TITLE = "NeMo (Megatron)"
# What a config, or a Python file, that it reads a setting from holds (one of them at least: engine.prefilter).
CONFIG_WORDS: tuple[bytes, ...] = (b"precision",)
PYTHON_WORDS: tuple[bytes, ...] = ()

VOCABULARY = Vocabulary(
    framework=NAME, title=TITLE, key="precision", accepted=lightning.PRECISION, canonical=lightning.canonical,
    modes=lightning.MODES, rejection="raises ValueError when the Lightning Trainer is built",
    source="nemo/collections/nlp/parts/megatron_trainer_builder.py",
)
VOCABULARIES = {"precision": VOCABULARY}
ROWS = (Row(NAME, ("precision",), "precision"), Row(NAME, ("accelerator",), "accelerator"))
MEGATRON_KEYS = frozenset({"tensor_model_parallel_size", "pipeline_model_parallel_size", "megatron_amp_O2",
                           "mcore_gpt", "mcore_bert", "virtual_pipeline_model_parallel_size"})


def attribute(root: Any, facts: Facts) -> Iterator[Section]:
    trainer = child_map(root, "trainer")
    if trainer is None or trainer.get("precision") is None:
        return
    model = child_map(root, "model")
    if model is not None and model.keys() & MEGATRON_KEYS:
        yield Section(NAME, "trainer", trainer, ("trainer",), ROWS, CERTAIN,
                      "a Megatron `model:` beside it (NeMo's Megatron trainer builder reads `precision`)")
    elif facts.file_name.startswith("megatron_"):
        yield Section(NAME, "trainer", trainer, ("trainer",), ROWS, CERTAIN,
                      "NeMo's `megatron_*.yaml` config (its Megatron scripts read `precision` themselves)")
