"""The checkpoint the user trains, as far as `advise` needs it: whether it was published in bfloat16.

Read without the network, with check's fp16-on-bf16-checkpoint rules (precisionlint.checks._checkpoints): a
local checkpoint folder whose config.json says bfloat16, or a Hugging Face hub id of a family published in
bfloat16. The name comes from `--model`, else from the model a `--config` file names (axolotl's `base_model`,
LLaMA-Factory's `model_name_or_path`); a `--shapes` config.json is read for its own dtype.
"""

from __future__ import annotations

import os

from precisionlint.core.model import Document

_MODEL_KEYS = ("base_model", "model_name_or_path")  # axolotl, LLaMA-Factory


def bf16_checkpoint(model: str | None, config_path: str | None, document: Document | None,
                    shapes: str | None) -> str | None:
    """What says the trained checkpoint is bfloat16 ("Qwen/Qwen2.5-7B: Qwen2 / Qwen2.5 / Qwen3 checkpoints are
    published in bfloat16"), or None when nothing does."""
    from precisionlint.checks._checkpoints import bf16_checkpoint as known
    from precisionlint.checks._checkpoints import declared_dtype
    from precisionlint.project.model import current

    base = os.path.abspath(config_path) if config_path else os.path.join(os.getcwd(), "advise")
    name = model if model is not None else _named_model(document)
    if name is not None:
        found = known(current().project_for(base), base, name)
        if found is not None:
            return f"{found.name}: {found.evidence}"
    if shapes is not None and shapes.endswith(".json") and os.path.isfile(shapes):
        path = os.path.abspath(shapes)
        if declared_dtype(current().project_for(path), path) == "bfloat16":
            return f"{shapes}: it says bfloat16"
    return None


def _named_model(document: Document | None) -> str | None:
    """The model a config file trains, where its framework names it at the top level."""
    if document is None:
        return None
    from precisionlint.sources.tree import root_map

    root = root_map(document.tree)
    if root is None:
        return None
    for key in _MODEL_KEYS:
        entry = root.get(key)
        if entry is not None and entry.value.kind == "scalar" and isinstance(entry.value.value, str):
            return str(entry.value.value)
    return None
