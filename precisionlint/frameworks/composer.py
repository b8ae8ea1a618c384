"""MosaicML Composer and llm-foundry run configs: the Trainer's `precision`.

Evidence: Composer's `max_duration` (a time string such as "10ep" or "1000ba") at the top level together with
another Composer / llm-foundry key (`train_loader`, `global_train_batch_size`, `device_train_microbatch_size`,
`eval_interval`, `fsdp_config`, `loggers`, `algorithms`) - certain; `max_duration` alone - likely.
Vocabulary: composer/core/precision.py `Precision` (fp32, amp_fp16, amp_bf16, amp_fp8); `Precision(value)`
raises ValueError for anything else when the Trainer is built.
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.frameworks.base import CERTAIN, LIKELY, Call, Facts, Mode, Row, Section, Vocabulary, described, exact

if TYPE_CHECKING:
    from typing import Any

NAME = "composer"
TITLE = "Composer"
# What a config, or a Python file, that it reads a setting from holds (one of them at least: engine.prefilter).
CONFIG_WORDS: tuple[bytes, ...] = (b"precision",)
PYTHON_WORDS: tuple[bytes, ...] = (b"precision",)
# The calls whose keyword arguments are its settings (frameworks.python_calls reads them, through calls_catalog.py).
PYTHON_CALLS: tuple[Call, ...] = (Call(("composer",), ("Trainer",), NAME, {"precision": "precision"}),)

PRECISION = ("fp32", "amp_fp16", "amp_bf16", "amp_fp8")
MODES = {"fp32": Mode("fp32", "true"), "amp_fp16": Mode("fp16", "mixed"), "amp_bf16": Mode("bf16", "mixed"),
         "amp_fp8": Mode("fp8", "mixed")}
VOCABULARY = Vocabulary(
    framework=NAME, title=TITLE, key="precision", accepted=PRECISION, canonical=exact(PRECISION, fold_case=True),
    modes=MODES, rejection="raises ValueError when the Trainer is built",
    source="composer/core/precision.py (Precision)",
)
VOCABULARIES = {"precision": VOCABULARY}
ROWS = (Row(NAME, ("precision",), "precision"),)
MARKERS = frozenset({"train_loader", "eval_loader", "global_train_batch_size", "device_train_microbatch_size",
                     "device_eval_batch_size", "eval_interval", "fsdp_config", "loggers", "algorithms",
                     "save_interval", "save_folder", "autoresume", "eval_first", "device_train_batch_size"})


def attribute(root: Any, facts: Facts) -> Iterator[Section]:
    if root is None or root.kind != "map" or root.get("precision") is None or root.get("max_duration") is None:
        return
    found = root.keys() & MARKERS
    if found:
        yield Section(NAME, "composer", root, (), ROWS, CERTAIN,
                      f"Composer's `max_duration` beside {described(found)}")
    else:
        yield Section(NAME, "composer", root, (), ROWS, LIKELY, "Composer's `max_duration`")
