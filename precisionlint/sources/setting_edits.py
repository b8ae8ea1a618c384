"""Building the Edits of a fix from a Setting: replace its value, or remove its entry.

Edits are character offsets into the document text, so applying one changes exactly those characters and
nothing else: comments, key order, quoting of other values, blank lines and indentation stay as written.
Values are spelled in the file's own style: its quote character where it used one, a plain YAML scalar where
the old value was plain and the new one reads back as the same string, the quote style most used in a
Python file where the old value was not a string.

A fix is only offered where such an exact edit exists: a Python argument that is a variable (not a literal),
a YAML block scalar (`|`, `>`), or a value the format cannot spell (null in TOML) gets no fix, and the
finding stands alone. precisionlint.fix.verify re-parses every fixed config file and refuses an edit whose result
differs from the original anywhere except the edited key.
"""

from __future__ import annotations

import re

from precisionlint.core.model import Document, Edit, Fix, Setting
from precisionlint.core.patterns import lazy_pattern

# A YAML anchor in front of a value (`&base 16`): kept when the value is replaced, so aliases still resolve.
_YAML_ANCHOR = lazy_pattern(globals(), "_YAML_ANCHOR", r"&[^\s,\[\]{}]+[ \t]+")
_YAML_PLAIN = lazy_pattern(globals(), "_YAML_PLAIN", r"[A-Za-z0-9][A-Za-z0-9._-]*")
# YAML 1.1 words that PyYAML (what Accelerate, DeepSpeed and most training code load configs with) reads as
# booleans or null: a plain scalar spelled like one of these must be quoted to stay a string.
_YAML_SPECIAL_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"})


class Unspellable(ValueError):
    """The value cannot be written as a literal of this format in this place (no exact edit exists)."""


def render_scalar(document: Document, setting: Setting, value: object) -> str:
    """`value` written as a literal of the setting's format, keeping the original quote style.

    Raises Unspellable when the format has no literal for the value (None in TOML, a non-finite float in JSON).
    """
    start, end = setting.value_offsets
    original = document.text[start:end]
    return render_literal(setting.format, value, _quote_of(document, setting.format, original))


def render_literal(fmt: str, value: object, quote: str | None = None) -> str:
    """`value` as a literal of format `fmt`. `quote` is the quote character to prefer for strings:
    None writes the format's default (a plain scalar in YAML where that reads back as the same string)."""
    if isinstance(value, bool):
        if fmt == "python":
            return "True" if value else "False"
        return "true" if value else "false"
    if value is None:
        if fmt == "toml":
            raise Unspellable("TOML has no null")
        return {"python": "None", "json": "null", "yaml": "null"}[fmt]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _render_float(fmt, value)
    if not isinstance(value, str):
        raise Unspellable(f"no {fmt} literal for {type(value).__name__}")
    return _render_string(fmt, value, quote)


def _render_float(fmt: str, value: float) -> str:
    if value != value or value in (float("inf"), float("-inf")):
        if fmt == "json":
            raise Unspellable("JSON has no NaN or infinity")
        names = {"toml": ("nan", "inf"), "yaml": (".nan", ".inf"), "python": ("float('nan')", "float('inf')")}
        nan, inf = names[fmt]
        if value != value:
            return nan
        return inf if value > 0 else "-" + inf
    return repr(value)


def _render_string(fmt: str, text: str, quote: str | None) -> str:
    if fmt == "yaml" and quote is None and plain_yaml_safe(text):
        return text
    if quote == "'" and _single_quotable(fmt, text):
        return f"'{text}'"
    # JSON's escapes are a subset of the double-quoted string escapes of TOML, YAML and Python. Non-ASCII
    # characters are written as themselves: TOML rejects the surrogate-pair escapes that ensure_ascii makes.
    import json  # only when a fix is spelled: json is not needed to check

    return json.dumps(text, ensure_ascii=False)


def _single_quotable(fmt: str, text: str) -> bool:
    """Single quotes read `text` back unchanged: no escapes in TOML literal strings or YAML single quotes."""
    if "'" in text or "\n" in text or "\r" in text:
        return False
    if fmt == "python":
        return "\\" not in text
    return fmt in ("toml", "yaml")


