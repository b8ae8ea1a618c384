"""SpeechBrain hparams files (HyperPyYAML): the run options `precision` and `eval_precision`.

Evidence: HyperPyYAML tags (`!new:`, `!name:`, `!ref`, `!apply:`) that build `speechbrain.` objects make the file
a SpeechBrain recipe's hparams (certain); HyperPyYAML tags without any `speechbrain.` object (likely).
The tags are only read as text here, never constructed. SpeechBrain reads `precision` / `eval_precision` from
the top level of the hparams as run options. Vocabulary: speechbrain/core.py `AMPConfig.from_name` (fp32, fp16,
bf16; anything else raises ValueError "Specified autocast mode ... incorrect").
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.frameworks.base import CERTAIN, LIKELY, Facts, Mode, Row, Section, Vocabulary, exact

if TYPE_CHECKING:
    from typing import Any

NAME = "speechbrain"
TITLE = "SpeechBrain"
# What a config, or a Python file, that it reads a setting from holds (one of them at least: engine.prefilter).
CONFIG_WORDS: tuple[bytes, ...] = (b"precision",)
PYTHON_WORDS: tuple[bytes, ...] = ()

PRECISION = ("fp32", "fp16", "bf16")
MODES = {"fp32": Mode("fp32", "true"), "fp16": Mode("fp16", "mixed"), "bf16": Mode("bf16", "mixed")}
VOCABULARY = Vocabulary(
    framework=NAME, title=TITLE, key="precision", accepted=PRECISION, canonical=exact(PRECISION), modes=MODES,
    rejection="raises ValueError (AMPConfig.from_name) when the Brain is built",
    source="speechbrain/core.py (AMPConfig.from_name)",
)
VOCABULARIES = {"precision": VOCABULARY, "eval_precision": VOCABULARY}
ROWS = (Row(NAME, ("precision",), "precision"), Row(NAME, ("eval_precision",), "eval_precision"))


def attribute(root: Any, facts: Facts) -> Iterator[Section]:
    if root is None or root.kind != "map":
        return
    if root.get("precision") is None and root.get("eval_precision") is None:
        return
    tags = facts.hyperpyyaml_tags
    if not tags:
        return
    shown = ", ".join(f"`{t}`" for t in sorted(tags)[:3])
    if "speechbrain." in facts.text:
        yield Section(NAME, "speechbrain", root, (), ROWS, CERTAIN,
                      f"HyperPyYAML tags ({shown}) building speechbrain objects")
    else:
        yield Section(NAME, "speechbrain", root, (), ROWS, LIKELY, f"HyperPyYAML tags ({shown})")
