"""The `[trainer_config]` table of a TrainerFactoryConfig file: a Lightning Trainer built by a factory.

Evidence: the table itself, at the top level (certain: the factory reads exactly this table). Its `precision`
goes to the Lightning Trainer (Lightning's vocabulary); `tf32_matmul_precision` is passed to
`torch.set_float32_matmul_precision` before the Trainer is built.
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.frameworks.base import CERTAIN, Facts, Row, Section, child_map

if TYPE_CHECKING:
    from typing import Any

NAME = "trainer_config"
TITLE = "the trainer_config factory"
# What a config, or a Python file, that it reads a setting from holds (one of them at least: engine.prefilter).
CONFIG_WORDS: tuple[bytes, ...] = (b"precision",)
PYTHON_WORDS: tuple[bytes, ...] = ()
SHORT = "[trainer_config]"  # in `precisionlint rules`: the table as users write it
SETTINGS_FRAMEWORK = "lightning"  # the settings it maps are read by Lightning and torch

ROWS = (
    Row("lightning", ("precision",), "precision"),
    Row("lightning", ("tf32_matmul_precision",), "tf32_matmul_precision"),
    Row("lightning", ("accelerator",), "accelerator"),
)
VOCABULARIES: dict[str, Any] = {}


def attribute(root: Any, facts: Facts) -> Iterator[Section]:
    table = child_map(root, "trainer_config")
    if table is not None:
        yield Section(NAME, "trainer_config", table, ("trainer_config",), ROWS, CERTAIN,
                      "the `[trainer_config]` table")
