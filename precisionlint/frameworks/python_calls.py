"""Python sources: literal keyword arguments of known constructors, and MMEngine's config dicts.

A call's arguments are attributed to a framework only when its callee resolves, through the file's own
imports, into that framework's package (`from lightning import Trainer`; `import lightning as L; L.Trainer`):
a project's own `Trainer(precision=...)` is not Lightning's. Nothing is executed or imported.
"""

from __future__ import annotations

import ast

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import NOT_YET, UNRESOLVED, Confidence, Document, Setting
from precisionlint.core.patterns import lazy_pattern
from precisionlint.frameworks.call import Call
from precisionlint.frameworks.call_words import MMENGINE_MARKER
from precisionlint.frameworks.calls_catalog import FRAMEWORK_CALLS
from precisionlint.sources.literal import literal_eval

if TYPE_CHECKING:
    from typing import Any

    from precisionlint.sources.python_index import PythonIndex


# Which constructor calls carry a framework's settings: each framework module declares its own (PYTHON_CALLS),
# copied into calls_catalog.py by `python -m precisionlint.checks.make_catalog` so that a Python file's check does not
# import every framework module to learn them. torch's own call is no framework's.
CALLS: tuple[Call, ...] = (
    *FRAMEWORK_CALLS,
    Call(("torch",), ("set_float32_matmul_precision",), "torch", {"precision": "tf32_matmul_precision"},
         positional="tf32_matmul_precision"),
)


# Every module a call of CALLS is imported from; MMEngine configs import nothing: their marker is the wrapper's
# name in the optim_wrapper dict.
_FRAMEWORK_MODULES = (*sorted({module for call in CALLS for module in call.modules}), MMENGINE_MARKER)


def may_import_a_framework(text: str) -> bool:
    """False only when the file cannot import any module of CALLS, so that python_settings() would find no
    settings: its calls resolve only through `import` statements, and each names its module in the text. Most
    Python files that pass the prefilter (a `precision` metric, `half = n // 2`) import none of them, and
    python_settings() walks the whole tree three times to find that out. Identifiers that are not ASCII may be
    NFKC-normalised by the parser (a fullwidth `ｔｏｒｃｈ` is `torch`), so such files are not ruled out."""
    return not text.isascii() or any(module in text for module in _FRAMEWORK_MODULES)


# Every name a call of CALLS can end in. A callee's dotted name ends either in an attribute written at the call
# (`L.Trainer`) or in the last part of what an import names (`from lightning import Trainer as T`): in ASCII
# source both are written out in the text, so a file that holds none of these names has no setting to find.
_CALL_NAMES = tuple(sorted({name for call in CALLS for name in call.names}))


def may_call_a_framework(text: str) -> bool:
    """False only when no call of the file can resolve to one of CALLS: none of their names is in the text.
    Identifiers that are not ASCII may be NFKC-normalised by the parser (a fullwidth `Ｔｒａｉｎｅｒ` is
    `Trainer`), so such files are not ruled out."""
    return not text.isascii() or any(name in text for name in _CALL_NAMES)


# A setting is a keyword argument of one of CALLS (or set_float32_matmul_precision's positional one), so its
# keyword is written in the text, followed by `=` after any spaces, line continuations or comments. Framework
# code names Trainer and Fabric everywhere (type hints, imports, docstrings) without passing a precision:
# this test spares those files the tree walk (pytorch-lightning: 123 files name a framework call, 93 pass a
# keyword; diffusers: 430 and 103).
_SETTING_KEYWORDS = tuple(sorted({key for call in CALLS for key in call.keywords}))
# What may stand between a keyword and its `=`. A comment runs to the end of its line (the lookahead): otherwise a
# banner of `#` after a keyword could be split into comments in 2**n ways before the match fails (Show-o's
# training/train.py took minutes).
_AFTER_KEYWORD = lazy_pattern(globals(), "_AFTER_KEYWORD", r"(?:\s|\\|#[^\n]*(?![^\n]))*=")
_POSITIONAL_CALLS = tuple(name for call in CALLS if call.positional for name in call.names)


