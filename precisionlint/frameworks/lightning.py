"""PyTorch Lightning (2.x, and 1.x spellings it still accepts): the Trainer's / Fabric's `precision`.

Evidence, strongest first:
- a Hydra `_target_` naming the Lightning Trainer in the mapping itself (certain);
- a `trainer:` mapping whose keys are all Lightning Trainer arguments, beside LightningCLI's `seed_everything`
  / `ckpt_path` or a `model:`/`data:` with `class_path:` (certain), or on its own (likely);
- a file in a Hydra config group folder named `trainer/` whose keys are all Trainer arguments (likely).
A mapping with a `precision` key and other keys is not a Trainer: `Trainer(**cfg)` would raise on the unknown
argument, so such a mapping is someone else's (Composer, SpeechBrain, a project's own trainer).

Vocabulary: lightning/fabric/connector.py `_PRECISION_INPUT` and `_convert_precision_to_unified_args`.
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.frameworks.base import CERTAIN, LIKELY, Call, Facts, Mode, Row, Section, Vocabulary, scalar

if TYPE_CHECKING:
    from typing import Any

NAME = "lightning"
TITLE = "Lightning"
# What a config, or a Python file, that it reads a setting from holds (one of them at least: engine.prefilter).
CONFIG_WORDS: tuple[bytes, ...] = (b"precision",)
PYTHON_WORDS: tuple[bytes, ...] = (b"precision",)
# The calls whose keyword arguments are its settings (frameworks.python_calls reads them, through calls_catalog.py).
PYTHON_CALLS: tuple[Call, ...] = (
    Call(("lightning", "pytorch_lightning", "lightning_fabric"), ("Trainer", "Fabric"), NAME,
         {"precision": "precision", "accelerator": "accelerator", "strategy": "strategy"}),
    # The 1.x Trainer's apex switches (Fabric never had them): removed from the Trainer in Lightning 2.0.
    Call(("lightning", "pytorch_lightning"), ("Trainer",), NAME,
         {"amp_backend": "amp_backend", "amp_level": "amp_level"}),
)

PRECISION = (
    "transformer-engine",
    "transformer-engine-float16",
    "16-true",
    "16-mixed",
    "bf16-true",
    "bf16-mixed",
    "32-true",
    "64-true",
)
LEGACY: dict[Any, str] = {16: "16-mixed", "16": "16-mixed", "bf16": "bf16-mixed", 32: "32-true", "32": "32-true",
                          64: "64-true", "64": "64-true"}
MODES = {
    "16-mixed": Mode("fp16", "mixed"),
    "bf16-mixed": Mode("bf16", "mixed"),
    "16-true": Mode("fp16", "true"),
    "bf16-true": Mode("bf16", "true"),
    "32-true": Mode("fp32", "true"),
    "64-true": Mode("fp64", "true"),
    "transformer-engine": Mode("fp8", "mixed"),
    "transformer-engine-float16": Mode("fp8", "mixed"),
}


def canonical(value: Any) -> str | None:
    """The Lightning 2.x spelling of a value Lightning accepts, or None if Lightning rejects it."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 16.0 == 16: Lightning's membership test accepts it
    if isinstance(value, str) and value in PRECISION:
        return value
    if isinstance(value, (int, str)):
        return LEGACY.get(value)
    return None


VOCABULARY = Vocabulary(
    framework=NAME, title=TITLE, key="precision", accepted=PRECISION, canonical=canonical, modes=MODES,
    rejection="raises ValueError when the Trainer is built", legacy=LEGACY,
    source="lightning/fabric/connector.py (_PRECISION_INPUT)",
)
VOCABULARIES = {"precision": VOCABULARY}

# Arguments of Lightning's ColossalAIStrategy that no other strategy takes: a `strategy:` mapping holding one of
# them is that strategy's arguments (ColossalAI's Stable Diffusion example builds `ColossalAIStrategy(**cfg)`).
COLOSSALAI_ARGS = frozenset({"use_chunk", "chunk_size", "enable_distributed_storage", "placement_policy",
                             "force_outputs_fp32", "gpu_margin_mem_ratio", "chunk_search_range",
                             "chunk_search_n_grids", "min_chunk_size"})


def strategy_summary(node: Any) -> str | None:
    """A `strategy:` written as a mapping of arguments, named when they are a strategy's own (else None)."""
    if node.kind == "map" and node.keys() & COLOSSALAI_ARGS:
        return "colossalai"
    return None


# Strategies whose precision plugin accepts float16 mixed precision only: lightning_colossalai's and Lightning
# 1.x's ColossalAIPrecisionPlugin raise ValueError for anything but 16 / "16-mixed".
FP16_ONLY_STRATEGIES = frozenset({"colossalai"})

