"""## What it does
Finds float16 training of a checkpoint published in bfloat16. The checkpoint is one a script loads with
`from_pretrained` (a literal, or a name bound to one), axolotl's `base_model` or LLaMA-Factory's
`model_name_or_path`, and it is known to be bfloat16 when

- it is a local folder whose `config.json` says `"torch_dtype": "bfloat16"` (or Transformers 5's `"dtype"`,
  or the same in its `text_config`), found relative to the file that names it, then to the project's folders;
- or it is a Hugging Face hub id of a family whose checkpoints are published in bfloat16: Llama 3.x
  (`meta-llama/Llama-3*`, `meta-llama/Meta-Llama-3*`), Qwen2 / Qwen2.5 / Qwen3 (`Qwen/Qwen2*`, `Qwen/Qwen3*`),
  Gemma 3 (`google/gemma-3*`) and Mistral 7B (`mistralai/Mistral-7B-*`). Fine-tunes published by others are
  not assumed: their dtype is whatever they saved.

Float16 training is `fp16=True` in `TrainingArguments` (or TRL's `SFTConfig`, `GRPOConfig`, ...) in the same
script, `fp16: true` in the axolotl or LLaMA-Factory config, a `from_pretrained(..., torch_dtype=torch.float16)`
or a `.half()` of the loaded model whose parameters a `torch.optim` optimizer receives, and float16 autocast
whose loss is backpropagated in a script that loads such a checkpoint. Inference (a script that loads in
float16 and never trains) is not reported: float16 inference of these models is common and mostly fine.
A quantized base (QLoRA: `quantization_config`, `load_in_4bit`, axolotl's `load_in_4bit`, LLaMA-Factory's
`quantization_bit`) makes the finding information: only the float32 adapters train, and float16 compute is
often the only choice on the GPUs such setups target (a T4), but the activations still run in float16.
Where a `...Trainer(model=...)` trains the model, the load that counts is the last one assigned to that name
before the Trainer (a notebook that reloads the base in float32 for inference after training trains the
quantized load); tokenizer, processor and config loads carry no weights and are not loads of the model.

## Why is this bad?
A model trained in bfloat16 has never had to keep its activations and gradients below float16's largest
value, 65504: bfloat16 has float32's exponent range. Its residual stream, attention logits and (in the
backward pass) gradients routinely exceed 65504 somewhere, and in float16 those become inf, then NaN; loss
scaling does not help with values that are too large. The reports are consistent: Qwen2 fine-tuned in fp16
on a V100 gives NaN, and Qwen's maintainers answer that "the original model was trained using bfloat16,
changing to float16 may cause numerical instabilities, which is expected" (QwenLM/Qwen3#868); Unsloth routes a
float16 request for Gemma 3 to bfloat16 weights with float32 compute, because Gemma 3's activations reach about
800k, far past 65504 (unslothai/unsloth#4014), and did the same for Gemma 4, Qwen3-MoE and GLM-4 MoE after
float16 runs gave NaN gradients (unslothai/unsloth-zoo#866).

On a GPU with native bfloat16 (compute capability 8.0 or newer) train in bfloat16. On one without (V100,
T4), float32 is the safe choice; float16 may work for a given model and sequence length, but only a run
shows it. `precisionlint advise --gpu T4 --model NAME` (or the model your `--config` names) recommends the same.

## Example
```python
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B")
args = TrainingArguments(output_dir="out", fp16=True)
```

## Use instead
```python
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B")
args = TrainingArguments(output_dir="out", bf16=True)
```

## Fix safety
No fix: which precision replaces float16 depends on the GPU (bf16 where it is native, float32 before Ampere).

## References
- Llama 3.1 config (`torch_dtype: bfloat16`): https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json
- Qwen2.5 config (`torch_dtype: bfloat16`): https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json
- Gemma 3 config (`torch_dtype: bfloat16`): https://huggingface.co/google/gemma-3-4b-it/blob/main/config.json
- Mistral 7B config (`torch_dtype: bfloat16`): https://huggingface.co/mistralai/Mistral-7B-v0.1/blob/main/config.json
- Qwen maintainers on fp16 NaN: https://github.com/QwenLM/Qwen3/issues/868
- Unsloth's float16 fallbacks: https://github.com/unslothai/unsloth/pull/4014,
  https://github.com/unslothai/unsloth-zoo/pull/866
- fp16's largest finite value, 65504 (`torch.finfo(torch.float16).max`): https://docs.pytorch.org/docs/stable/type_info.html
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import is_test_code
from precisionlint.checks._checkpoints import Checkpoint, bf16_checkpoint
from precisionlint.core.model import Finding, Related, Severity, Span

CODE = "PL405"
NAME = "fp16-on-bf16-checkpoint"
SEVERITY = Severity.WARNING
SUMMARY = "float16 training of a checkpoint published in bfloat16: activations overflow 65504 and turn to NaN."
TARGET = "settings"
READS = "hf, axolotl, torch"
CONFIG_WORDS: tuple[bytes, ...] = (b"float16",)
PYTHON_WORDS: tuple[bytes, ...] = (b"half", b"float16")
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets

# The config keys that name the checkpoint trained (axolotl, LLaMA-Factory / TrainingArguments-style YAML).
_QUANTIZED = ("quantization_config", "load_in_4bit", "load_in_8bit")
_NOT_MODELS = ("Tokenizer", "TokenizerFast", "Processor", "FeatureExtractor", "Config")
_MODEL_KEYS = {"axolotl": ("base_model",), "hf": ("model_name_or_path", "base_model")}


def check(ctx: CheckContext) -> Iterator[Finding]:
    if ctx.document.format == "python":
        yield from _script(ctx)
    elif ctx.document.format in ("yaml", "json", "toml"):
        yield from _config(ctx)


def _message(what: str, checkpoint: Checkpoint) -> str:
    return (f"float16 training ({what}) of `{checkpoint.name}`, and {checkpoint.evidence}: activations and gradients "
            "that fit bfloat16's range overflow float16's largest value (65504) and turn to NaN within steps; "
            "train in bf16 (float32 on a GPU without bf16)")


def _severity(ctx: CheckContext) -> Severity | None:
    return Severity.INFO if is_test_code(ctx.document.path) else None


def _related(checkpoint: Checkpoint) -> tuple[Related, ...]:
    if checkpoint.config is None:
        return ()
    from precisionlint.project import display_path

    return (Related(display_path(checkpoint.config), Span.point(1, 1), "the checkpoint's config"),)


# -- configs ----------------------------------------------------------------------------------------------------

def _config(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.project import disk_path
    from precisionlint.sources.tree import roots

    document = ctx.document
    for setting in ctx.settings:
        if setting.name != "fp16" or setting.value is not True or setting.framework not in _MODEL_KEYS:
            continue
        if len(setting.key_path) != 1:
            continue
        offset = setting.value_offsets[0]
        # the document (of a YAML stream) that holds the setting: the last one starting before it (a YAML
        # root's end offset is not recorded)
        maps = [r for r in roots(document.tree) if getattr(r, "kind", None) == "map" and r.start <= offset]
        if not maps:
            continue
        root = maps[-1]
        for key in _MODEL_KEYS[setting.framework]:
            entry = root.get(key)
            if entry is None or entry.value.kind != "scalar":
                continue
            checkpoint = bf16_checkpoint(ctx.project, disk_path(document), entry.value.value)
            if checkpoint is not None:
                quantized = any(_truthy(root.get(k)) for k in ("load_in_4bit", "load_in_8bit", "quantization_bit"))
                yield ctx.report(setting.span, _message("`fp16: true`", checkpoint),
                                 severity=Severity.INFO if quantized else _severity(ctx), related=_related(checkpoint))
                break


def _truthy(entry: object) -> bool:
    value = getattr(getattr(entry, "value", None), "value", None)
    return value is not None and value is not False and value not in (0, "false", "False", "null")


# -- scripts ----------------------------------------------------------------------------------------------------

class _Load:
    """`x = Auto....from_pretrained(name, ...)` of a bfloat16 checkpoint."""

    def __init__(self, key: str | None, checkpoint: Checkpoint, dtype: str | None, dtype_span: Span | None,
                 quantized: bool, line: int) -> None:
        self.key = key  # "scope:name" of the variable it is assigned to
        self.checkpoint = checkpoint
        self.dtype = dtype  # the dtype it is loaded in, when written
        self.dtype_span = dtype_span
        self.quantized = quantized  # 4/8-bit weights (QLoRA): float16 compute is often the only choice on a T4
        self.line = line


def _script(ctx: CheckContext) -> Iterator[Finding]:
    text = ctx.document.text
    if "from_pretrained" not in text or ("fp16" not in text and "float16" not in text and "half" not in text
                                         and "autocast" not in text):
        return
    loads = _loads(ctx)
    if not loads:
        return
    reported: set[Span] = set()
    severity = _severity(ctx)
    if all(load.quantized for load in _trained_loads(ctx, loads)):
        # QLoRA: the frozen base is 4- or 8-bit and only the float32 adapters train; float16 compute is what a
        # GPU without bf16 (a Colab T4) offers, so the risk is stated as information
        severity = Severity.INFO
    for setting in ctx.settings:
        if setting.framework == "hf" and setting.name == "fp16" and setting.value is True:
            load = loads[0]
            reported.add(setting.span)
            yield ctx.report(setting.span, _message("`fp16=True`", load.checkpoint), severity=severity,
                             related=_related(load.checkpoint))
    model = ctx.script
    trained = _trained_keys(ctx)
    for load in loads:
        if load.dtype != "float16" or load.dtype_span is None or load.dtype_span in reported or load.key is None:
            continue
        # the loaded model itself is trained (a frozen float16 reference or teacher beside it is fine)
        if any(_same_module(load.key, key) for key in trained):
            reported.add(load.dtype_span)
            yield ctx.report(load.dtype_span, _message("loaded in float16 and trained", load.checkpoint),
                             severity=severity, related=_related(load.checkpoint))
    for optimizer in model.optimizers:
        if optimizer.wrapped:
            continue
        for cast in model.casts_of(optimizer, ("float16",)):
            cast_load = next((ld for ld in loads if ld.key is not None and _same_module(ld.key, cast.key)), None)
            if cast_load is not None and cast.span not in reported:
                reported.add(cast.span)
                what = f"`{cast.text}` cast to float16 and trained by `{optimizer.cls}`"
                yield ctx.report(cast.span, _message(what, cast_load.checkpoint), severity=severity,
                                 related=_related(cast_load.checkpoint))
    from precisionlint.checks._gpu import autocast_uses

    for use in autocast_uses(ctx):
        if use.dtype == "fp16" and use.trains == "loss" and use.span not in reported:
            reported.add(use.span)
            yield ctx.report(use.span, _message("float16 autocast", loads[0].checkpoint), severity=severity,
                             related=_related(loads[0].checkpoint))


def _trained_loads(ctx: CheckContext, loads: list[_Load]) -> list[_Load]:
    """The loads a `...Trainer(model=name)` trains: for each such call, the last load assigned to that name before
    it (a notebook that reloads the base in float32 after training, for inference, trains the load before). With
    no such call, every load."""
    from precisionlint.script.scopes import scoped_nodes

    model = ctx.script
    chosen: list[_Load] = []
    for node, scope in scoped_nodes(ctx.document.tree, model.table):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        argument = next((kw.value for kw in node.keywords if kw.arg == "model"), None)
        if not name.endswith("Trainer") or not isinstance(argument, (ast.Name, ast.Attribute)):
            continue
        key = f"{scope.qualname}:{model.positions.segment(argument)}"
        before = [ld for ld in loads if ld.key == key and ld.line < node.lineno]
        if before:
            chosen.append(max(before, key=lambda ld: ld.line))
    return chosen or loads


def _same_module(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _trained_keys(ctx: CheckContext) -> set[str]:
    """The modules a script trains: those whose parameters a torch.optim optimizer receives, and the `model` of
    a `...Trainer(model=...)` call (Transformers, TRL), as "scope:name" keys."""
    from precisionlint.script.scopes import scoped_nodes

    model = ctx.script
    keys = {key for optimizer in model.optimizers for key in optimizer.param_keys}
    for node, scope in scoped_nodes(ctx.document.tree, model.table):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if not name.endswith("Trainer"):
            continue
        argument = next((kw.value for kw in node.keywords if kw.arg == "model"), node.args[0] if node.args else None)
        if isinstance(argument, (ast.Name, ast.Attribute)):
            keys.add(f"{scope.qualname}:{model.positions.segment(argument)}")
    return keys


def _loads(ctx: CheckContext) -> list[_Load]:
    from precisionlint.project import disk_path
    from precisionlint.script.scopes import scoped_nodes

    model = ctx.script
    base = disk_path(ctx.document)
    found: list[_Load] = []
    for node, scope in scoped_nodes(ctx.document.tree, model.table):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "from_pretrained"):
            continue
        owner = node.func.value
        owner_name = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else ""
        if owner_name.endswith(_NOT_MODELS):
            continue  # a tokenizer, processor or config: no weights
        keywords = {kw.arg: kw.value for kw in node.keywords if kw.arg}
        named = node.args[0] if node.args else keywords.get("pretrained_model_name_or_path")
        if named is None:
            continue
        checkpoint = bf16_checkpoint(ctx.project, base, model.resolver.value(named, scope))
        if checkpoint is None:
            continue
        dtype_expr = keywords.get("dtype", keywords.get("torch_dtype"))
        dtype = model.resolver.dtype(dtype_expr, scope) if dtype_expr is not None else None
        if dtype is None and isinstance(dtype_expr, ast.Constant) and dtype_expr.value in ("float16", "half"):
            dtype = "float16"
        found.append(_Load(_assigned_key(ctx, node, scope), checkpoint, dtype,
                           model.positions.span(dtype_expr) if dtype_expr is not None else None,
                           any(k in keywords for k in _QUANTIZED), node.lineno))
    return found


def _assigned_key(ctx: CheckContext, call: ast.Call, scope: object) -> str | None:
    """The key (as the script model writes it, "scope:name") of the variable the load is assigned to."""
    model = ctx.script
    for node in ast.walk(scope.node):  # type: ignore[attr-defined]
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            value = node.value
            while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value is not call:
                value = value.func.value
            if value is call and isinstance(node.targets[0], (ast.Name, ast.Attribute)):
                return f"{scope.qualname}:{model.positions.segment(node.targets[0])}"  # type: ignore[attr-defined]
    return None
