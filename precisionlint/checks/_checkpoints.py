"""What is known of a checkpoint before it is loaded: the dtype its publisher saved it in.

Two sources, both read without the network:
- a local checkpoint folder (a `from_pretrained` path, axolotl's `base_model`, LLaMA-Factory's
  `model_name_or_path`) whose `config.json` says `torch_dtype` (Transformers 4.x) or `dtype` (5.x), at its top
  level or in its `text_config` (multimodal models);
- a Hugging Face hub id of a family whose every published checkpoint is bfloat16 (BF16_FAMILIES, each row
  with the config or model card that says so). Fine-tunes by others are not listed: their dtype is theirs.
"""

from __future__ import annotations

import os
import re

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.patterns import lazy_pattern

if TYPE_CHECKING:
    from typing import NamedTuple

    from precisionlint.project import Project
else:
    from precisionlint.core.light_typing import NamedTuple


class Family(NamedTuple):
    pattern: re.Pattern[str]  # matched against the hub id, case-insensitively
    title: str
    source: str  # where the dtype is written


def _family(pattern: str, title: str, source: str) -> Family:
    return Family(re.compile(pattern, re.IGNORECASE), title, source)


# Hub ids of families published in bfloat16 (config.json `torch_dtype: bfloat16`). Llama 2 is not here: its
# Hugging Face weights are float16 (torchtune#1039 shows the tensors). Gemma 1 and 2 are not here either: some
# of their configs say float32.
BF16_FAMILIES: tuple[Family, ...] = (
    _family(r"^meta-llama/(?:Meta-)?Llama-3(?:\.\d)?-", "Llama 3",
            "https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json"),
    _family(r"^Qwen/Qwen(?:2|2\.5|3)(?:\.\d)?-", "Qwen2 / Qwen2.5 / Qwen3",
            "https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json"),
    _family(r"^google/gemma-3", "Gemma 3", "https://huggingface.co/google/gemma-3-4b-it/blob/main/config.json"),
    _family(r"^mistralai/Mistral-7B-", "Mistral 7B",
            "https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json"),
)

_HUB_ID = lazy_pattern(globals(), "_HUB_ID", r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class Checkpoint(NamedTuple):
    """A checkpoint known to be bfloat16, and what says so."""

    name: str  # as written
    evidence: str  # "its config.json says torch_dtype bfloat16" / "Llama 3 checkpoints are published in bfloat16"
    config: str | None  # the local config.json read, if any


def bf16_checkpoint(project: Project, base_file: str, name: object) -> Checkpoint | None:
    """The checkpoint `name` (a path or a hub id written in `base_file`) when it is known to be bfloat16."""
    if not isinstance(name, str) or not name or "$" in name or "{" in name:
        return None
    local = _local_config(project, base_file, name)
    if local is not None:
        path, dtype = local
        if dtype != "bfloat16":
            return None
        return Checkpoint(name, f"its config.json says {dtype}", path)
    if os.path.isabs(name) or name.startswith((".", "~")) or not _HUB_ID.match(name):
        return None
    for family in BF16_FAMILIES:
        if family.pattern.match(name):
            return Checkpoint(name, f"{family.title} checkpoints are published in bfloat16", None)
    return None


def _local_config(project: Project, base_file: str, name: str) -> tuple[str, str | None] | None:
    """(the config.json of a local checkpoint folder, the dtype it declares), or None when there is none."""
    path = project.resolve(base_file, os.path.join(name, "config.json"))
    if path is None:
        return None
    return path, declared_dtype(project, path)


def declared_dtype(project: Project, path: str) -> str | None:
    """The dtype a Transformers config.json at `path` declares ("bfloat16"), or None."""
    document = project.document(path)
    if document is None or document.format != "json":
        return None
    from precisionlint.sources.tree import root_map

    root = root_map(document.tree)
    return None if root is None else _dtype(root)


def _dtype(root: object) -> str | None:
    for holder in (root, _text_config(root)):
        if holder is None:
            continue
        for key in ("dtype", "torch_dtype"):  # Transformers 5 writes `dtype`, 4.x `torch_dtype`
            entry = holder.get(key)  # type: ignore[attr-defined]
            if entry is not None and entry.value.kind == "scalar" and isinstance(entry.value.value, str):
                return str(entry.value.value).removeprefix("torch.")
    return None


def _text_config(root: object) -> object | None:
    entry = root.get("text_config")  # type: ignore[attr-defined]
    return entry.value if entry is not None and entry.value.kind == "map" else None
