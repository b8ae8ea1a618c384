"""Launch lines are code: the flags of a launch line that the started script's parser hands to a framework.

`deepspeed train.py --bf16 True --tf32 True` starts train.py; when train.py parses its command line with
`HfArgumentParser` over `TrainingArguments` (or a class of Transformers' or TRL's that takes its fields), the
flags `--fp16`, `--bf16` and `--tf32` on the line are TrainingArguments' fields, read for certain. They become the
launcher's settings (framework "hf"), reported on the launch line itself by every rule that reads settings (the
GPU rules with `--gpu`, conflicting-precision). A flag whose value holds a shell variable (`--bf16 $BF16`) stays
unknown; a script that parses its arguments any other way (argparse, its own dataclasses) says nothing here.

HfArgumentParser reads a boolean field's value with `string_to_bool` (`yes`/`true`/`t`/`y`/`1`, `no`/`false`/
`f`/`n`/`0`, any case); the flag alone means True (transformers/hf_argparser.py).
"""

from __future__ import annotations

import ast
import os

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from precisionlint.core.model import Document, Setting
    from precisionlint.project.model import ProjectModel

# TrainingArguments' precision fields that a launch line can set (the shell loader keeps these flags).
_FIELDS = ("fp16", "bf16", "tf32")
_TRUE = frozenset({"yes", "true", "t", "y", "1"})
_FALSE = frozenset({"no", "false", "f", "n", "0"})


def attribute_launches(document: Document) -> None:
    """Add to a launcher's settings the TrainingArguments flags of each line that starts a script parsing them."""
    if document.format != "shell" or not isinstance(document.tree, list):
        return
    from precisionlint.core.model import UNRESOLVED, Setting
    from precisionlint.project import disk_path, display_path, project_of

    project = None
    settings = list(document.settings)
    for launch in document.tree:
        flags = getattr(launch, "script_flags", None) or {}
        script = getattr(launch, "script", None)
        if not isinstance(script, str) or not script.endswith(".py") or "$" in script:
            continue
        if not flags and not getattr(launch, "script_words", ()) and "mixed_precision" not in launch.launcher_flags:
            continue
        project = project or project_of(document)
        path = project.resolve(disk_path(document), script)
        if path is None:
            continue
        settings += _option_settings(document, launch, path, project)
        wanted = [name for name in _FIELDS if name in flags]
        if not wanted:
            continue
        parsed_by = _hf_arguments(path, project.model)
        if parsed_by is None:
            continue
        evidence = f"passed to {display_path(path)}, whose HfArgumentParser reads it into {parsed_by}"
        for name in wanted:
            flag = flags[name]
            value: Any = _boolean(flag.value)
            settings.append(Setting(
                name=name, value=value if value is not None else UNRESOLVED, framework="hf",
                scope=f"hf@{launch.span.line}", key_path=(f"--{name}",), span=flag.span, key_span=flag.flag_span,
                value_offsets=(0, 0), entry=None, format="shell", evidence=evidence,
            ))
    document.settings = settings


def _option_settings(document: Document, launch: Any, path: str, project: Any) -> list[Setting]:
    """A LightningCLI line's `--trainer.*` flags (project/lightning_cli.py), and an `accelerate launch
    --mixed_precision` that the script's Accelerator leaves to the launcher (project/launch_options.py). A flag
    the script's own argparse or click option reads is the value layer's (values/launched.py): reported at the
    framework's keyword in the script, with the launch line as the related location."""
    from precisionlint.project.launch_options import accelerate_launch_setting
    from precisionlint.project.lightning_cli import trainer_settings

    script = project.document(path)
    if script is None or script.format != "python":
        return []
    found = trainer_settings(document, launch, path, script)
    if launch.launcher == "accelerate":
        mixed = accelerate_launch_setting(launch, path, script)
        if mixed is not None:
            found.append(mixed)
    return found


def _boolean(value: object) -> bool | None:
    if value is True:
        return True
    if isinstance(value, str):
        lowered = value.lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
    return None  # a shell variable, or text HfArgumentParser refuses


def _hf_arguments(path: str, model: ProjectModel) -> str | None:
    """The TrainingArguments class a script's HfArgumentParser parses its command line into
    (`HfArgumentParser((ModelArguments, TrainingArguments)).parse_args_into_dataclasses()`), or None. Kept by
    the project model under the script's stat: an editor's long-lived process sees an edited script afresh."""
    real = os.path.realpath(path)
    try:
        info = os.stat(real)
    except OSError:
        return None
    key = (real, info.st_mtime_ns, info.st_size)
    if key in model.hf_parses:
        return model.hf_parses[key]
    model.hf_parses[key] = found = _read_parser(real)
    return found


def _read_parser(path: str) -> str | None:
    from precisionlint.frameworks.call_words import HF_ARGUMENT_CLASSES
    from precisionlint.frameworks.python_calls import dotted_name, import_aliases
    from precisionlint.project.pins import read_text

    text = read_text(path)
    if text is None or "HfArgumentParser" not in text or "parse_args_into_dataclasses" not in text:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    aliases = import_aliases(tree)
    # The script's own dataclasses that subclass an argument class (`class Args(TrainingArguments)`).
    subclasses: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:
                origin = dotted_name(base, aliases) or ""
                if origin.startswith(("transformers.", "trl.")) and origin.rsplit(".", 1)[-1] in HF_ARGUMENT_CLASSES:
                    subclasses[node.name] = origin.rsplit(".", 1)[-1]
    parsed = any(isinstance(node, ast.Attribute) and node.attr == "parse_args_into_dataclasses"
                 for node in ast.walk(tree))
    if not parsed:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        callee = dotted_name(node.func, aliases) or ""
        if not (callee.endswith("HfArgumentParser") and callee.startswith(("transformers", "trl"))):
            continue
        for argument in node.args:
            for inner in ast.walk(argument):
                if isinstance(inner, ast.Name):
                    origin = aliases.get(inner.id, "")
                    if origin.startswith(("transformers.", "trl.")) and inner.id in HF_ARGUMENT_CLASSES:
                        return inner.id
                    if inner.id in subclasses:
                        return f"{inner.id} ({subclasses[inner.id]})"
                elif isinstance(inner, ast.Attribute) and inner.attr in HF_ARGUMENT_CLASSES:
                    origin = dotted_name(inner, aliases) or ""
                    if origin.startswith(("transformers.", "trl.")):
                        return inner.attr
    return None

