"""Detectron2 (yacs) configs: `SOLVER.AMP.ENABLED` - float16 autocast with a GradScaler (AMPTrainer).

Evidence: the upper-case yacs layout (`MODEL:` beside `SOLVER:`), with `_BASE_` or `MODEL.META_ARCHITECTURE`
- certain. Vocabulary: detectron2/config/defaults.py (`_C.SOLVER.AMP.ENABLED = False`); yacs refuses a value of
another type when the file is merged.
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.frameworks.base import CERTAIN, Facts, Mode, Row, Section, Vocabulary, child_map

if TYPE_CHECKING:
    from typing import Any

NAME = "detectron2"
TITLE = "Detectron2"
# What a config, or a Python file, that it reads a setting from holds (one of them at least: engine.prefilter).
CONFIG_WORDS: tuple[bytes, ...] = (b"AMP:",)  # SOLVER.AMP
PYTHON_WORDS: tuple[bytes, ...] = ()


def _suggest(value: Any) -> list[Any]:
    word = str(value).strip().lower()
    return [True] if word in ("true", "yes", "on", "1") else [False] if word in ("false", "no", "off", "0") else []


# yacs compares the type of the merged value with the default's (a bool): a string "True" is refused.
VOCABULARIES = {"fp16": Vocabulary(
    framework=NAME, title=TITLE, key="SOLVER.AMP.ENABLED", accepted=(True, False),
    canonical=lambda value: value if isinstance(value, bool) else None, modes={True: Mode("fp16", "mixed")},
    rejection="raises ValueError (type mismatch) when yacs merges the file",
    source="detectron2/config/defaults.py (_C.SOLVER.AMP.ENABLED); yacs _check_and_coerce_cfg_value_type",
    suggest=_suggest,
)}

ROWS = (Row(NAME, ("SOLVER", "AMP", "ENABLED"), "fp16"),)


def attribute(root: Any, facts: Facts) -> Iterator[Section]:
    solver = child_map(root, "SOLVER")
    if solver is None or child_map(solver, "AMP") is None:
        return
    model = child_map(root, "MODEL")
    if root.get("_BASE_") is not None or (model is not None and model.get("META_ARCHITECTURE") is not None):
        yield Section(NAME, "detectron2", root, (), ROWS, CERTAIN,
                      "a yacs config with `SOLVER.AMP` beside `_BASE_` / `MODEL.META_ARCHITECTURE`")
