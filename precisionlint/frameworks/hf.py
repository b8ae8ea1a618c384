"""Hugging Face TrainingArguments (and TRL's configs, LLaMA-Factory-style YAML that feeds them).

Evidence: TrainingArguments' own keys at the top level of a YAML/JSON file. `per_device_train_batch_size`
(or LLaMA-Factory's `stage` + `finetuning_type`) makes it certain; three other TrainingArguments keys make it
likely. An embedded `deepspeed:` mapping is DeepSpeed's config as the Hugging Face integration reads it.
Vocabulary: transformers/training_args.py (fp16, bf16, tf32, *_full_eval booleans; half_precision_backend
fp16_backend and fp16_opt_level, removed in 5.x).
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.frameworks import deepspeed
from precisionlint.frameworks.base import CERTAIN, LIKELY, Call, Facts, Row, Section, described
from precisionlint.frameworks.call_words import HF_ARGUMENT_CLASSES

if TYPE_CHECKING:
    from typing import Any

NAME = "hf"
TITLE = "Transformers TrainingArguments"
# What a config, or a Python file, that it reads a setting from holds (one of them at least: engine.prefilter).
CONFIG_WORDS: tuple[bytes, ...] = (b"fp16", b"bf16", b"tf32")
PYTHON_WORDS: tuple[bytes, ...] = (b"fp16", b"bf16", b"tf32")
SHORT = "Transformers"  # in `precisionlint rules`, where the list is of frameworks
HALF_PRECISION_BACKEND = ("auto", "apex", "cpu_amp")
VOCABULARIES: dict[str, Any] = {}
# The classes that take TrainingArguments' precision flags and its `deepspeed=` config path: Transformers' own and
# TRL's trainer configs, which subclass TrainingArguments. The one list every reader of these calls uses
# (frameworks.python_calls for the flags, project.links for the DeepSpeed link, the engine's gate).
ARGUMENT_CLASSES = HF_ARGUMENT_CLASSES
# The calls whose keyword arguments are its settings (frameworks.python_calls reads them, through calls_catalog.py).
PYTHON_CALLS: tuple[Call, ...] = (
    Call(("transformers", "trl"), ARGUMENT_CLASSES, NAME,
         {key: key for key in ("fp16", "bf16", "tf32", "fp16_full_eval", "bf16_full_eval", "half_precision_backend",
                               "fp16_backend", "fp16_opt_level")}),
)

ROWS = tuple(
    Row(NAME, (key,), key)
    for key in ("fp16", "bf16", "tf32", "fp16_full_eval", "bf16_full_eval", "half_precision_backend",
                "fp16_backend", "fp16_opt_level", "deepspeed")
)
MARKERS = frozenset({"output_dir", "per_device_train_batch_size", "per_device_eval_batch_size", "learning_rate",
                     "num_train_epochs", "gradient_accumulation_steps", "evaluation_strategy", "eval_strategy",
                     "save_strategy", "logging_steps", "warmup_ratio", "warmup_steps", "lr_scheduler_type", "optim",
                     "report_to", "overwrite_output_dir", "save_total_limit", "save_steps", "do_train", "do_eval",
                     "ddp_timeout", "gradient_checkpointing", "logging_dir", "dataloader_num_workers",
                     "remove_unused_columns", "load_best_model_at_end", "max_grad_norm", "weight_decay"})
_FLAGS = ("fp16", "bf16", "tf32", "fp16_full_eval", "bf16_full_eval", "half_precision_backend", "fp16_backend",
          "fp16_opt_level")


def attribute(root: Any, facts: Facts) -> Iterator[Section]:
    if root is None or root.kind != "map" or not any(root.get(flag) is not None for flag in _FLAGS):
        return
    if deepspeed.has_blocks(root):
        return  # a DeepSpeed config: its fp16/bf16 are blocks
    found = root.keys() & MARKERS
    if "per_device_train_batch_size" in found:
        confidence, evidence = CERTAIN, "TrainingArguments' `per_device_train_batch_size`"
    elif root.get("stage") is not None and root.get("finetuning_type") is not None:
        confidence, evidence = CERTAIN, "LLaMA-Factory's `stage` and `finetuning_type`"
    elif len(found) >= 3:
        confidence, evidence = LIKELY, f"TrainingArguments keys {described(found)}"
    else:
        return
    yield Section(NAME, "hf", root, (), ROWS, confidence, evidence)
    ds = root.get("deepspeed")
    if ds is not None and ds.value.kind == "map" and deepspeed.has_blocks(ds.value):
        yield Section(deepspeed.NAME, "hf.deepspeed", ds.value, ("deepspeed",), deepspeed.ROWS, confidence,
                      f"the `deepspeed:` mapping of a TrainingArguments file ({evidence})")
