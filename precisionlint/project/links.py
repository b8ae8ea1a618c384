"""Links between files: which files are read together with a file.

- configs: `deepspeed: ds.json` in Hugging Face arguments, an Accelerate config's `deepspeed_config_file`, a
  Lightning strategy's `config:` (`DeepSpeedStrategy` by `_target_` or `class_path`), and the configs a Hydra
  `defaults:` list composes (project/hydra.py);
- scripts: `TrainingArguments(deepspeed=...)`, `deepspeed.initialize(config=... | config_params=...)`,
  `HfDeepSpeedConfig(...)`, `DeepSpeedStrategy(config=...)`, and configs loaded by literal path
  (`json.load(open(...))`, `yaml.safe_load(open(...))`, `OmegaConf.load(...)`, also through `with open(...) as f`);
- launchers: the script a command starts and the config files its flags name (`--deepspeed`,
  `--deepspeed_config`, `--deepspeed_config_file`, `--config_file`).

Literal paths only; resolution is the project's (relative to the naming file, then the project root); a link that
does not resolve, or a file that cannot be parsed, is no link. `links(document)` lists a file's links as written;
`linked_files(path)` lists the files on disk it links to (for an editor that re-checks a file's dependents).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Document, Setting, Span
from precisionlint.frameworks import call_words
from precisionlint.sources.python_index import PythonIndex  # the file's one walk, shared by its passes
from precisionlint.sources.tree import roots

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from precisionlint.core.light_typing import NamedTuple

# The names scripts call `deepspeed.initialize` through: the module's own and the aliases it is imported as.
# Quick text tests before a tree walk (project.scripts, run.context_key) look for these same words.
DEEPSPEED_NAMES = ("deepspeed", "ds", "DeepSpeed")
DEEPSPEED_WORDS = r"\b(?:" + "|".join(DEEPSPEED_NAMES) + r")\b"  # a regular expression

# Calls whose `deepspeed=` argument names a DeepSpeed config read by the Hugging Face Trainer.
HF_ARGUMENT_CLASSES = frozenset(call_words.HF_ARGUMENT_CLASSES)


class Link(NamedTuple):
    literal: str  # the path as written
    span: Span  # where it is written
    scope: str  # the settings scope it belongs to ("hf", "accelerate", "hf@12:5" for a call)
    # "hf-deepspeed" | "accelerate-deepspeed" | "lightning-deepspeed" | "deepspeed-config" | "hydra-default"
    # | "config-load" | "launch-script" | "launch-config"
    kind: str


def config_links(document: Document) -> Iterator[Link]:
    """`deepspeed: ds.json` in Hugging Face arguments; `deepspeed_config: {deepspeed_config_file: ...}` in an
    Accelerate config; a Lightning `DeepSpeedStrategy` section's `config:`."""
    for setting in document.settings:
        if setting.name == "deepspeed" and setting.framework == "hf" and isinstance(setting.value, str) \
                and setting.value.lower().endswith((".json", ".yaml", ".yml")):
            yield Link(setting.value, setting.span, setting.scope, "hf-deepspeed")
    if document.format not in ("yaml", "json", "toml"):
        return
    for root in roots(document.tree):
        if getattr(root, "kind", None) != "map":
            continue
        section = root.get("deepspeed_config")
        if section is not None and section.value.kind == "map":
            entry = section.value.get("deepspeed_config_file")
            if entry is not None and entry.value.kind == "scalar" and isinstance(entry.value.value, str):
                yield Link(entry.value.value, document.span_of(entry.value.start, entry.value.end), "accelerate",
                           "accelerate-deepspeed")
        if "DeepSpeedStrategy" in document.text:
            for node in strategy_nodes(root):
                entry = strategy_config_entry(node)
                if entry is not None:
                    yield Link(entry.value.value, document.span_of(entry.value.start, entry.value.end),
                               "lightning", "lightning-deepspeed")


