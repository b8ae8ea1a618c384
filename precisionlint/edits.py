"""Building the Edits of a fix from a Setting: replace its value, or remove its entry.

Edits are character offsets into the document text, so applying one changes exactly those characters and
nothing else: comments, key order, quoting of other values, blank lines and indentation stay as written.
Values are spelled in the file's own style (its quote character where it used one).
"""

from __future__ import annotations

import json

from precisionlint.model import Document, Edit, Fix, Setting


def render_scalar(document: Document, setting: Setting, value: object) -> str:
    """`value` written as a literal of the setting's format, keeping the original quote style."""
    start, end = setting.value_offsets
    original = document.text[start:end]
    quote = original[:1] if original[:1] in ("'", '"') else None
    fmt = setting.format
    if isinstance(value, bool):
        if fmt == "python":
            return "True" if value else "False"
        return "true" if value else "false"
    if value is None:
        return {"python": "None", "json": "null", "yaml": "null"}.get(fmt, '""')
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    if fmt == "json":
        return json.dumps(text)
    if fmt == "yaml" and quote is None and _plain_yaml_safe(text):
        return text
    if quote == "'" and "'" not in text and "\\" not in text:
        return f"'{text}'"
    return json.dumps(text)


def _plain_yaml_safe(text: str) -> bool:
    """A plain YAML scalar that reads back as this same string (no type change, no special characters)."""
    import re

    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", text):
        return False
    lowered = text.lower()
    if lowered in {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}:
        return False
    try:
        float(text)
        return False
    except ValueError:
        return True


def replace_value(document: Document, setting: Setting, value: object, description: str, safe: bool) -> Fix:
    start, end = setting.value_offsets
    return Fix(
        description=description,
        applicability="safe" if safe else "unsafe",
        edits=(Edit(start, end, render_scalar(document, setting, value)),),
    )


def remove_entry(setting: Setting, description: str, safe: bool) -> Fix | None:
    if setting.entry is None:
        return None
    start, end = setting.entry
    return Fix(description=description, applicability="safe" if safe else "unsafe", edits=(Edit(start, end, ""),))
