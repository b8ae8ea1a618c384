"""How cross-file-precision-conflict names a setting of another file: its place as `path:line` and as a related
location, DeepSpeed's enabled 16-bit types, and a launch flag's truth value."""

from __future__ import annotations

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Document, Related, Setting, Span

if TYPE_CHECKING:
    from typing import Any


def where_line(path: str, setting: Setting) -> str:
    from precisionlint.project import display_path

    return f"{display_path(path)}:{setting.span.line}"


def related_to(path: str, setting: Setting, what: str) -> Related:
    from precisionlint.project import display_path

    return Related(display_path(path), setting.span, what)


def ds_values(linked: Document) -> dict[str, tuple[bool, Setting]]:
    from precisionlint.project.links import deepspeed_precision, enabled

    values = {}
    for name, setting in deepspeed_precision(linked).items():
        state = enabled(setting.value) if setting.resolved else None
        if state is not None:
            values[name] = (state, setting)
    return values


def display(path: str) -> str:
    from precisionlint.project import display_path

    return display_path(path)


def where_span(path: str, span: Span) -> str:
    return f"{display(path)}:{span.line}"


def truth(value: Any) -> bool | None:
    """A launch flag's value: True for a bare flag or a true spelling, False for a false one, else None."""
    if value is True:
        return True
    if isinstance(value, str) and value.lower() in ("true", "1", "yes", "false", "0", "no"):
        return value.lower() in ("true", "1", "yes")
    return None