# Settings that only qualify a precision setting of the same call (Lightning's accelerator and strategy: an IPU
# or a ColossalAI strategy changes what a precision means). No rule reports on them alone.
_QUALIFIERS = frozenset(("accelerator", "strategy"))
# The last text scanned and what _setting_offsets found in it: the engine's test of whether a file is read and the
# settings pass that follows it ask about the same text, which is scanned once.
_LAST_SCAN: list[object] = [None, []]


def _setting_offsets(text: str) -> list[tuple[int, str]]:
    """(offset, keyword) where a keyword of CALLS starts a word and is followed by `=` (after any spaces, line
    continuations or comments), or (offset, name) where a call that takes its setting positionally is named:
    each keyword is found with str.find, a few times faster than one regular expression of them all on a
    framework's code, where `precision` is on every page. ASCII text (a word character is [A-Za-z0-9_])."""
    if _LAST_SCAN[0] is text:
        return _LAST_SCAN[1]  # type: ignore[return-value]
    found: list[tuple[int, str]] = []
    for keyword in _SETTING_KEYWORDS:
        start = text.find(keyword)
        while start != -1:
            before = text[start - 1] if start else " "
            if not (before.isalnum() or before == "_") and _AFTER_KEYWORD.match(text, start + len(keyword)):
                found.append((start, keyword))
            start = text.find(keyword, start + 1)
    for name in _POSITIONAL_CALLS:
        start = text.find(name)
        while start != -1:
            found.append((start, name))
            start = text.find(name, start + 1)
    _LAST_SCAN[0], _LAST_SCAN[1] = text, found
    return found


def setting_lines(text: str) -> list[int] | None:
    """The lines (1-based, sorted) where a call of CALLS can carry a setting (_setting_offsets): none when no
    call can. None where any line may, since lines cannot be counted as the parser counts them from the text
    alone (a name the parser may normalise; a carriage return)."""
    from precisionlint.sources.python_index import lines_of

    if not text.isascii():
        return None
    offsets = _setting_offsets(text)
    if offsets and "\r" in text:
        return None
    return lines_of(text, sorted(offset for offset, _ in offsets))


def document_setting_lines(document: Document) -> list[int] | None:
    """setting_lines() of the document's text, found once per document for every pass that asks."""
    found = document.setting_lines
    if found is NOT_YET:
        found = document.setting_lines = setting_lines(document.text)
    return found


def may_pass_a_precision_setting(text: str) -> bool:
    """False only when no call of CALLS in the file can pass a setting that a rule reports on: none of their
    keywords but the qualifiers (_QUALIFIERS) is followed by `=`, and no call that takes its setting
    positionally is named (pytorch-lightning: 16 of its files pass only `accelerator=` or `strategy=`). Not
    ruled out when the text is not ASCII."""
    return not text.isascii() or any(word not in _QUALIFIERS for _, word in _setting_offsets(text))


def may_pass_a_setting(text: str) -> bool:
    """False only when no call of CALLS in the file can carry a setting: no keyword of theirs is followed by
    `=`, and no call that takes its setting positionally is named. Not ruled out when the text is not ASCII."""
    return setting_lines(text) != []


def import_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> dotted origin for the module's imports (top level and inside functions)."""
    from precisionlint.sources.python_index import PythonIndex

    return PythonIndex(tree).import_aliases()


