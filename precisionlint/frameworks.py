"""ONE table that maps each framework's spelling to canonical settings.

Checks never know the file format or the framework's key names: they ask for canonical settings
("precision", "tf32_matmul_precision", "fp16", "bf16", "mixed_precision", "loss_scale", ...) and get values
with spans. Adding a framework is adding rows here.

Sections of a config file are recognised by shape (see CONTAINERS); Python sources contribute the literal
keyword arguments of calls whose callee resolves, through the file's imports, to a known constructor
(see CALLS). Nothing is executed or imported.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import Any, NamedTuple

from precisionlint.model import UNRESOLVED, Document, Setting

# ---------------------------------------------------------------------------------------------------------------
# Vocabularies
# ---------------------------------------------------------------------------------------------------------------

# Lightning 2.x `precision` (lightning/fabric/connector.py _PRECISION_INPUT): the 2.x spellings and the
# legacy ones it still accepts. Anything else raises ValueError at Trainer construction.
LIGHTNING_PRECISION = (
    "transformer-engine",
    "transformer-engine-float16",
    "16-true",
    "16-mixed",
    "bf16-true",
    "bf16-mixed",
    "32-true",
    "64-true",
)
LIGHTNING_LEGACY = {16: "16-mixed", "16": "16-mixed", "bf16": "bf16-mixed", 32: "32-true", "32": "32-true",
                    64: "64-true", "64": "64-true"}
ACCELERATE_MIXED_PRECISION = ("no", "fp16", "bf16", "fp8")
TF32_MATMUL_PRECISION = ("highest", "high", "medium")
HF_HALF_PRECISION_BACKEND = ("auto", "apex", "cpu_amp")


class Mode(NamedTuple):
    """What a precision setting means, whatever the framework: the compute dtype and whether the weights
    stay in float32 ("mixed", with autocast or a master copy) or are themselves half precision ("true")."""

    dtype: str  # "fp16" | "bf16" | "fp32" | "fp64" | "fp8"
    kind: str  # "mixed" | "true"


_LIGHTNING_MODES = {
    "16-mixed": Mode("fp16", "mixed"),
    "bf16-mixed": Mode("bf16", "mixed"),
    "16-true": Mode("fp16", "true"),
    "bf16-true": Mode("bf16", "true"),
    "32-true": Mode("fp32", "true"),
    "64-true": Mode("fp64", "true"),
    "transformer-engine": Mode("fp8", "mixed"),
    "transformer-engine-float16": Mode("fp8", "mixed"),
}
_ACCELERATE_MODES = {"no": Mode("fp32", "true"), "fp16": Mode("fp16", "mixed"), "bf16": Mode("bf16", "mixed"),
                     "fp8": Mode("fp8", "mixed")}


def lightning_canonical(value: Any) -> str | None:
    """The Lightning 2.x spelling of a value Lightning accepts, or None if Lightning rejects it."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value in LIGHTNING_PRECISION:
        return value
    if isinstance(value, (int, str)):
        return LIGHTNING_LEGACY.get(value)
    return None


def precision_mode(setting: Setting) -> Mode | None:
    """The meaning of a setting that selects a precision, or None (not such a setting, unresolved, 'auto',
    or a value the framework rejects)."""
    value = setting.value
    if not setting.resolved:
        return None
    if setting.name == "precision":
        canonical = lightning_canonical(value)
        return _LIGHTNING_MODES.get(canonical) if canonical else None
    if setting.name == "mixed_precision":
        return _ACCELERATE_MODES.get(value) if isinstance(value, str) else None
    if setting.name in ("fp16", "bf16") and value is True:
        return Mode(setting.name, "mixed")
    return None


# ---------------------------------------------------------------------------------------------------------------
# Config files: which sections hold which settings
# ---------------------------------------------------------------------------------------------------------------

