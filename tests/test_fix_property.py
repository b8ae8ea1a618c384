"""Property: fixing a config changes only the lines its fixes name.

Hypothesis writes TOML, YAML and JSON trainer configs with comments (some of them look like settings), odd
spacing, blank lines, indentation, CRLF, key orders and quote styles, holding fixable settings: Lightning
legacy precision values, a TF32 setting beside mixed precision, a DeepSpeed static loss scale. The fixes run
through the real code path (engine -> rules -> precisionlint.fix.apply) and the test proves that
  - every line no fix names is in the result, unchanged and in order, and nothing else is added;
  - the result parses with the format's own library and holds the values the fixes promise;
  - a second fix pass changes nothing.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from precisionlint.checks import find_rule
from precisionlint.engine.check import check_bytes
from precisionlint.engine.options import EngineOptions
from precisionlint.fix.apply import fix_text
from precisionlint.fix.plan import is_applicable
from precisionlint.fix.verify import parse_config, scalar_key
from precisionlint.frameworks import LIGHTNING_LEGACY

RULES = [find_rule(name) for name in ("legacy-precision-value", "tf32-ignored-under-mixed-precision",
                                      "static-loss-scale", "unknown-precision-value", "invalid-tf32-setting")]
OPTIONS = EngineOptions(rules=[r for r in RULES if r is not None])
PROPERTY_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PRECISIONS = [16, "16", "bf16", 32, "32", 64, "64", "16-mixed", "bf16-mixed", "32-true", "16-true"]
# Comment text that looks like settings: a fix must never touch it.
COMMENTS = ["precision = 16", "tf32_matmul_precision: high", "loss_scale 128", "keep me", "", "é ünïcode"]
EXTRA_VALUES = st.one_of(st.integers(-5, 100), st.booleans(),
                         st.sampled_from(["run # not a comment", "a: b", "16", "bf16", "x'y", ""]))


@dataclass
class Entry:
    key: str
    value: Any
    comment_before: str | None
    blank_before: bool
    trailing: str | None


@dataclass
class Config:
    sections: list[tuple[str, list[Entry]]]  # (name, entries) in file order
    crlf: bool
    final_newline: bool
    header: str | None
    quote: str  # '"', "'", or "" (plain YAML where possible)
    indent: int
    equals: str  # TOML "=" spacing, YAML space after ":", JSON separator
    json_indent: Any  # None (one line), 2, 4 or "\t"


@st.composite
def entries(draw: st.DrawFn, required: list[tuple[str, Any]]) -> list[Entry]:
    extra_keys = draw(st.lists(st.sampled_from(["max_epochs", "name", "devices", "note", "seed"]), unique=True,
                               max_size=3))
    pairs = required + [(key, draw(EXTRA_VALUES)) for key in extra_keys]
    ordered = draw(st.permutations(pairs))
    return [
        Entry(key, value,
              draw(st.one_of(st.none(), st.sampled_from(COMMENTS))),
              draw(st.booleans()),
              draw(st.one_of(st.none(), st.sampled_from(COMMENTS))))
        for key, value in ordered
    ]


@st.composite
def configs(draw: st.DrawFn) -> Config:
    trainer: list[tuple[str, Any]] = [("precision", draw(st.sampled_from(PRECISIONS)))]
    tf32 = draw(st.one_of(st.none(), st.sampled_from(["high", "medium", "highest"])))
    if tf32 is not None:
        trainer.append(("tf32_matmul_precision", tf32))
    sections = [("trainer_config", draw(entries(trainer)))]
    if draw(st.booleans()):
        fp16 = [("enabled", draw(st.sampled_from([True, False, "auto"]))),
                ("loss_scale", draw(st.sampled_from([0, 1, 128, 1024.0, 65536])))]
        sections.append(("fp16", draw(entries(fp16))))
    return Config(
        sections=draw(st.permutations(sections)),
        crlf=draw(st.booleans()),
        final_newline=draw(st.booleans()),
        header=draw(st.one_of(st.none(), st.sampled_from(COMMENTS))),
        quote=draw(st.sampled_from(['"', "'", ""])),
        indent=draw(st.sampled_from([0, 2, 4])),
        equals=draw(st.sampled_from(["=", " = ", "  =   "])),
        json_indent=draw(st.sampled_from([None, 2, 4, "\t"])),
    )


# ---------------------------------------------------------------------------------------------------------------
# Renderers: one text per format from the same Config
# ---------------------------------------------------------------------------------------------------------------

def _string(text: str, quote: str, fmt: str) -> str:
    if fmt == "yaml" and quote == "" and re.fullmatch(r"[a-z][a-z0-9-]*", text) and text not in ("no", "yes", "on",
                                                                                                 "off", "y", "n"):
        return text
    if quote == "'" and "'" not in text:
        return f"'{text}'"
    return json.dumps(text, ensure_ascii=False)


def _literal(value: Any, quote: str, fmt: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return _string(value, quote, fmt)


def _join(lines: list[str], config: Config) -> str:
    newline = "\r\n" if config.crlf else "\n"
    return newline.join(lines) + (newline if config.final_newline else "")


def _comment(text: str | None) -> str:
    return f"# {text}".rstrip() if text is not None else ""


def render_toml(config: Config) -> str:
    lines = [_comment(config.header)] if config.header is not None else []
    pad = " " * config.indent
    for name, section in config.sections:
        lines.append(f"[{name}]")
        for entry in section:
            if entry.blank_before:
                lines.append("")
            if entry.comment_before is not None:
                lines.append(pad + _comment(entry.comment_before))
            trailing = f"  {_comment(entry.trailing)}" if entry.trailing is not None else ""
            lines.append(f"{pad}{entry.key}{config.equals}{_literal(entry.value, config.quote, 'toml')}{trailing}")
    return _join(lines, config)


def render_yaml(config: Config) -> str:
    lines = [_comment(config.header)] if config.header is not None else []
    pad = " " * (config.indent or 2)
    colon = ":" + " " * max(1, len(config.equals) - len(config.equals.lstrip()))
    for name, section in config.sections:
        lines.append(f"{name}:")
        for entry in section:
            if entry.blank_before:
                lines.append("")
            if entry.comment_before is not None:
                lines.append(pad + _comment(entry.comment_before))
            trailing = f"  {_comment(entry.trailing)}" if entry.trailing is not None else ""
            lines.append(f"{pad}{entry.key}{colon}{_literal(entry.value, config.quote, 'yaml')}{trailing}")
    return _join(lines, config)


def render_json(config: Config) -> str:
    separator = ":" if config.equals == "=" else ": "
    document = {name: {e.key: e.value for e in section} for name, section in config.sections}
    if config.json_indent is None:
        text = json.dumps(document, separators=(", ", separator), ensure_ascii=False)
    else:
        text = json.dumps(document, indent=config.json_indent, separators=(",", separator), ensure_ascii=False)
    if config.crlf:
        text = text.replace("\n", "\r\n")
    return text + (("\r\n" if config.crlf else "\n") if config.final_newline else "")


RENDER = {"toml": render_toml, "yaml": render_yaml, "json": render_json}


# ---------------------------------------------------------------------------------------------------------------
# The property
# ---------------------------------------------------------------------------------------------------------------

def expected_values(config: Config) -> dict[tuple[str, str], Any]:
    """What the fixed file must hold: (section, key) -> value, or the ABSENT marker."""
    sections = {name: {e.key: e.value for e in entries} for name, entries in config.sections}
    trainer = sections["trainer_config"]
    precision = trainer["precision"]
    modern = LIGHTNING_LEGACY.get(precision, precision) if not isinstance(precision, bool) else precision
    expected: dict[tuple[str, str], Any] = {("trainer_config", "precision"): modern}
    if "tf32_matmul_precision" in trainer:
        ignored = modern in ("16-mixed", "bf16-mixed") and trainer["tf32_matmul_precision"] in ("high", "medium")
        expected[("trainer_config", "tf32_matmul_precision")] = ABSENT if ignored else trainer["tf32_matmul_precision"]
    if "fp16" in sections:
        fp16 = sections["fp16"]
        scale = fp16["loss_scale"]
        static = fp16["enabled"] in (True, "auto") and scale > 0
        expected[("fp16", "loss_scale")] = 0 if static else scale
    return expected


ABSENT = object()


def named_lines(text: str, fmt: str) -> set[int]:
    """0-based indexes of the lines an applicable fix of the first pass touches."""
    result = check_bytes("t", text.encode("utf-8"), fmt, OPTIONS)  # type: ignore[arg-type]
    starts = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
    named: set[int] = set()
    for finding in result.findings:
        if not is_applicable(finding, unsafe=True):
            continue
        assert finding.fix is not None
        for edit in finding.fix.edits:
            for index, start in enumerate(starts):
                end = starts[index + 1] if index + 1 < len(starts) else len(text) + 1
                if start < max(edit.end, edit.start + 1) and edit.start < end:
                    named.add(index)
    return named


def assert_only_named_lines_changed(old: str, new: str, named: set[int]) -> None:
    """`new` is `old` with each run of named lines replaced by some text, every other line kept verbatim and
    in order: a full match of  ^U0(.*?)U1(.*?)...Un$  where the U are the runs of unnamed lines."""
    lines = old.split("\n")
    pieces = [line + ("\n" if i + 1 < len(lines) else "") for i, line in enumerate(lines)]
    pattern = ""
    in_named = False
    for index, piece in enumerate(pieces):
        if index in named:
            if not in_named:
                pattern += "(.*?)"
            in_named = True
        else:
            pattern += re.escape(piece)
            in_named = False
    assert re.fullmatch(pattern, new, re.DOTALL), f"a line no fix names changed:\n{old!r}\n->\n{new!r}"


def value_at(document: Any, section: str, key: str) -> Any:
    node = document
    for step in (section, key):
        pairs = list(node) if isinstance(node, list) else list(node.items())
        hits = [v for k, v in pairs if k == step]
        if not hits:
            return ABSENT
        node = hits[-1]
    return node


def check_property(config: Config, fmt: str) -> None:
    old = RENDER[fmt](config)
    named = named_lines(old, fmt)
    first = fix_text("t", old, fmt, OPTIONS, unsafe=True)  # type: ignore[arg-type]
    new = first.new_text

    assert_only_named_lines_changed(old, new, named)
    [document] = parse_config(fmt, new)
    for (section, key), wanted in expected_values(config).items():
        found = value_at(document, section, key)
        if wanted is ABSENT:
            assert found is ABSENT, f"{section}.{key} should be gone:\n{new}"
        else:
            assert found is not ABSENT and scalar_key(found) == scalar_key(wanted), (
                f"{section}.{key}: {found!r} != {wanted!r}\n{new}")

    second = fix_text("t", new, fmt, OPTIONS, unsafe=True)  # type: ignore[arg-type]
    assert second.new_text == new and second.fixed == 0, "a second fix pass changed the file"
    assert not [f for f in second.findings if is_applicable(f, unsafe=True)]


@PROPERTY_SETTINGS
@given(configs())
def test_toml_fixes_change_only_named_lines(config: Config) -> None:
    check_property(config, "toml")


@PROPERTY_SETTINGS
@given(configs())
def test_yaml_fixes_change_only_named_lines(config: Config) -> None:
    check_property(config, "yaml")


@PROPERTY_SETTINGS
@given(configs())
def test_json_fixes_change_only_named_lines(config: Config) -> None:
    check_property(config, "json")