def is_strategy(node: Any) -> bool:
    """A map that instantiates Lightning's DeepSpeedStrategy (`_target_:` for Hydra, `class_path:` for
    LightningCLI)."""
    if getattr(node, "kind", None) != "map":
        return False
    for key in ("_target_", "class_path"):
        entry = node.get(key)
        if entry is not None and entry.value.kind == "scalar" and isinstance(entry.value.value, str) \
                and entry.value.value.rsplit(".", 1)[-1] == "DeepSpeedStrategy":
            return True
    return False


def strategy_nodes(root: Any, depth: int = 0) -> Iterator[Any]:
    """The DeepSpeedStrategy maps at or below `root`."""
    if depth > 32 or getattr(root, "kind", None) != "map":
        return
    if is_strategy(root):
        yield root
        return
    for entry in root.entries:
        if entry.value.kind == "map":
            yield from strategy_nodes(entry.value, depth + 1)


def strategy_config_entry(node: Any) -> Any:
    """The `config:` entry of a DeepSpeedStrategy map (under `init_args:` for LightningCLI), when a literal path."""
    holder = node
    init_args = node.get("init_args")
    if init_args is not None and init_args.value.kind == "map":
        holder = init_args.value
    entry = holder.get("config")
    if entry is None or entry.value.kind != "scalar" or not isinstance(entry.value.value, str):
        return None
    value = entry.value.value
    return entry if value and "${" not in value and "$" not in value else None


class CallLink(NamedTuple):
    link: Link
    call: ast.Call
    keywords: dict[str, ast.expr]  # the call's keyword arguments by name
    unpacked: bool  # **kwargs or *args: other arguments may hide there


def call_name(func: ast.expr) -> str:
    """The called name: `f` of `f(...)` and of `a.b.f(...)`; "" for anything else (a call of a call)."""
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def python_links(document: Document) -> Iterator[CallLink]:
    """`TrainingArguments(..., deepspeed="ds_config.json")` with a literal path (or a name bound to a config
    loaded from one)."""
    tree = document.tree
    text = document.text
    if not isinstance(tree, ast.Module) or "deepspeed" not in text:
        return
    # The class is matched by the name written at the call, so the text spells it: DeepSpeed's and Lightning's
    # own code says "deepspeed" on every page and builds no TrainingArguments. A name that is not ASCII may be
    # normalised to one by the parser.
    if text.isascii() and not any(name in text for name in HF_ARGUMENT_CLASSES):
        return
    from precisionlint.sources.positions import node_offsets
    from precisionlint.sources.python_index import PythonIndex

    for node in PythonIndex.of(document).calls:  # every call, in ast.walk's order: no walk of the tree here
        if call_name(node.func) not in HF_ARGUMENT_CLASSES:
            continue
        keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg is not None}
        value = keywords.get("deepspeed")
        literal = path_literal(value, document) if value is not None else None
        if literal is None or not literal.lower().endswith((".json", ".yaml", ".yml")):
            continue
        assert value is not None
        start, end = node_offsets(document, value)
        unpacked = any(kw.arg is None for kw in node.keywords) or any(isinstance(a, ast.Starred) for a in node.args)
        scope = f"hf@{node.lineno}:{node.col_offset + 1}"
        yield CallLink(Link(literal, document.span_of(start, end), scope, "hf-deepspeed"), node, keywords,
                       unpacked)


# --- configs a script loads by literal path -----------------------------------------------------------------

# Loader calls by (module-ish receiver, function): json.load(f), yaml.safe_load(f), OmegaConf.load("x.yaml").
_LOADERS = {"json": ("load",), "yaml": ("safe_load", "load", "full_load"), "OmegaConf": ("load",)}


_LOADER_WORDS = ("json.load(", "safe_load(", "yaml.load(", "full_load(", "OmegaConf.load(")


class LoadedConfig(NamedTuple):
    literal: str
    node: ast.expr  # the path's string constant