# (framework, key path inside the section) -> canonical name
class Row(NamedTuple):
    framework: str
    path: tuple[str, ...]
    name: str


TRAINER_CONFIG_ROWS = (  # the seed's TrainerFactoryConfig `[trainer_config]` table
    Row("lightning", ("precision",), "precision"),
    Row("lightning", ("tf32_matmul_precision",), "tf32_matmul_precision"),
)
LIGHTNING_TRAINER_ROWS = (Row("lightning", ("precision",), "precision"),)
HF_ROWS = tuple(
    Row("hf", (key,), key)
    for key in ("fp16", "bf16", "tf32", "fp16_full_eval", "bf16_full_eval", "half_precision_backend",
                "fp16_opt_level", "deepspeed")
)
ACCELERATE_ROWS = (Row("accelerate", ("mixed_precision",), "mixed_precision"),)
DEEPSPEED_ROWS = (
    Row("deepspeed", ("fp16", "enabled"), "fp16"),
    Row("deepspeed", ("fp16", "loss_scale"), "loss_scale"),
    Row("deepspeed", ("fp16", "initial_scale_power"), "initial_scale_power"),
    Row("deepspeed", ("fp16", "loss_scale_window"), "loss_scale_window"),
    Row("deepspeed", ("fp16", "hysteresis"), "hysteresis"),
    Row("deepspeed", ("fp16", "min_loss_scale"), "min_loss_scale"),
    Row("deepspeed", ("bf16", "enabled"), "bf16"),
    Row("deepspeed", ("bfloat16", "enabled"), "bf16"),  # the old spelling DeepSpeed still accepts
    Row("deepspeed", ("amp", "enabled"), "amp"),
)

# Keys that, beside `precision`, show that a mapping is a Lightning Trainer's arguments.
LIGHTNING_TRAINER_KEYS = frozenset({
    "accelerator", "devices", "strategy", "num_nodes", "max_epochs", "min_epochs", "max_steps", "min_steps",
    "accumulate_grad_batches", "gradient_clip_val", "gradient_clip_algorithm", "check_val_every_n_epoch",
    "val_check_interval", "log_every_n_steps", "enable_checkpointing", "callbacks", "logger", "deterministic",
    "benchmark", "fast_dev_run", "limit_train_batches", "limit_val_batches", "num_sanity_val_steps",
    "default_root_dir", "enable_progress_bar", "sync_batchnorm", "plugins", "profiler", "detect_anomaly",
})
HF_MARKERS = frozenset({"output_dir", "per_device_train_batch_size", "learning_rate", "num_train_epochs",
                        "gradient_accumulation_steps", "evaluation_strategy", "eval_strategy", "save_strategy",
                        "logging_steps", "warmup_ratio", "lr_scheduler_type", "optim", "report_to"})
DEEPSPEED_MARKERS = frozenset({"zero_optimization", "train_batch_size", "train_micro_batch_size_per_gpu",
                               "gradient_accumulation_steps", "gradient_clipping", "optimizer", "scheduler",
                               "fp16", "bf16", "bfloat16", "amp", "zero_allow_untested_optimizer"})
ACCELERATE_MARKERS = frozenset({"compute_environment", "distributed_type", "num_processes", "machine_rank",
                                "num_machines", "deepspeed_config", "fsdp_config", "use_cpu", "dynamo_config",
                                "downcast_bf16", "main_training_function", "gpu_ids"})


def _is_deepspeed(node: Any) -> bool:
    """A DeepSpeed config: fp16/bf16/amp given as blocks (objects), not as booleans."""
    for key in ("fp16", "bf16", "bfloat16", "amp"):
        entry = node.get(key)
        if entry is not None and entry.value.kind == "map":
            return True
    return False


