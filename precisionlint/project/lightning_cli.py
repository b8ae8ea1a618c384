"""LightningCLI: the YAML config a LightningCLI script is started with, and the Trainer flags on its launch line.

A script that builds `LightningCLI(...)` (Lightning's, or a subclass the script defines) parses its command line
with jsonargparse: `python main.py fit --config configs/run.yaml` reads the config's `trainer:` mapping into
`lightning.Trainer`, and `--trainer.precision 16` on the same line replaces the config's value
(lightning/pytorch/cli.py). The config's reader is then certain, and the launch line's own `--trainer.*` flags
are Lightning's settings on that line. A config given before the subcommand (`main.py --config c.yaml fit`)
holds the subcommand's mapping (`fit: trainer: ...`); `LightningCLI(parser_kwargs={"default_config_files":
[...]})` names configs the script reads without any flag (`{"fit": {"default_config_files": [...]}}` per
subcommand).

A word holding a shell variable names no file, and a flag whose value holds one stays unknown.
"""

from __future__ import annotations

import os

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ast  # a config's check imports this module and parses no Python
    from typing import Any

    from precisionlint.core.model import Document, Setting
    from precisionlint.project import Project
    from precisionlint.project.reads import Read

_SUBCOMMANDS = ("fit", "validate", "test", "predict")
_CLI_MODULES = ("lightning.pytorch.cli", "pytorch_lightning.cli", "pytorch_lightning.utilities.cli", "lightning.cli")


def cli_calls(tree: ast.Module) -> list[ast.Call]:
    """The `LightningCLI(...)` calls of a script: Lightning's class, or a class of the script that subclasses it."""
    import ast

    from precisionlint.frameworks.python_calls import dotted_name, import_aliases

    aliases = import_aliases(tree)

    def is_cli(node: ast.expr) -> bool:
        named = dotted_name(node, aliases) or ""
        return named.rsplit(".", 1)[0] in _CLI_MODULES and named.endswith(".LightningCLI")

    own = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and any(is_cli(b) for b in
                                                                                            node.bases)}
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call) and (
        is_cli(node.func) or (isinstance(node.func, ast.Name) and node.func.id in own))]


def builds_cli(script: Document) -> bool:
    import ast

    if script.builds_lightning_cli is None:
        tree = script.tree
        script.builds_lightning_cli = isinstance(tree, ast.Module) and "LightningCLI" in script.text \
            and bool(cli_calls(tree))
    return script.builds_lightning_cli


def default_config_reads(project: Project, path: str, tree: ast.Module, shown: str) -> list[Read]:
    """`LightningCLI(parser_kwargs={"default_config_files": ["configs/default.yaml"]})`, per subcommand too."""
    import ast

    found: list[Read] = []
    for call in cli_calls(tree):
        kwargs = next((k.value for k in call.keywords if k.arg == "parser_kwargs"), None)
        if not isinstance(kwargs, ast.Dict):
            continue
        for key, value in zip(kwargs.keys, kwargs.values, strict=True):
            if not isinstance(key, ast.Constant):
                continue
            if key.value == "default_config_files":
                found += _listed(project, path, value, ("trainer",), shown, call.lineno)
            elif key.value in _SUBCOMMANDS and isinstance(value, ast.Dict):
                for inner_key, inner in zip(value.keys, value.values, strict=True):
                    if isinstance(inner_key, ast.Constant) and inner_key.value == "default_config_files":
                        found += _listed(project, path, inner, ("trainer",), shown, call.lineno)
    return found


def _listed(project: Project, path: str, node: ast.expr, section: tuple[str, ...], shown: str,
            line: int) -> list[Read]:
    import ast

    from precisionlint.project.reads import Read

    found: list[Read] = []
    if isinstance(node, (ast.List, ast.Tuple)):
        for element in node.elts:
            if isinstance(element, ast.Constant) and isinstance(element.value, str):
                resolved = project.resolve(path, element.value)
                if resolved is not None:
                    found.append(Read(os.path.realpath(resolved), section, None, "lightning",
                                      f"lightning.Trainer (LightningCLI in {shown})", shown, line))
    return found


def config_flags(words: tuple[Any, ...]) -> list[tuple[str, tuple[str, ...]]]:
    """(path as written, section holding the Trainer's keys) of each `--config`/`-c` on a LightningCLI line."""
    found: list[tuple[str, tuple[str, ...]]] = []
    pending: list[str] = []  # configs given before any subcommand
    subcommand: str | None = None
    index = 0
    while index < len(words):
        text = words[index].text
        index += 1
        if subcommand is None and text in _SUBCOMMANDS:
            subcommand = text
            found += [(literal, (text, "trainer")) for literal in pending]
            pending = []
            continue
        literal = None
        if text.startswith("--config="):
            literal = text.partition("=")[2]
        elif text in ("--config", "-c") and index < len(words):
            literal = words[index].text
            index += 1
        if literal is None or "$" in literal or "`" in literal:
            continue
        if subcommand is None:
            pending.append(literal)
        else:
            found.append((literal, ("trainer",)))
    found += [(literal, ("trainer",)) for literal in pending]  # `LightningCLI(run=False)`: no subcommand
    return found


def trainer_flags(words: tuple[Any, ...]) -> dict[str, tuple[Any, Any, Any]]:
    """`--trainer.precision 16` / `--trainer.precision=16`: key -> (value as jsonargparse reads it, flag word,
    value word). A value holding a shell variable is UNRESOLVED."""
    from precisionlint.core.model import UNRESOLVED

    found: dict[str, tuple[Any, Any, Any]] = {}
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if not word.text.startswith("--trainer."):
            continue
        key, equals, raw = word.text[len("--trainer."):].partition("=")
        value_word = word
        if not equals:
            if index >= len(words) or words[index].text.startswith("-"):
                continue
            value_word = words[index]
            raw = value_word.text
            index += 1
        value: Any = UNRESOLVED if "$" in raw or "`" in raw else _scalar(raw)
        found[key] = (value, word, value_word)
    return found


def _scalar(raw: str) -> Any:
    """A flag's value as jsonargparse reads a scalar (YAML): `16` an int, `bf16-mixed` a string."""
    try:
        return int(raw)
    except ValueError:
        return raw


def trainer_settings(document: Document, launch: Any, path: str, script: Document) -> list[Setting]:
    """A LightningCLI launch line's `--trainer.<key>` flags that are Lightning's precision settings."""
    from precisionlint.core.model import Setting
    from precisionlint.frameworks.lightning import ROWS
    from precisionlint.project import display_path

    if not any(word.text.startswith("--trainer.") for word in launch.script_words) or not builds_cli(script):
        return []
    rows = {row.path[0]: row for row in ROWS if len(row.path) == 1}
    found: list[Setting] = []
    shown = display_path(path)
    for key, (value, flag, word) in trainer_flags(launch.script_words).items():
        row = rows.get(key)
        if row is None:
            continue
        span = word.span
        if word is flag:
            from precisionlint.project.launch_options import _value_span

            span = _value_span(document, flag)
        found.append(Setting(
            name=row.name, value=value, framework="lightning", scope=f"lightning@{launch.span.line}",
            key_path=(flag.text.partition("=")[0],), span=span, key_span=flag.span, value_offsets=(0, 0),
            entry=None, format="shell",
            evidence=f"passed to {shown}, whose LightningCLI reads it into lightning.Trainer"))
    return found