def _open_literal(node: ast.expr, files: dict[str, ast.Constant]) -> ast.Constant | None:
    """The path constant of `open("x")`, `Path("x").open()`, `io.open("x")`, or a `with open("x") as f` name."""
    if isinstance(node, ast.Name):
        return files.get(node.id)
    if not isinstance(node, ast.Call):
        return None
    if call_name(node.func) == "open":
        target: ast.expr | None = node.args[0] if node.args else None
        if isinstance(node.func, ast.Attribute) and not node.args and isinstance(node.func.value, ast.Call):
            target = node.func.value.args[0] if node.func.value.args else None  # Path("x").open()
        if isinstance(target, ast.Constant) and isinstance(target.value, str):
            return target
    return None


def _loader_literal(node: ast.expr, files: dict[str, ast.Constant]) -> ast.Constant | None:
    """The path constant a loader call reads: `json.load(open("x"))`, `OmegaConf.load("x")`, ..."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or not node.args:
        return None
    receiver = node.func.value
    module = receiver.id if isinstance(receiver, ast.Name) else receiver.attr if isinstance(
        receiver, ast.Attribute) else ""
    if node.func.attr not in _LOADERS.get(module, ()):
        return None
    argument = node.args[0]
    if module == "OmegaConf" and isinstance(argument, ast.Constant) and isinstance(argument.value, str):
        return argument
    return _open_literal(argument, files)


def loaded_configs(document: Document) -> dict[str, LoadedConfig]:
    """Names bound once to a config loaded by literal path (`ds_config = json.load(open("ds.json"))`, also
    inside `with open("ds.json") as f:`). A name bound more than once to different things is left out."""
    cached = document.loaded_configs
    if cached is not None:
        return cached
    tree = document.tree
    found: dict[str, LoadedConfig] = {}
    text = document.text
    if isinstance(tree, ast.Module) and any(word in text for word in _LOADER_WORDS):
        files: dict[str, ast.Constant] = {}
        nodes = PythonIndex.of(document).nodes  # the file's one walk, shared
        for node in nodes:
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    literal = _open_literal(item.context_expr, {})
                    if literal is not None and isinstance(item.optional_vars, ast.Name):
                        files[item.optional_vars.id] = literal
        assigned: dict[str, list[LoadedConfig | None]] = {}
        for node in nodes:
            targets: list[ast.expr] = []
            value: ast.expr | None = None
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                targets, value = [node.target], node.value
            for target in targets:
                if isinstance(target, ast.Name):
                    constant = _loader_literal(value, files) if value is not None else None
                    entry = LoadedConfig(str(constant.value), constant) if constant is not None else None
                    assigned.setdefault(target.id, []).append(entry)
        for name, values in assigned.items():
            literals = {v.literal if v is not None else None for v in values}
            if len(literals) == 1 and values[0] is not None:
                found[name] = values[0]
    document.loaded_configs = found
    return found


def path_literal(node: ast.expr, document: Document) -> str | None:
    """A string constant, or a name bound once to a config loaded by literal path (looked up only then): the
    path a `deepspeed=`/`config=` argument names."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        bound = loaded_configs(document).get(node.id)
        return bound.literal if bound is not None else None
    return None


class ScriptLink(NamedTuple):
    link: Link
    call: ast.Call  # the call that reads the config (deepspeed.initialize, DeepSpeedStrategy, a loader)