def _is_hf(node: Any) -> bool:
    flags = [node.get(k) for k in ("fp16", "bf16", "tf32", "fp16_full_eval", "bf16_full_eval")]
    boolish = [e for e in flags if e is not None and e.value.kind == "scalar"
               and (isinstance(e.value.value, bool) or e.value.value == "auto")]
    return bool(boolish) or (node.get("half_precision_backend") is not None and bool(node.keys() & HF_MARKERS))


def _is_accelerate(node: Any) -> bool:
    entry = node.get("mixed_precision")
    return entry is not None and entry.value.kind == "scalar" and (
        bool(node.keys() & ACCELERATE_MARKERS) or entry.value.value in ACCELERATE_MIXED_PRECISION
    )


def _looks_like_lightning_trainer(node: Any) -> bool:
    entry = node.get("precision")
    if entry is None or entry.value.kind != "scalar":
        return False
    value = entry.value.value
    if isinstance(value, (bool, float)) or value is None:
        return False
    return lightning_canonical(value) is not None or bool(node.keys() & LIGHTNING_TRAINER_KEYS)


def _sections(root: Any) -> Iterator[tuple[str, Any, tuple[str, ...], tuple[Row, ...]]]:
    """(scope, mapping node, key path of the mapping, rows) for each recognised section of a config."""
    if root is None or root.kind != "map":
        return
    entry = root.get("trainer_config")
    if entry is not None and entry.value.kind == "map":
        yield "trainer_config", entry.value, ("trainer_config",), TRAINER_CONFIG_ROWS
    # Lightning Trainer arguments under a `trainer` key, at any depth (LightningCLI, Hydra), or at top level.
    stack: list[tuple[Any, tuple[str, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        for child in node.entries:
            if child.value.kind != "map" or len(path) > 6:
                continue
            child_path = (*path, child.key)
            if child.key in ("trainer", "pl_trainer", "lightning_trainer") and child.value.get("precision"):
                yield ".".join(child_path), child.value, child_path, LIGHTNING_TRAINER_ROWS
            elif child.key != "trainer_config":
                stack.append((child.value, child_path))
    if root.get("trainer_config") is None and _looks_like_lightning_trainer(root):
        yield "lightning", root, (), LIGHTNING_TRAINER_ROWS
    if _is_deepspeed(root):
        yield "deepspeed", root, (), DEEPSPEED_ROWS
    elif _is_hf(root):
        yield "hf", root, (), HF_ROWS
        ds = root.get("deepspeed")
        if ds is not None and ds.value.kind == "map":
            yield "hf.deepspeed", ds.value, ("deepspeed",), DEEPSPEED_ROWS
    if _is_accelerate(root):
        yield "accelerate", root, (), ACCELERATE_ROWS
    # DeepSpeed settings embedded in an Accelerate config (deepspeed_config: {...}) or under a `deepspeed` key.
    for key in ("deepspeed_config", "deepspeed"):
        entry = root.get(key)
        if entry is not None and entry.value.kind == "map" and _is_deepspeed(entry.value) and not _is_hf(root):
            yield f"{key}", entry.value, (key,), DEEPSPEED_ROWS


def config_settings(document: Document, root: Any) -> list[Setting]:
    """Canonical settings of a config tree (precisionlint.sources.tree.Node) loaded from TOML, YAML or JSON."""
    settings: list[Setting] = []
    for scope, section, section_path, rows in _sections(root):
        for row in rows:
            node = section
            entry = None
            for key in row.path:
                entry = node.get(key) if node.kind == "map" else None
                if entry is None:
                    break
                node = entry.value
            if entry is None:
                continue
            value_node = entry.value
            value: Any
            if value_node.kind != "scalar":
                if row.name != "deepspeed":
                    continue
                value = "<inline>"
            else:
                value = value_node.value
            settings.append(
                Setting(
                    name=row.name,
                    value=value,
                    framework=row.framework,
                    scope=scope,
                    key_path=(*section_path, *row.path),
                    span=document.span_of(value_node.start, max(value_node.end, value_node.start + 1)),
                    key_span=document.span_of(entry.key_start, max(entry.key_end, entry.key_start + 1)),
                    value_offsets=(value_node.start, value_node.end),
                    entry=entry.removal,
                    format=document.format,
                )
            )
    return settings


# ---------------------------------------------------------------------------------------------------------------
# Python sources: literal keyword arguments of known constructors
# ---------------------------------------------------------------------------------------------------------------

class Call(NamedTuple):
    modules: tuple[str, ...]  # the callee must resolve into one of these packages
    names: tuple[str, ...]  # ...and be named one of these
    framework: str
    keywords: dict[str, str]  # keyword argument -> canonical name
    positional: str | None = None  # canonical name of the first positional argument, if it has one


CALLS = (
    Call(("lightning", "pytorch_lightning", "lightning_fabric"), ("Trainer", "Fabric"), "lightning",
         {"precision": "precision"}),
    Call(("transformers", "trl"), ("TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig",
                                   "GRPOConfig", "ORPOConfig", "KTOConfig", "RewardConfig", "PPOConfig"), "hf",
         {key: key for key in ("fp16", "bf16", "tf32", "fp16_full_eval", "bf16_full_eval",
                               "half_precision_backend", "fp16_opt_level")}),
    Call(("accelerate",), ("Accelerator",), "accelerate", {"mixed_precision": "mixed_precision"}),
    Call(("torch",), ("set_float32_matmul_precision",), "torch", {"precision": "tf32_matmul_precision"},
         positional="tf32_matmul_precision"),
)


def import_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name -> dotted origin for the module's imports (top level and inside functions)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


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


def _module_constants(tree: ast.Module) -> dict[str, Any]:
    """Module-level names assigned exactly once to a literal (PRECISION = "16-mixed")."""
    values: dict[str, Any] = {}
    counts: dict[str, int] = {}
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                counts[target.id] = counts.get(target.id, 0) + 1
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            if counts.get(name) == 1:
                try:
                    values[name] = ast.literal_eval(node.value)
                except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                    pass
    return values


def literal_value(node: ast.expr, constants: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return UNRESOLVED


def python_settings(document: Document) -> list[Setting]:
    tree = document.tree
    aliases = import_aliases(tree)
    packages = {module for call in CALLS for module in call.modules}
    if not any(origin.split(".", 1)[0] in packages for origin in aliases.values()):
        return []  # no callee can resolve into a framework: nothing to walk for
    from precisionlint.sources.positions import node_offsets

    constants = _module_constants(tree)
    settings: list[Setting] = []
    statement_of: dict[int, ast.stmt] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Expr):
            statement_of[id(node.value)] = node
        if not isinstance(node, ast.Call):
            continue
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
                statement = statement_of.get(id(node))
                if call.framework == "torch" and statement is not None:
                    removal = _statement_removal(document, statement, tree)
                settings.append(
                    Setting(
                        name=call.keywords[keyword],
                        value=literal_value(value_node, constants),
                        framework=call.framework,
                        scope=scope,
                        key_path=(last, keyword),
                        span=document.span_of(start, end),
                        key_span=document.span_of(k_start, k_end),
                        value_offsets=(start, end),
                        entry=removal,
                        format="python",
                    )
                )
    return settings


def _statement_removal(document: Document, statement: ast.stmt, tree: ast.Module) -> tuple[int, int] | None:
    """Whole lines of a statement, when removing it leaves valid code (it is not alone in its block)."""
    from precisionlint.sources.positions import node_offsets
    from precisionlint.sources.tree import whole_line_range

    for parent in ast.walk(tree):
        for field_name in ("body", "orelse", "finalbody"):
            block = getattr(parent, field_name, None)
            if isinstance(block, list) and statement in block:
                if len(block) == 1 and not isinstance(parent, ast.Module):
                    return None
                start, end = node_offsets(document, statement)
                return whole_line_range(document.text, start, end)
    return None
