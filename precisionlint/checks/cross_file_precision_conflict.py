"""## What it does
Compares the precision of files that are read together and reports where they disagree:

- Hugging Face `TrainingArguments` (in a script, a YAML/JSON arguments file, or `--fp16` / `--bf16` on a
  launcher line) against the DeepSpeed config they name (`deepspeed="ds_config.json"`, `--deepspeed ds.json`):
  an explicit `fp16.enabled` / `bf16.enabled` in the DeepSpeed file must equal the arguments' `fp16` / `bf16`.
- An Accelerate config's `mixed_precision` (or `accelerate launch --mixed_precision`) against the
  `deepspeed_config_file` it names: the other 16-bit type may not be enabled there.
- `accelerate launch --mixed_precision X train.py` against `Accelerator(mixed_precision=Y)` written in
  `train.py`: the argument in the script wins and the launcher's flag is ignored.
- A launcher's precision flag (`accelerate launch --mixed_precision bf16 train.py`, `torchrun train.py --bf16`,
  or the `mixed_precision` of the Accelerate config that `--config_file` names) against a `torch.autocast` that
  `train.py` hard-codes to the other 16-bit type on its training path. Only
  literal, unconditional choices count: a dtype taken from a variable, an autocast under an `if`, or a script
  that reads a precision argument (`args.bf16`, `args.mixed_precision`) is never reported.
- A Lightning `precision` against the config file of the `DeepSpeedStrategy` it runs with
  (`Trainer(precision="bf16-mixed", strategy=DeepSpeedStrategy(config="ds.json"))`, or a YAML trainer section
  with a `_target_` / `class_path` DeepSpeedStrategy). Hydra configs are compared as composed: the files their
  `defaults:` list brings in (`- trainer: gpu` -> `trainer/gpu.yaml`) count as written there.

A flag the arguments leave out is taken as unknown (it may come from the command line), except where a script
of the project hands the whole file to TrainingArguments (`HfArgumentParser(...).parse_yaml_file("args.yaml")`,
`TrainingArguments(**cfg)`) and assigns no precision flag afterwards: then it is False, as Transformers compares
it (`transformers/integrations/deepspeed.py`, `HfTrainerDeepSpeedConfig.trainer_config_process`:
`self.fill_match("bf16.enabled", (args.bf16 or args.bf16_full_eval), "bf16|bf16_full_eval")`; the mismatches it
collects are raised by `trainer_config_finalize`).

The finding stands where the value to change is written and names the other file's line (SARIF
`relatedLocations`, and `related` in the JSON output). Paths are resolved relative to the file that names them,
then to the project root; a path that does not resolve, a value that is not a literal (`fp16=args.fp16`, `$CFG`)
and `"auto"` in the DeepSpeed file are never reported.

## Why is this bad?
The job fails at start-up, after the cluster was booked: Transformers raises `ValueError: Please correct the
following DeepSpeed config values that mismatch TrainingArguments values: - ds fp16.enabled=True vs hf
fp16|fp16_full_eval+fp16_backend(amp)=False`, and Accelerate raises "`--mixed_precision` arg cannot be set to
`bf16` when `fp16` is set in the DeepSpeed config file". Lightning fills in the DeepSpeed block of its own
precision only when the config file has none: with `precision="bf16-mixed"` and a file that enables only fp16, it
adds `bf16: {enabled: true}` and DeepSpeed refuses to start ("bfloat16 and fp16 modes cannot be simultaneously
enabled"); when the file disables it explicitly, the engine trains in the file's type, not the Trainer's. A
launcher flag that the script overrides silently
trains in another precision than the one the run was launched with.

## Example
```python
# ds_config.json: {"fp16": {"enabled": true}, ...}
args = TrainingArguments(output_dir="out", bf16=True, deepspeed="ds_config.json")
```

## Use instead
```json
{"fp16": {"enabled": "auto"}, "bf16": {"enabled": "auto"}}
```
`"auto"` lets the DeepSpeed file follow the arguments, so that precision is chosen in one place.

## Fix safety
No fix: which of the two files states the intended precision is the user's decision.

## References
- Transformers DeepSpeed integration (`auto` values): https://huggingface.co/docs/transformers/deepspeed
- Accelerate DeepSpeed config file: https://huggingface.co/docs/accelerate/usage_guides/deepspeed
- `Accelerator(mixed_precision=...)` and the launcher default: https://huggingface.co/docs/accelerate/package_reference/accelerator
- Lightning DeepSpeed strategy (`config`, precision): https://lightning.ai/docs/pytorch/stable/advanced/model_parallel/deepspeed.html
- Hydra defaults lists: https://hydra.cc/docs/advanced/defaults_list/
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._launch_autocast import launcher_vs_script
from precisionlint.checks._linked_settings import ds_values, related_to, truth, where_line
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Document, Finding, Related, Severity, Span
from precisionlint.sources.tree import root_map, roots

if TYPE_CHECKING:
    import ast  # a config's check imports this module and parses no Python
    from typing import Any

CODE = "PL402"
NAME = "cross-file-precision-conflict"
SEVERITY = Severity.ERROR
SUMMARY = "Files read together disagree on precision (TrainingArguments, Accelerate or Lightning vs DeepSpeed)."
TARGET = "settings"
READS = "hf, deepspeed, accelerate, lightning, launchers, torch"
PYTHON_WORDS: tuple[bytes, ...] = (b"deepspeed=",)  # TrainingArguments(deepspeed="ds.json"): the file it names
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets

_HF_FLAGS = {"fp16": ("fp16", "fp16_full_eval"), "bf16": ("bf16", "bf16_full_eval")}


def check(ctx: CheckContext) -> Iterator[Finding]:
    document = ctx.document
    if document.format == "shell":
        yield from _launchers(ctx)
        return
    if document.format == "yaml" and "defaults" in document.text:
        yield from _lightning_configs(ctx)  # a Hydra config: the strategy may come from a composed file
    if "deepspeed" not in document.text and "DeepSpeed" not in document.text:
        return
    if document.format == "python":
        yield from _python(ctx)
        yield from _lightning_python(ctx)
    else:
        yield from _configs(ctx)
        if document.format != "yaml" or "defaults" not in document.text:
            yield from _lightning_configs(ctx)


# --- what Transformers and Accelerate refuse: their precision against the DeepSpeed file ----------------------


def _hf_conflict(
    ctx: CheckContext,
    hf: dict[str, bool | None],  # "fp16"/"bf16" -> the arguments' value; None: not known
    explicit: dict[str, Span],  # where each explicitly True/False flag is written
    fallback: Span,  # where to report when no flag is written (the deepspeed= path)
    path: str,
    linked: Document,
    spelled: str = "`{}=True`",  # how a flag reads where it is written
) -> Iterator[Finding]:
    ds = ds_values(linked)
    mismatches = [(name, state, setting) for name, (state, setting) in ds.items()
                  if hf.get(name) is not None and hf[name] != state]
    if not mismatches:
        return
    mismatches.sort(key=lambda m: not m[1])  # the type the DeepSpeed file enables says most
    name, state, setting = mismatches[0]
    flag = next((n for n in ("fp16", "bf16") if hf.get(n) and n in explicit), None)
    span = explicit[flag] if flag else explicit.get(name, fallback)
    said = f"{spelled.format(flag)} here" if flag else f"these arguments leave `{name}` off"
    other = f"{name}.enabled={str(state).lower()}"
    yield ctx.report(
        span,
        f"{said}, but the DeepSpeed config they name sets `{other}` ({where_line(path, setting)}): Transformers "
        f"refuses to start (\"DeepSpeed config values that mismatch TrainingArguments values\"); set "
        f"`\"enabled\": \"auto\"` in its fp16 and bf16 blocks so that it follows these arguments",
        related=(related_to(path, setting, f"DeepSpeed `{other}`"),),
    )


def _accelerate_conflict(
    ctx: CheckContext, mixed: Any, span: Span, path: str, linked: Document, how: str
) -> Iterator[Finding]:
    if mixed not in ("fp16", "bf16"):
        return
    other = "bf16" if mixed == "fp16" else "fp16"
    ds = ds_values(linked)
    if other in ds and ds[other][0]:
        setting = ds[other][1]
        yield ctx.report(
            span,
            f"{how} `{mixed}`, but the DeepSpeed config file it names enables {other} ({where_line(path, setting)}): "
            f"Accelerate refuses to start (\"`--mixed_precision` arg cannot be set to `{mixed}` when `{other}` is "
            f"set in the DeepSpeed config file\"); make them agree, or set `\"enabled\": \"auto\"` there",
            related=(related_to(path, setting, f"DeepSpeed `{other}.enabled=true`"),),
        )


# --- configs: Hugging Face arguments files, Accelerate configs ---------------------------------------------


def _configs(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.project.config_readers import reads_whole
    from precisionlint.project.links import config_links

    document = ctx.document
    for link in config_links(document):
        found = ctx.linked(link.literal)
        if found is None:
            continue
        path, linked = found
        if link.kind == "hf-deepspeed":
            scope = [s for s in document.settings if s.scope == link.scope and s.framework == "hf" and s.resolved]
            hf: dict[str, bool | None] = {}
            explicit: dict[str, Span] = {}
            for name, keys in _HF_FLAGS.items():
                values = [s for s in scope if s.name in keys and isinstance(s.value, bool)]
                if any(s.value for s in values):
                    hf[name] = True
                    explicit[name] = next(s.span for s in values if s.value)
            if not hf or any(s.name == "half_precision_backend" for s in scope):
                continue
            # Only flags written True are known here (a flag left out may come from the command line), unless
            # a script hands the whole file to TrainingArguments (HfArgumentParser.parse_yaml_file,
            # TrainingArguments(**cfg)): then a flag left out is False.
            whole = reads_whole(document, link.scope, tuple(key for keys in _HF_FLAGS.values() for key in keys))
            for name in _HF_FLAGS:
                if name not in hf and (whole is not None or any(s.name in _HF_FLAGS[name] for s in scope)):
                    hf[name] = False
            yield from _hf_conflict(ctx, hf, explicit, link.span, path, linked)
        else:
            for setting in document.settings:
                if setting.name == "mixed_precision" and setting.framework == "accelerate" and setting.resolved:
                    yield from _accelerate_conflict(ctx, setting.value, setting.span, path, linked,
                                                    "`mixed_precision` is")


# --- scripts: TrainingArguments(deepspeed="...") --------------------------------------------------------------


def _literal(node: ast.expr | None) -> Any:
    import ast

    if isinstance(node, ast.Constant):
        return node.value
    return _UNKNOWN


_UNKNOWN = object()


def _python(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.project.links import python_links
    from precisionlint.sources.positions import node_offsets

    document = ctx.document
    for found_link in python_links(document):
        found = ctx.linked(found_link.link.literal)
        if found is None:
            continue
        path, linked = found
        keywords = found_link.keywords
        if "half_precision_backend" in keywords or "fp16_backend" in keywords:
            continue
        hf: dict[str, bool | None] = {}
        explicit: dict[str, Span] = {}
        for name, keys in _HF_FLAGS.items():
            values = [_literal(keywords.get(k)) for k in keys if k in keywords]
            if any(v is _UNKNOWN or not isinstance(v, bool) for v in values):
                hf[name] = None  # `fp16=args.fp16`: decided at run time
                continue
            if any(values):
                hf[name] = True
                node = next(keywords[k] for k in keys if k in keywords and _literal(keywords[k]) is True)
                explicit[name] = document.span_of(*node_offsets(document, node))
            elif values or not found_link.unpacked:
                hf[name] = False  # written False, or left out of a call that passes nothing else
        yield from _hf_conflict(ctx, hf, explicit, found_link.link.span, path, linked)


# --- launchers --------------------------------------------------------------------------------------------------


def _launchers(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.project.links import config_links

    for launch in ctx.document.tree or []:
        flags = launch.script_flags
        # --fp16 / --bf16 with --deepspeed ds.json: the Hugging Face pattern (HfArgumentParser reads both).
        ds_flag = flags.get("deepspeed")
        if ds_flag is not None and ("fp16" in flags or "bf16" in flags):
            found = ctx.linked(ds_flag.value)
            if found is not None:
                hf: dict[str, bool | None] = {}
                explicit: dict[str, Span] = {}
                for name in ("fp16", "bf16"):
                    if name in flags:
                        hf[name] = truth(flags[name].value)
                        explicit[name] = flags[name].flag_span
                if any(hf.values()):
                    yield from _hf_conflict(ctx, hf, explicit, ds_flag.span, found[0], found[1], "`--{}`")
        yield from launcher_vs_script(ctx, launch)
        if launch.launcher != "accelerate":
            continue
        mixed = launch.launcher_flags.get("mixed_precision")
        if mixed is None or not isinstance(mixed.value, str):
            continue
        # accelerate launch --mixed_precision X --deepspeed_config_file ds.json / --config_file accelerate.yaml
        ds_file = launch.launcher_flags.get("deepspeed_config_file")
        if ds_file is not None:
            found = ctx.linked(ds_file.value)
            if found is not None:
                yield from _accelerate_conflict(ctx, mixed.value, mixed.span, found[0], found[1],
                                                "`--mixed_precision` is")
        config_flag = launch.launcher_flags.get("config_file")
        if ds_file is None and config_flag is not None:
            config = ctx.linked(config_flag.value)
            if config is not None:
                for link in config_links(config[1]):
                    if link.kind != "accelerate-deepspeed":
                        continue
                    ds_path = ctx.project.resolve(config[0], link.literal)
                    linked = ctx.project.document(ds_path) if ds_path else None
                    if ds_path and linked is not None:
                        yield from _accelerate_conflict(ctx, mixed.value, mixed.span, ds_path, linked,
                                                        "`--mixed_precision` is")
        # accelerate launch --mixed_precision X train.py, where train.py says Accelerator(mixed_precision=Y)
        if launch.script is not None:
            script = ctx.linked(launch.script)
            if script is None:
                continue
            path, linked_script = script
            for setting in linked_script.settings:
                if (setting.name == "mixed_precision" and setting.framework == "accelerate" and setting.resolved
                        and isinstance(setting.value, str) and setting.value != mixed.value):
                    yield ctx.report(
                        mixed.span,
                        f"`--mixed_precision {mixed.value}` is ignored: {launch.script} creates "
                        f"`Accelerator(mixed_precision={setting.value!r})` ({where_line(path, setting)}), and the "
                        f"script's argument wins over the launcher's; the run trains in {setting.value}",
                        severity=Severity.WARNING,
                        related=(related_to(path, setting, f"`Accelerator(mixed_precision={setting.value!r})`"),),
                    )
                    break


# --- Lightning: precision against the DeepSpeedStrategy's config file ------------------------------------------

_LIGHTNING_TYPES = {"16-mixed": "fp16", "16-true": "fp16", "16": "fp16", "bf16-mixed": "bf16", "bf16-true": "bf16",
                    "bf16": "bf16"}


def _lightning_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    return _LIGHTNING_TYPES.get(str(value)) if isinstance(value, (str, int)) else None


def _lightning_conflict(
    ctx: CheckContext, precision: Any, span: Span, precision_where: str, path: str, linked: Document,
    related: tuple[Related, ...] = (),
) -> Iterator[Finding]:
    """`precision` (a Lightning value) against the DeepSpeed config file of the strategy."""
    wanted = _lightning_type(precision)
    if wanted is None:
        return
    other = "bf16" if wanted == "fp16" else "fp16"
    ds = ds_values(linked)
    if other not in ds or not ds[other][0] or ds.get(wanted, (False,))[0]:
        return
    setting = ds[other][1]
    root = root_map(linked.tree)
    keys = root.keys() if root is not None else set()
    own_block = wanted in keys  # Lightning looks for "fp16" / "bf16" (not the old "bfloat16")
    other_line = where_line(path, setting)
    if not own_block:
        message = (
            f"{precision_where} `precision={precision!r}`, but the DeepSpeed config of its DeepSpeedStrategy enables "
            f"{other} ({other_line}) and has no `{wanted}` block: Lightning adds `{wanted}: {{enabled: true}}` and "
            f"DeepSpeed refuses to start (\"bfloat16 and fp16 modes cannot be simultaneously enabled\"); remove the "
            f"fp16/bf16 blocks from the DeepSpeed config (Lightning fills them in from `precision`) or make them agree"
        )
        severity = Severity.ERROR
    else:
        message = (
            f"{precision_where} `precision={precision!r}`, but the DeepSpeed config of its DeepSpeedStrategy disables "
            f"{wanted} and enables {other} ({other_line}): Lightning keeps the file's blocks, so the engine trains in "
            f"{other}; remove the fp16/bf16 blocks from the DeepSpeed config or make them agree"
        )
        severity = Severity.WARNING
    yield ctx.report(span, message, severity=severity,
                     related=(*related, related_to(path, setting, f"DeepSpeed `{other}.enabled=true`")))


def _lightning_python(ctx: CheckContext) -> Iterator[Finding]:
    """`Trainer(precision=..., strategy=DeepSpeedStrategy(config="ds.json"))` (the strategy also through a name
    bound once to such a call)."""
    import ast

    from precisionlint.frameworks.python_calls import document_setting_lines
    from precisionlint.project.links import call_name, loaded_configs
    from precisionlint.sources.positions import node_offsets
    from precisionlint.sources.python_index import PythonIndex

    document = ctx.document
    tree = document.tree
    if not isinstance(tree, ast.Module) or "DeepSpeedStrategy" not in document.text:
        return
    # The Trainer passes `precision=`, so the call takes in a line where that keyword is written: only the calls
    # on such lines are walked (the index the framework settings built, when they did).
    lines = document_setting_lines(document)
    if lines == []:
        return
    index = PythonIndex.of(document) if lines is None else PythonIndex.on_lines(document, lines)
    strategies: dict[str, list[ast.expr]] | None = None  # what each name is assigned, looked up only when needed
    for node in index.calls:  # the calls on those lines, in ast.walk's order
        if call_name(node.func) != "Trainer":
            continue
        keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg is not None}
        precision, strategy = keywords.get("precision"), keywords.get("strategy")
        if not isinstance(precision, ast.Constant) or strategy is None:
            continue
        if isinstance(strategy, ast.Name):
            if strategies is None:
                strategies = _assigned_values(tree)
            bound = strategies.get(strategy.id, [])
            strategy = bound[0] if len(bound) == 1 else None
        if not isinstance(strategy, ast.Call) or call_name(strategy.func) != "DeepSpeedStrategy":
            continue
        config = next((kw.value for kw in strategy.keywords if kw.arg == "config"), None)
        literal = None
        if isinstance(config, ast.Constant) and isinstance(config.value, str):
            literal = config.value
        elif isinstance(config, ast.Name) and config.id in loaded_configs(document):
            literal = loaded_configs(document)[config.id].literal
        found = ctx.linked(literal)
        if found is None:
            continue
        span = document.span_of(*node_offsets(document, precision))
        yield from _lightning_conflict(ctx, precision.value, span, "the Trainer sets", found[0], found[1])


def _assigned_values(tree: ast.Module) -> dict[str, list[ast.expr]]:
    """The values each plain name is assigned (`name = value`), anywhere in the module (assignments are
    statements: only the statement lists are walked)."""
    import ast

    from precisionlint.sources.python_index import all_statements

    assigned: dict[str, list[ast.expr]] = {}
    for node in all_statements(tree):
        if type(node) is ast.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(node.value)  # type: ignore[attr-defined]
    return assigned


def _lightning_configs(ctx: CheckContext) -> Iterator[Finding]:
    """A YAML/JSON/TOML trainer section whose strategy is a DeepSpeedStrategy with a `config:` file, compared
    with the `precision` beside it, both as composed by a Hydra `defaults:` list. Reported in the file that
    writes one of the two, at the precision when it is written here."""
    from precisionlint.project import disk_path, display_path
    from precisionlint.project.hydra import compose, lookup
    from precisionlint.project.links import is_strategy, strategy_config_entry

    document = ctx.document
    fs_path = disk_path(document)
    view = compose(document, fs_path, ctx.project) if document.format == "yaml" else []
    if not view:
        from precisionlint.project.hydra import Composed

        view = [Composed("", fs_path, document, None)]
    if not any("DeepSpeedStrategy" in part.document.text for part in view):
        return
    seen: set[str] = set()
    for part in view:
        for root in roots(part.document.tree):
            for node, keys in _with_paths(root, ()):
                if not keys or keys[-1] != "strategy" or not is_strategy(node):
                    continue
                trainer = ".".join(filter(None, (part.package, *keys[:-1])))
                if trainer in seen:
                    continue
                seen.add(trainer)
                prefix = f"{trainer}." if trainer else ""
                entry = strategy_config_entry(node)
                config = lookup(view, prefix + ("strategy.init_args.config" if node.get("init_args") is not None
                                                else "strategy.config"))
                precision = lookup(view, prefix + "precision")
                target = lookup(view, prefix + "strategy._target_") or lookup(view, prefix + "strategy.class_path")
                if entry is None or config is None or precision is None or target is None \
                        or not isinstance(config.value, str) or config.value != entry.value.value \
                        or not str(target.value).endswith("DeepSpeedStrategy"):
                    continue
                here = os.path.realpath(fs_path)
                precision_here = os.path.realpath(precision.path) == here
                config_here = os.path.realpath(config.path) == here
                if not (precision_here or config_here):
                    continue
                base = config.path
                found = ctx.linked(config.value, base)
                if found is None:
                    continue
                node_span = precision.document.span_of(precision.node.start, precision.node.end)
                config_span = config.document.span_of(config.node.start, config.node.end)
                if precision_here:
                    related: tuple[Related, ...] = ()
                    if not config_here:
                        related = (Related(display_path(config.path), config_span, "the DeepSpeedStrategy config"),)
                    yield from _lightning_conflict(ctx, precision.value, node_span, "the trainer sets", found[0],
                                                   found[1], related)
                else:
                    where = f"{display_path(precision.path)}:{node_span.line}"
                    said = f"the trainer composed with this strategy ({where}) sets"
                    precision_at = Related(display_path(precision.path), node_span, "Lightning `precision`")
                    yield from _lightning_conflict(ctx, precision.value, config_span, said, found[0], found[1],
                                                   (precision_at,))


def _with_paths(node: Any, keys: tuple[str, ...], depth: int = 0) -> Iterator[tuple[Any, tuple[str, ...]]]:
    if depth > 32 or getattr(node, "kind", None) != "map":
        return
    yield node, keys
    for entry in node.entries:
        yield from _with_paths(entry.value, (*keys, entry.key), depth + 1)