ROWS = (Row(NAME, ("precision",), "precision"), Row(NAME, ("accelerator",), "accelerator"),
        Row(NAME, ("strategy",), "strategy", strategy_summary),
        # The apex switches of the 1.x Trainer, removed in 2.0 (framework-version-mismatch reads them).
        Row(NAME, ("amp_backend",), "amp_backend"), Row(NAME, ("amp_level",), "amp_level"))

# Lightning 2.x Trainer.__init__ arguments, and the 1.x ones still found in configs (a 1.x config is still a
# Lightning config: its precision spellings are the legacy ones).
TRAINER_ARGS = frozenset({
    "accelerator", "strategy", "devices", "num_nodes", "precision", "logger", "callbacks", "fast_dev_run",
    "max_epochs", "min_epochs", "max_steps", "min_steps", "max_time", "limit_train_batches", "limit_val_batches",
    "limit_test_batches", "limit_predict_batches", "overfit_batches", "val_check_interval",
    "check_val_every_n_epoch", "num_sanity_val_steps", "log_every_n_steps", "enable_checkpointing",
    "enable_progress_bar", "enable_model_summary", "accumulate_grad_batches", "gradient_clip_val",
    "gradient_clip_algorithm", "deterministic", "benchmark", "inference_mode", "use_distributed_sampler",
    "profiler", "detect_anomaly", "barebones", "plugins", "sync_batchnorm", "reload_dataloaders_every_n_epochs",
    "default_root_dir", "model_registry",
})
# The arguments only Lightning 1.x's Trainer takes: 2.0 removed them (`TypeError: unexpected keyword argument`).
# A config or call that passes one is read by Lightning 1.x, where the 1.x precision spellings are the only ones.
ONE_X_ARGS = frozenset({
    "gpus", "tpu_cores", "ipus", "num_processes", "auto_select_gpus", "amp_backend", "amp_level",
    "resume_from_checkpoint", "replace_sampler_ddp", "weights_summary", "progress_bar_refresh_rate",
    "flush_logs_every_n_steps", "terminate_on_nan", "auto_lr_find", "auto_scale_batch_size", "track_grad_norm",
    "move_metrics_to_cpu", "multiple_trainloader_mode", "stochastic_weight_avg", "checkpoint_callback",
    "prepare_data_per_node", "process_position", "log_gpu_memory", "weights_save_path", "distributed_backend",
    "reload_dataloaders_every_epoch", "truncated_bptt_steps", "enable_pl_optimizer", "val_percent_check",
    "train_percent_check", "accelerator_kwargs",
})
TRAINER_ARGS = TRAINER_ARGS | ONE_X_ARGS
# Hydra's own keys, allowed beside the arguments of the object it builds.
HYDRA_KEYS = frozenset({"_target_", "_partial_", "_convert_", "_recursive_", "_args_", "defaults"})
# Arguments that few other trainers spell the same way: one of them beside `precision` is the shape of a
# Lightning Trainer (a bare `precision` with `callbacks` or `logger` is not).
DISTINCTIVE = frozenset({
    "accelerator", "devices", "strategy", "num_nodes", "check_val_every_n_epoch", "accumulate_grad_batches",
    "gradient_clip_val", "gradient_clip_algorithm", "log_every_n_steps", "num_sanity_val_steps",
    "enable_checkpointing", "enable_progress_bar", "enable_model_summary", "limit_train_batches",
    "limit_val_batches", "val_check_interval", "gpus", "tpu_cores", "ipus", "default_root_dir", "fast_dev_run",
    "reload_dataloaders_every_n_epochs", "use_distributed_sampler", "replace_sampler_ddp", "max_epochs",
})
TARGETS = frozenset({
    "lightning.pytorch.Trainer", "lightning.pytorch.trainer.Trainer", "lightning.pytorch.trainer.trainer.Trainer",
    "lightning.Trainer", "pytorch_lightning.Trainer", "pytorch_lightning.trainer.Trainer",
    "pytorch_lightning.trainer.trainer.Trainer", "lightning.Fabric", "lightning.fabric.Fabric",
    "lightning_fabric.Fabric", "lightning.fabric.fabric.Fabric",
})
TRAINER_KEYS = ("trainer", "pl_trainer", "lightning_trainer")


def is_trainer_shape(node: Any) -> bool:
    """Every key is a Lightning Trainer argument (or Hydra's), and one of them is distinctive."""
    keys = node.keys() - HYDRA_KEYS
    return bool(keys) and keys <= TRAINER_ARGS and bool(keys & DISTINCTIVE)


