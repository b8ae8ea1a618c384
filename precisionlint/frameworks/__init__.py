"""Which framework reads each config, and what its settings mean.

One module per framework (lightning, trainer_config, hf, accelerate, deepspeed, composer, speechbrain, neox,
axolotl, torchtune, mmengine, detectron2, fairseq, nemo), each declaring its *evidence* (what proves a file or
a section is its own, with a confidence), its *vocabulary* (accepted values, legacy spellings) and its
*mapping* onto canonical settings (see base.py). The registry (registry.py) asks each in turn.

Checks never know the file format or the framework's key names: they get canonical settings ("precision",
"mixed_precision", "fp16", "bf16", "loss_scale", "tf32_matmul_precision", ...) with spans, the framework that
reads them, the attribution's confidence and its evidence, and ask `vocabulary()` / `precision_mode()` what a
value means. A mapping no framework claims yields no settings at all.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import UNRESOLVED, Document, Setting
from precisionlint.sources import template_action

if TYPE_CHECKING:
    from typing import Any

    from precisionlint.frameworks.accelerate import MIXED_PRECISION as ACCELERATE_MIXED_PRECISION
    from precisionlint.frameworks.base import Call, Facts, Mode, Row, Section, Vocabulary
    from precisionlint.frameworks.hf import HALF_PRECISION_BACKEND as HF_HALF_PRECISION_BACKEND
    from precisionlint.frameworks.lightning import LEGACY as LIGHTNING_LEGACY
    from precisionlint.frameworks.lightning import PRECISION as LIGHTNING_PRECISION
    from precisionlint.frameworks.lightning import ROWS as LIGHTNING_TRAINER_ROWS
    from precisionlint.frameworks.lightning import canonical as lightning_canonical
    from precisionlint.frameworks.python_calls import (
        CALLS,
        dotted_name,
        import_aliases,
        literal_value,
        python_settings,
    )
    from precisionlint.frameworks.registry import attribute, framework, title, vocabulary
    from precisionlint.frameworks.trainer_config import ROWS as TRAINER_CONFIG_ROWS

__all__ = [
    "ACCELERATE_MIXED_PRECISION", "CALLS", "Call", "Facts", "HF_HALF_PRECISION_BACKEND", "LIGHTNING_LEGACY",
    "LIGHTNING_PRECISION", "LIGHTNING_TRAINER_ROWS", "Mode", "Row", "Section", "TF32_MATMUL_PRECISION",
    "TRAINER_CONFIG_ROWS", "Vocabulary", "attribute", "config_settings", "dotted_name", "framework",
    "import_aliases", "lightning_canonical", "literal_value", "precision_mode", "python_settings", "sections",
    "section_settings", "setting_vocabulary", "title", "vocabulary",
]

TF32_MATMUL_PRECISION = ("highest", "high", "medium")

# The names the rest of precisionlint has always imported from here, each loaded from its module when first
# asked for: a Python file that calls no framework needs python_calls (and hf, mmengine) at most, not the
# registry and its fourteen framework modules, which only configs and precision values need (start-up).
_LAZY: dict[str, tuple[str, str]] = {
    "LIGHTNING_PRECISION": ("lightning", "PRECISION"),
    "LIGHTNING_LEGACY": ("lightning", "LEGACY"),
    "LIGHTNING_TRAINER_ROWS": ("lightning", "ROWS"),
    "lightning_canonical": ("lightning", "canonical"),
    "ACCELERATE_MIXED_PRECISION": ("accelerate", "MIXED_PRECISION"),
    "HF_HALF_PRECISION_BACKEND": ("hf", "HALF_PRECISION_BACKEND"),
    "TRAINER_CONFIG_ROWS": ("trainer_config", "ROWS"),
    **{name: ("base", name) for name in ("Call", "Facts", "Mode", "Row", "Section", "Vocabulary")},
    **{name: ("python_calls", name) for name in ("CALLS", "dotted_name", "import_aliases", "literal_value",
                                                 "python_settings")},
    **{name: ("registry", name) for name in ("attribute", "framework", "title", "vocabulary")},
}


def __getattr__(name: str) -> Any:
    try:
        module, attribute_name = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{module}"), attribute_name)
    globals()[name] = value
    return value


def setting_vocabulary(setting: Setting) -> Vocabulary | None:
    from precisionlint.frameworks.registry import vocabulary

    return vocabulary(setting.framework, setting.name)


def precision_mode(setting: Setting) -> Mode | None:
    """The meaning of a setting that selects a precision, or None (not such a setting, unresolved, 'auto',
    or a value its framework rejects)."""
    if not setting.resolved:
        return None
    value = setting.value
    found = setting_vocabulary(setting)
    if found is not None:
        return found.mode(value)
    if setting.name in ("fp16", "bf16") and value is True:
        from precisionlint.frameworks.base import Mode

        return Mode(setting.name, "mixed")
    return None


def sections(root: Any, facts: Facts | None = None) -> Iterator[Section]:
    """The attributed sections of a config tree (precisionlint.sources.tree.Node)."""
    from precisionlint.frameworks.base import Facts
    from precisionlint.frameworks.registry import attribute

    return attribute(root, facts if facts is not None else Facts())


def _sections(root: Any) -> Iterator[tuple[str, Any, tuple[str, ...], tuple[Row, ...]]]:
    """(scope, mapping, key path, rows) of each attributed section: the shape precisionlint.fix.setting_changes
    reads."""
    for section in sections(root):
        yield section.scope, section.node, section.path, section.rows


def _unresolved_in_config(text: str, start: int, value: Any) -> bool:
    """A value the config's loader fills in later: an OmegaConf/Hydra interpolation (`${export.dtype}`), Hydra's
    mandatory `???`, a tagged YAML scalar (HyperPyYAML's `!ref <precision>`, a custom constructor), or a
    template's placeholder that a tool renders before any trainer reads the file (Helm's
    `"{{ .Values.precision }}"`, Jinja's `"{{ precision }}"`)."""
    if text.startswith("!", start) and not text.startswith("!!", start):
        return True  # a local tag (`!ref`, `!new:`): its constructor decides the value; `!!str` etc. are data
    return isinstance(value, str) and ("${" in value or value == "???" or template_action(value))


def config_settings(document: Document, root: Any) -> list[Setting]:
    """Canonical settings of a config tree loaded from TOML, YAML or JSON: only those of attributed sections."""
    from precisionlint.frameworks.base import Facts
    from precisionlint.frameworks.registry import attribute

    settings: list[Setting] = []
    facts = Facts(document.path, document.text, document.format)
    for section in attribute(root, facts):
        settings.extend(section_settings(document, section))
    return settings


def section_settings(document: Document, section: Section) -> list[Setting]:
    """The canonical settings of one attributed section of a config tree (its rows that are written there)."""
    settings: list[Setting] = []
    for row in section.rows:
        node = section.node
        entry = None
        for key in row.path:
            entry = node.get(key) if node.kind == "map" else None
            if entry is None:
                break
            node = entry.value
        if entry is None:
            continue
        value_node = entry.value
        value: Any
        if value_node.kind != "scalar":
            if row.summary is not None:
                value = row.summary(value_node)
                if value is None:
                    continue
            elif row.name != "deepspeed":
                continue
            else:
                value = "<inline>"
        else:
            value = value_node.value
            if _unresolved_in_config(document.text, value_node.start, value):
                value = UNRESOLVED
        settings.append(
            Setting(
                name=row.name,
                value=value,
                framework=row.framework,
                scope=section.scope,
                key_path=(*section.path, *row.path),
                span=document.span_of(value_node.start, max(value_node.end, value_node.start + 1)),
                key_span=document.span_of(entry.key_start, max(entry.key_end, entry.key_start + 1)),
                value_offsets=(value_node.start, value_node.end),
                entry=entry.removal,
                format=document.format,
                confidence=section.confidence,
                evidence=section.evidence,
            )
        )
    return settings
