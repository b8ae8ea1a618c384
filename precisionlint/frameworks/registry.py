"""The framework registry: every framework module, in the order their claims are heard.

When two frameworks claim the same mapping, the first one listed here keeps it: the more specific reader
first (NeMo's Megatron builder before Lightning, GPT-NeoX before plain DeepSpeed).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.frameworks.base import Facts, Section, Vocabulary

if TYPE_CHECKING:
    from typing import Any

# Frameworks that attribute sections of TOML / YAML / JSON configs, by module name: adding a framework is its module
# in this package and its name here (the one registry line).
_CONFIG_FRAMEWORK_NAMES = (
    "trainer_config",
    "nemo",
    "lightning",
    "speechbrain",
    "composer",
    "torchtune",
    "axolotl",
    "neox",
    "deepspeed",
    "hf",
    "accelerate",
    "detectron2",
    "fairseq",
)
# Frameworks only seen in Python (MMEngine configs are Python files).
_PYTHON_FRAMEWORK_NAMES = ("mmengine",)



def _modules(names: tuple[str, ...]) -> tuple[ModuleType, ...]:
    return tuple(importlib.import_module(f"precisionlint.frameworks.{name}") for name in names)


CONFIG_FRAMEWORKS: tuple[ModuleType, ...] = _modules(_CONFIG_FRAMEWORK_NAMES)
# Every framework module, also those only seen in Python.
ALL_FRAMEWORKS: tuple[ModuleType, ...] = (*CONFIG_FRAMEWORKS, *_modules(_PYTHON_FRAMEWORK_NAMES))
_BY_NAME = {module.NAME: module for module in ALL_FRAMEWORKS}


def framework(name: str) -> ModuleType | None:
    return _BY_NAME.get(name)


def title(name: str) -> str:
    module = _BY_NAME.get(name)
    return module.TITLE if module is not None else name


def vocabulary(framework_name: str, setting_name: str) -> Vocabulary | None:
    """The vocabulary `framework_name` reads `setting_name` with (None: no value list to check against)."""
    module = _BY_NAME.get(framework_name)
    if module is None:
        return None
    vocabularies: dict[str, Vocabulary] = module.VOCABULARIES
    return vocabularies.get(setting_name)


def attribute(root: Any, facts: Facts) -> Iterator[Section]:
    """Every section of a config tree some framework claims, one claim per mapping (and scope)."""
    claimed: set[tuple[int, tuple[str, ...]]] = set()
    for module in CONFIG_FRAMEWORKS:
        for section in module.attribute(root, facts):
            # The same mapping may hold two frameworks' settings (a GPT-NeoX file is also DeepSpeed's config),
            # but never twice the same setting.
            key = (id(section.node), tuple(sorted(row.name for row in section.rows)))
            if any(node_id == id(section.node) and set(names) & set(key[1]) for node_id, names in claimed):
                continue
            claimed.add(key)
            yield section