def _only_trainer_args(node: Any) -> bool:
    keys = node.keys() - HYDRA_KEYS
    return bool(keys) and keys <= TRAINER_ARGS


def target(node: Any) -> str | None:
    value = scalar(node, "_target_")
    return value if isinstance(value, str) else None


def cli_evidence(root: Any) -> str | None:
    """LightningCLI's own top-level keys, or its `class_path:` subcommand style."""
    if root is None or root.kind != "map":
        return None
    for key in ("seed_everything", "ckpt_path"):
        if root.get(key) is not None:
            return f"LightningCLI's `{key}` beside it"
    for key in ("model", "data"):
        entry = root.get(key)
        if entry is not None and entry.value.kind == "map" and entry.value.get("class_path") is not None:
            return f"LightningCLI's `{key}.class_path` beside it"
    return None


def attribute(root: Any, facts: Facts) -> Iterator[Section]:
    if root is None or root.kind != "map":
        return
    # The file itself is the Trainer's arguments: a Hydra target, or a `trainer/` config group file.
    if root.get("precision") is not None:
        named = target(root)
        if named in TARGETS:
            yield Section(NAME, "lightning", root, (), ROWS, CERTAIN, f"`_target_: {named}`")
        elif named is None and is_trainer_shape(root) and "trainer" in facts.folder_names:
            yield Section(NAME, "lightning", root, (), ROWS, LIKELY,
                          "a file in a `trainer/` config folder whose keys are all Lightning Trainer arguments")
    stack: list[tuple[Any, tuple[str, ...]]] = [(root, ())]
    while stack:
        node, path = stack.pop()
        for child in node.child_maps():
            if len(path) > 6:
                continue
            child_path = (*path, child.key)
            section = child.value
            if section.get("precision") is not None:
                named = target(section)
                if named in TARGETS:
                    yield Section(NAME, ".".join(child_path), section, child_path, ROWS, CERTAIN,
                                  f"`_target_: {named}`")
                    continue
                beside_model = node is root and (root.get("model") is not None or root.get("data") is not None)
                shape = is_trainer_shape(section) or (beside_model and _only_trainer_args(section))
                if named is None and child.key in TRAINER_KEYS and shape:
                    parent_evidence = cli_evidence(node) if node is root else None
                    if parent_evidence or _nemo_style(node):
                        evidence = parent_evidence or "NeMo's `exp_manager` beside it"
                        yield Section(NAME, ".".join(child_path), section, child_path, ROWS, CERTAIN,
                                      f"`{child.key}:` with Lightning Trainer arguments only; {evidence}")
                    else:
                        beside = " beside `model:`/`data:`" if beside_model else ""
                        yield Section(NAME, ".".join(child_path), section, child_path, ROWS, LIKELY,
                                      f"`{child.key}:` with Lightning Trainer arguments only{beside}")
                    continue
            stack.append((section, child_path))


def _nemo_style(node: Any) -> bool:
    return node is not None and node.kind == "map" and node.get("exp_manager") is not None


def one_x_arguments(document: Any, setting: Any) -> list[str]:
    """The arguments beside a Lightning setting (in its config mapping, or its `Trainer(...)` call) that only
    Lightning 1.x accepts (ONE_X_ARGS): evidence that the reader is Lightning 1.x, whatever the pins say."""
    keys = _beside(document, setting)
    return sorted(keys & ONE_X_ARGS)


def _beside(document: Any, setting: Any) -> set[str]:
    tree = document.tree
    if document.format == "python":
        import ast  # here: a config's check parses no Python

        if not isinstance(tree, ast.Module):
            return set()
        from precisionlint.sources.python_index import walk_on_lines

        line, column = setting.key_span.line, setting.key_span.column
        # the call is in the statement written on the keyword's line: the others are not walked (the whole tree
        # was a fifth of a cold check of Lightning's repository)
        for node in walk_on_lines(tree, [line]):
            if isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or node.lineno):
                if any(k.arg == setting.key_path[-1] and k.lineno == line and k.col_offset + 1 == column
                       for k in node.keywords):
                    return {k.arg for k in node.keywords if k.arg is not None}
        return set()
    if document.format not in ("yaml", "json", "toml"):
        return set()
    from precisionlint.sources.tree import roots

    for root in roots(tree):  # the document (of a YAML stream) whose mapping holds the setting's value
        mapping: Any = root
        for key in setting.key_path[:-1]:
            entry = mapping.get(key) if getattr(mapping, "kind", None) == "map" else None
            mapping = entry.value if entry is not None else None
        if getattr(mapping, "kind", None) != "map":
            continue
        entry = mapping.get(setting.key_path[-1])
        if entry is not None and entry.value.start == setting.value_offsets[0]:
            return set(mapping.keys())
    return set()
