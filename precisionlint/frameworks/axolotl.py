"""axolotl YAML configs: `bf16` (true | false | "auto"), `fp16`, `tf32`, `fp8`.

Evidence: `base_model` with axolotl's own keys (`micro_batch_size`, `sequence_len`, `datasets`, `adapter`,
`lora_r`, `num_epochs`) - certain. Vocabulary: axolotl/utils/schemas/config.py (`bf16: Literal["auto"] | bool
| None = "auto"`, `fp16: bool | None`, `tf32: bool | None`, `fp8: bool | None`); pydantic reads
true/false/yes/no/on/off/1/0 strings as booleans.
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
    described,
    lax_boolean,
)

if TYPE_CHECKING:
    from typing import Any

NAME = "axolotl"
TITLE = "axolotl"
# What a config, or a Python file, that it reads a setting from holds (one of them at least: engine.prefilter).
CONFIG_WORDS: tuple[bytes, ...] = (b"fp16", b"bf16", b"tf32", b"fp8")
PYTHON_WORDS: tuple[bytes, ...] = ()


def _switch(key: str, dtype: str, extra: tuple[str, ...] = ()) -> Vocabulary:
    return Vocabulary(
        framework=NAME, title=TITLE, key=key, accepted=(True, False, *extra), canonical=lax_boolean(extra),
        modes={True: Mode(dtype, "mixed")}, rejection="fails axolotl's config validation (pydantic) at start-up",
        source="axolotl/utils/schemas/config.py (AxolotlInputConfig)", suggest=boolean_suggestions,
    )


VOCABULARIES = {"bf16": _switch("bf16", "bf16", ("auto",)), "fp16": _switch("fp16", "fp16"),
                "fp8": _switch("fp8", "fp8"), "tf32": _switch("tf32", "fp32")}
VOCABULARIES["tf32"] = VOCABULARIES["tf32"]._replace(modes={})
ROWS = (Row(NAME, ("bf16",), "bf16"), Row(NAME, ("fp16",), "fp16"), Row(NAME, ("tf32",), "tf32"),
        Row(NAME, ("fp8",), "fp8"))
MARKERS = frozenset({"micro_batch_size", "sequence_len", "datasets", "adapter", "lora_r", "num_epochs",
                     "sample_packing", "base_model_config", "load_in_8bit", "load_in_4bit", "val_set_size"})


def attribute(root: Any, facts: Facts) -> Iterator[Section]:
    if root is None or root.kind != "map" or root.get("base_model") is None:
        return
    found = root.keys() & MARKERS
    if found and any(root.get(key) is not None for key in ("bf16", "fp16", "tf32", "fp8")):
        yield Section(NAME, "axolotl", root, (), ROWS, CERTAIN, f"axolotl's `base_model` beside {described(found)}")