def plain_yaml_safe(text: str) -> bool:
    """A plain YAML scalar that reads back as this same string (no type change, no special characters)."""
    if not _YAML_PLAIN.fullmatch(text):
        return False
    if text.lower() in _YAML_SPECIAL_WORDS:
        return False
    try:
        float(text)
        return False
    except ValueError:
        pass
    # YAML 1.1 also reads 0x1F, 0o17 and 1_000 as numbers, and 2024-01-31 as a date.
    if re.fullmatch(r"[-+]?(0[xob][0-9a-fA-F_]+|[0-9][0-9_]*)", text):
        return False
    return not re.match(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}", text)


def _quote_of(document: Document, fmt: str, original: str) -> str | None:
    """The quote character the original value used; for a Python value that was not a string, the quote
    style the file uses most (pyupgrade-style: a fix reads like the code around it)."""
    first = original[:1]
    if first in ("'", '"'):
        return first
    if fmt == "python":
        return _python_quote(document)
    return None


def _python_quote(document: Document) -> str:
    cached = document.preferred_quote
    if cached is None:
        import io
        import tokenize

        counts = {"'": 0, '"': 0}
        try:
            for token in tokenize.generate_tokens(io.StringIO(document.text).readline):
                if token.type == tokenize.STRING:
                    body = token.string.lstrip("rRbBuUfF")
                    if body[:1] in counts:
                        counts[body[:1]] += 1
        except (tokenize.TokenError, SyntaxError):
            pass
        cached = "'" if counts["'"] > counts['"'] else '"'
        document.preferred_quote = cached
    return cached


def replace_value(document: Document, setting: Setting, value: object, description: str, safe: bool) -> Fix | None:
    """A fix that writes `value` over the setting's value, or None where no exact edit can do that."""
    start, end = setting.value_offsets
    if end <= start:
        return None
    original = document.text[start:end]
    prefix = ""
    if setting.format == "python" and not _is_python_literal(original):
        # A variable or an expression: replacing it with a literal would change code, not a setting.
        return None
    if setting.format == "yaml":
        if original[:1] in ("|", ">"):
            return None  # block scalar: its text runs over the following lines
        anchor = _YAML_ANCHOR.match(original)
        if anchor is not None:
            prefix = anchor.group()
            original = original[anchor.end():]
            if _yaml_alias_used(document.text, prefix.strip()[1:]):
                # Every `*name` reads the anchored value too: changing it here changes them all, which is not
                # a fix of this one setting (the verifier would refuse it; do not offer it).
                return None
        if original.startswith(("!", "*")):
            return None  # an explicit tag decides the type; an alias's value is written elsewhere
        if (isinstance(setting.value, str) and original[:1] not in ("'", '"')
                and " ".join(original.split()) != " ".join(setting.value.split())):
            return None  # a plain scalar folded over several lines: its text is more than this span
    try:
        literal = render_literal(setting.format, value, _quote_of(document, setting.format, original))
    except Unspellable:
        return None
    return Fix(
        description=description,
        applicability="safe" if safe else "unsafe",
        edits=(Edit(start, end, prefix + literal),),
    )


def _yaml_alias_used(text: str, name: str) -> bool:
    """Whether an alias `*name` appears in the text (a name ends at a blank or a flow indicator)."""
    position = text.find("*" + name)
    while position != -1:
        after = position + 1 + len(name)
        if after >= len(text) or text[after] in " \t\r\n,[]{}":
            return True
        position = text.find("*" + name, position + 1)
    return False


def _is_python_literal(source: str) -> bool:
    import ast

    try:
        node = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return False
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant)


def remove_entry(setting: Setting, description: str, safe: bool) -> Fix | None:
    """A fix that deletes the setting's whole entry (its lines, and in JSON the separating comma)."""
    if setting.entry is None:
        return None
    start, end = setting.entry
    if end <= start:
        return None
    return Fix(description=description, applicability="safe" if safe else "unsafe", edits=(Edit(start, end, ""),))
