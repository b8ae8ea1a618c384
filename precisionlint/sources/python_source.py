"""Python files: parsed with `ast` (never executed, never imported).

The Document's tree is the `ast.Module`; its settings, the literal keyword arguments of trainer-like calls, are
read by frameworks/python_calls.py (frameworks/documents.py), so the same settings checks run on scripts as on
config files.
The training-step model for script rules is built lazily from the same tree (precisionlint.script).
"""

from __future__ import annotations

import ast
import sys
import warnings

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Document
from precisionlint.sources import LimitError, Limits, NewerSyntaxError, NotCheckable, SourceError
from precisionlint.sources.positions import use_universal_newlines

if TYPE_CHECKING:
    from collections.abc import Callable

    Reparse = Callable[[str, str], ast.Module | None]

_DATABRICKS = "# Databricks notebook source"
# The language server knows the tree of a buffer's previous text: given (path, text), this gives the tree of `text`
# from it, parsing again only the statements an edit touched, or None (server/reparse.py). Asked inside the
# engine's guards (time limit, recursion), as the parse it replaces.
_reparse: Reparse | None = None


def offer_texts_to(reparse: Reparse | None) -> Reparse | None:
    """From now on, offer each Python text to `reparse` first (None: to none); returns the one it replaces."""
    global _reparse
    previous, _reparse = _reparse, reparse
    return previous


def load(path: str, text: str, limits: Limits, tree: ast.Module | None = None) -> Document:
    """`tree`, when given, is `text` already parsed (a notebook's program, parsed whole to see that its cells
    parse alone)."""
    if tree is None and _reparse is not None:
        tree = _reparse(path, text)
    try:
        if tree is None:
            with warnings.catch_warnings():
                # Invalid escape sequences in user code are their business, not a reason to print.
                warnings.simplefilter("ignore")
                tree = ast.parse(text, filename=path, type_comments=False)
    except SyntaxError as exc:
        if text.startswith(_DATABRICKS):
            # A Databricks notebook exported as source: its cells may hold IPython lines (`!pip`, `%sh`) that
            # run in the notebook and are not Python. Like a notebook cell that does not parse, not reported.
            raise NotCheckable("a Databricks notebook source with lines that are not Python") from None
        message = exc.msg or "invalid syntax"
        from precisionlint.sources.python_grammar import newer_grammar

        needed = newer_grammar(text, exc)
        if needed is not None:
            version, feature = needed
            raise NewerSyntaxError(
                f"{feature} needs Python {version}; precisionlint runs on Python "
                f"{sys.version_info[0]}.{sys.version_info[1]} and cannot parse it: not checked",
                exc.lineno or 1, exc.offset or 1,
            ) from None
        raise SourceError(f"syntax error: {message}", exc.lineno or 1, exc.offset or 1) from None
    except ValueError as exc:  # e.g. source code string cannot contain null bytes
        raise SourceError(f"cannot parse: {exc}") from None
    except RecursionError:
        raise LimitError("nesting too deep to parse") from None
    except MemoryError:
        # CPython's parser reports a too-deep expression as a MemoryError; a process whose memory limit is met
        # while it parses gets one too, and that is reported as running out of memory (engine.check)
        from precisionlint.core.memory import near_the_limit

        if near_the_limit():
            raise
        raise LimitError("nesting too deep to parse") from None
    document = Document(path=path, text=text, format="python", tree=tree)
    use_universal_newlines(document)  # ast counts a lone \r as a line end
    return document