def dotted_name(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    head = aliases.get(node.id)
    if head is None:
        return None
    return ".".join([head, *reversed(parts)])


def literal_value(node: ast.expr, constants: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    try:
        return literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return UNRESOLVED


def python_settings(document: Document) -> list[Setting]:
    from precisionlint.sources.python_index import PythonIndex

    settings: list[Setting] = []
    if MMENGINE_MARKER in document.text:
        settings.extend(_mmengine_settings(document))
    if not may_call_a_framework(document.text):
        return settings  # most training scripts import torch but construct no Trainer: no walk at all
    lines = document_setting_lines(document)
    if lines == []:
        return settings  # Trainer named (a hint, an import) but no precision keyword passed: no walk either
    # Only the calls written on the lines that pass a setting: a framework's own code names Trainer in every
    # file and passes a precision in few places (pytorch-lightning: a fifth of the nodes walked).
    index = PythonIndex.of(document) if lines is None else PythonIndex.on_lines(document, lines)
    aliases = index.import_aliases()
    packages = {module for call in CALLS for module in call.modules}
    if not any(origin.split(".", 1)[0] in packages for origin in aliases.values()):
        return settings  # no callee can resolve into a framework: nothing to walk for
    if index.pruned and any(origin.rsplit(".", 1)[-1] in _POSITIONAL_CALLS and local not in _POSITIONAL_CALLS
                            for local, origin in aliases.items()):
        index = PythonIndex.of(document)  # `from torch import set_float32_matmul_precision as f`: f(...) anywhere
    from precisionlint.sources.positions import node_offsets

    for node in index.calls:
        name = dotted_name(node.func, aliases)
        if name is None:
            continue
        package, _, last = name.partition(".")[0], None, name.rsplit(".", 1)[-1]
        for call in CALLS:
            if last not in call.names or package not in call.modules:
                continue
            scope = f"{call.framework}@{node.lineno}:{node.col_offset + 1}"
            arguments: list[tuple[str, ast.expr, ast.AST]] = [
                (kw.arg, kw.value, kw) for kw in node.keywords if kw.arg in call.keywords
            ]
            if call.positional and node.args and not isinstance(node.args[0], ast.Starred):
                arguments.append(("precision", node.args[0], node.args[0]))
            for keyword, value_node, key_node in arguments:
                start, end = node_offsets(document, value_node)
                k_start, k_end = node_offsets(document, key_node)
                if key_node is not value_node:
                    k_end = k_start + len(keyword)
                removal = None
                statement = index.statement_of(node)
                if call.framework == "torch" and statement is not None:
                    removal = _statement_removal(document, statement, index)
                setting = Setting(
                    name=call.keywords[keyword],
                    # module constants only for a name a module-level statement assigns (counting a file's
                    # assignments is a walk); any other name is not a literal
                    value=literal_value(value_node, index.module_constants() if isinstance(
                        value_node, ast.Name) and value_node.id in index.module_constant_names() else {}),
                    framework=call.framework,
                    scope=scope,
                    key_path=(last, keyword),
                    span=document.span_of(start, end),
                    key_span=document.span_of(k_start, k_end),
                    value_offsets=(start, end),
                    entry=removal,
                    format="python",
                    confidence=Confidence.CERTAIN,
                    evidence=f"`{name}` imported from `{package}`",
                )
                settings.append(setting)
                if not setting.resolved:
                    # the value layer (precisionlint.values.settings) follows it when a rule asks
                    document.unresolved_values.append((setting, value_node))
    return settings


def _mmengine_settings(document: Document) -> list[Setting]:
    from precisionlint.frameworks import mmengine  # only for a file that names its wrapper
    from precisionlint.sources.positions import node_offsets

    settings = []
    for canonical, value_node, key_node, statement in mmengine.amp_wrapper_arguments(document.tree):
        start, end = node_offsets(document, value_node)
        k_start, k_end = node_offsets(document, key_node)
        if isinstance(key_node, ast.keyword):
            k_end = k_start + len(key_node.arg or "")
        settings.append(
            Setting(
                name=canonical,
                value=literal_value(value_node, {}),
                framework=mmengine.NAME,
                scope=f"mmengine@{statement.lineno}",
                key_path=("optim_wrapper", document.text[k_start:k_end].strip("'\"")),
                span=document.span_of(start, end),
                key_span=document.span_of(k_start, k_end),
                value_offsets=(start, end),
                format="python",
                confidence=mmengine.CONFIDENCE,
                evidence=mmengine.EVIDENCE,
            )
        )
    return settings


def _statement_removal(document: Document, statement: ast.stmt, index: PythonIndex) -> tuple[int, int] | None:
    """Whole lines of a statement, when removing it leaves valid code (it is not alone in its block)."""
    from precisionlint.sources.positions import node_offsets
    from precisionlint.sources.tree import whole_line_range

    found = index.block_of(statement)
    if found is None:
        return None
    parent, block = found
    if len(block) == 1 and not isinstance(parent, ast.Module):
        return None
    start, end = node_offsets(document, statement)
    return whole_line_range(document.text, start, end)
