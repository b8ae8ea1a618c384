"""A file as every reader of it wants it: parsed by its format's loader (sources/) and its canonical settings
read off the tree by the frameworks. The engine, the project model, advise and the fixer's checks load files
through load_document; the formats below know nothing of frameworks.
"""

from __future__ import annotations

from precisionlint.core.model import Document, Format, Setting
from precisionlint.sources import DEFAULT_LIMITS, Limits, parse_document


def load_document(path: str, text: str, fmt: Format, limits: Limits = DEFAULT_LIMITS) -> Document:
    """Parse `text` and extract its canonical settings. Raises SourceError or LimitError."""
    document = parse_document(path, text, fmt, limits)
    read_settings(document)
    return document


def read_settings(document: Document) -> None:
    """Fill `document.settings` from its tree: a config's from each of its roots (a YAML file has one per
    document), a script's from the literal keyword arguments of framework calls (only when it may import a
    framework). A notebook's Document is the Python program of its cells; a shell script has no settings."""
    if document.format == "python":
        from precisionlint.frameworks.python_calls import may_import_a_framework

        if may_import_a_framework(document.text):
            from precisionlint.frameworks.python_calls import python_settings

            document.settings = python_settings(document)
    elif document.format in ("json", "toml", "yaml"):
        from precisionlint.frameworks import config_settings

        roots = document.tree if document.format == "yaml" else [document.tree]
        settings: list[Setting] = []
        for root in roots:
            settings.extend(config_settings(document, root))
        document.settings = settings
