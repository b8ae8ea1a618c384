"""torchtune recipe configs: the top-level `dtype` (full low-precision training, no autocast).

Evidence: `_component_: torchtune.` builders in the file - certain. Vocabulary: torchtune/training/precision.py
`PRECISION_STR_TO_DTYPE` (fp16, bf16, fp32, fp64; `get_dtype` raises ValueError for anything else; several
recipes also refuse fp16).
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.frameworks.base import CERTAIN, Facts, Mode, Row, Section, Vocabulary, exact

if TYPE_CHECKING:
    from typing import Any

NAME = "torchtune"
TITLE = "torchtune"
# What a config, or a Python file, that it reads a setting from holds (one of them at least: engine.prefilter).
# a recipe's `dtype: half` names no precision word
CONFIG_WORDS: tuple[bytes, ...] = (b"_component_: torchtune.", b'"_component_": "torchtune.')
PYTHON_WORDS: tuple[bytes, ...] = ()

DTYPES = ("bf16", "fp32", "fp16", "fp64")
MODES = {"bf16": Mode("bf16", "true"), "fp32": Mode("fp32", "true"), "fp16": Mode("fp16", "true"),
         "fp64": Mode("fp64", "true")}
VOCABULARY = Vocabulary(
    framework=NAME, title=TITLE, key="dtype", accepted=DTYPES, canonical=exact(DTYPES), modes=MODES,
    rejection="raises ValueError (training.get_dtype) when the recipe starts",
    source="torchtune/training/precision.py (PRECISION_STR_TO_DTYPE, get_dtype)",
)
VOCABULARIES = {"precision": VOCABULARY}
ROWS = (Row(NAME, ("dtype",), "precision"),)


def attribute(root: Any, facts: Facts) -> Iterator[Section]:
    if root is None or root.kind != "map" or root.get("dtype") is None:
        return
    if "_component_: torchtune." in facts.text or '"_component_": "torchtune.' in facts.text:
        yield Section(NAME, "torchtune", root, (), ROWS, CERTAIN, "`_component_: torchtune.` builders")
