"""Python files: parsed with `ast` (never executed, never imported).

The Document's tree is the `ast.Module`; settings are the literal keyword arguments of trainer-like calls
(frameworks.py says which), so the same settings checks run on scripts as on config files.
The training-step model for script rules is built lazily from the same tree (precisionlint.script).
"""

from __future__ import annotations

import ast
import warnings

from precisionlint.model import Document
from precisionlint.sources import Limits, LimitError, SourceError


def load(path: str, text: str, limits: Limits) -> Document:
    try:
        with warnings.catch_warnings():
            # Invalid escape sequences in user code are their business, not a reason to print.
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path, type_comments=False)
    except SyntaxError as exc:
        message = exc.msg or "invalid syntax"
        raise SourceError(f"syntax error: {message}", exc.lineno or 1, exc.offset or 1) from None
    except (ValueError, MemoryError) as exc:  # e.g. source code string cannot contain null bytes
        raise SourceError(f"cannot parse: {exc}") from None
    except RecursionError:
        raise LimitError("nesting too deep to parse") from None
    document = Document(path=path, text=text, format="python", tree=tree)
    from precisionlint.frameworks import python_settings

    document.settings = python_settings(document)
    return document
