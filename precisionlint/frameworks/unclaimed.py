"""Precision-looking keys of a config that no framework claimed: `--show-frameworks` lists them, and `check`'s
summary counts such files (an "All checks passed!" there would claim more than was checked)."""

from __future__ import annotations

from precisionlint.core.model import Document

_PRECISION_KEYS = ("precision", "mixed_precision", "fp16", "bf16", "dtype", "amp")


def unclaimed_keys(document: Document) -> list[str]:
    """Precision-looking keys of a config no framework claimed (to say why nothing checks them). Only config
    trees have keys: a script, a notebook or a shell launcher (whose tree is its launch commands) has none."""
    if document.format not in ("toml", "yaml", "json"):
        return []
    from precisionlint.sources.tree import roots

    found: list[str] = []
    stack = [(root, "") for root in roots(document.tree) if root is not None]
    while stack and len(found) < 5:
        node, prefix = stack.pop()
        if node.kind == "map":
            for entry in node.entries:
                path = f"{prefix}{entry.key}"
                if entry.key in _PRECISION_KEYS and entry.value.kind == "scalar":
                    line = document.position(entry.key_start)[0]
                    found.append(f"`{path}` line {line}")
                elif entry.value.kind in ("map", "seq") and prefix.count(".") < 6:
                    stack.append((entry.value, path + "."))
        elif node.kind == "seq":
            stack.extend((item, prefix) for item in node.items[:50])
    return found