def script_links(document: Document) -> Iterator[ScriptLink]:
    """Configs a script reads by literal path, besides TrainingArguments (python_links):
    `deepspeed.initialize(config=...)`, `HfDeepSpeedConfig(...)`, `DeepSpeedStrategy(config=...)`, and loader
    calls (`json.load(open(...))`, `yaml.safe_load(...)`, `OmegaConf.load(...)`)."""
    tree = document.tree
    if not isinstance(tree, ast.Module):
        return
    from precisionlint.sources.positions import node_offsets

    text = document.text
    reads_deepspeed = "deepspeed" in text or "DeepSpeed" in text
    for node in PythonIndex.of(document).calls:  # the file's one walk, shared
        name = call_name(node.func)
        value: ast.expr | None = None
        kind = ""
        if reads_deepspeed and name == "initialize" and is_deepspeed(node.func):
            keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg is not None}
            value, kind = keywords.get("config", keywords.get("config_params")), "deepspeed-config"
        elif reads_deepspeed and name == "HfDeepSpeedConfig":
            keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg is not None}
            value = node.args[0] if node.args else keywords.get("config_file_or_dict")
            kind = "deepspeed-config"
        elif reads_deepspeed and name == "DeepSpeedStrategy":
            keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg is not None}
            value, kind = keywords.get("config"), "lightning-deepspeed"
        else:
            constant = _loader_literal(node, {})
            if constant is not None:
                value, kind = constant, "config-load"
        literal = path_literal(value, document) if value is not None else None
        if literal is None or value is None:
            continue
        start, end = node_offsets(document, value)
        yield ScriptLink(Link(literal, document.span_of(start, end), f"{kind}@{node.lineno}", kind), node)


def is_deepspeed(func: ast.expr) -> bool:
    """`deepspeed.initialize` (the module under its own name or one of the aliases it is imported as)."""
    return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in DEEPSPEED_NAMES


# --- the link map ---------------------------------------------------------------------------------------------


def links(document: Document) -> list[Link]:
    """Every link a file holds, as written (Hydra defaults as `group/option`, resolved by linked_files)."""
    found: list[Link] = []
    if document.format == "python":
        found.extend(c.link for c in python_links(document))
        found.extend(s.link for s in script_links(document))
    elif document.format == "shell":
        for launch in document.tree or []:
            if launch.script is not None and launch.script_span is not None:
                found.append(Link(launch.script, launch.script_span, launch.launcher, "launch-script"))
            for flags in (launch.launcher_flags, launch.script_flags):
                for flag_name in ("deepspeed", "deepspeed_config", "deepspeed_config_file", "config_file"):
                    flag = flags.get(flag_name)
                    if flag is not None and isinstance(flag.value, str):
                        found.append(Link(flag.value, flag.span, launch.launcher, "launch-config"))
    else:
        found.extend(config_links(document))
        if document.format == "yaml":
            from precisionlint.project.hydra import defaults

            for entry in defaults(document):
                if entry is not None:
                    written = f"{entry.group}/{entry.option}" if entry.group else entry.option
                    found.append(Link(written, entry.span, "hydra", "hydra-default"))
    return found


def linked_files(path: str) -> list[str]:
    """The files on disk that the file at `path` links to (resolved, existing, without duplicates), in the
    order its links are written. Empty when the file cannot be loaded."""
    from precisionlint.project.model import current

    model = current()
    document = model.load_linked(path)
    if document is None:
        return []
    project = model.project_for(path)
    found: dict[str, None] = {}
    if document.format == "yaml":
        from precisionlint.project.hydra import default_links

        for _, composed in default_links(document, path, project):
            found[os.path.normpath(composed)] = None
    for link in links(document):
        if link.kind == "hydra-default" or "$" in link.literal:
            continue
        resolved = project.resolve(path, link.literal)
        if resolved is not None:
            found[os.path.normpath(resolved)] = None
    return list(found)


def deepspeed_precision(document: Document) -> dict[str, Setting]:
    """The `fp16.enabled` / `bf16.enabled` settings at the top level of a DeepSpeed config."""
    found: dict[str, Setting] = {}
    for setting in document.settings:
        if setting.framework == "deepspeed" and setting.scope == "deepspeed" and setting.name in ("fp16", "bf16"):
            found.setdefault(setting.name, setting)
    return found


def enabled(value: Any) -> bool | None:
    """A DeepSpeed `enabled` value: True/False (also as the strings Accelerate compares), None for "auto"."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None
