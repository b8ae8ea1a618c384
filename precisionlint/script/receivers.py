"""What kind of object a method is called on, when the type is not written anywhere.

`x.step()` is an optimizer step, a scheduler step or an environment step; `x.backward(loss)` is a tensor's or
an Accelerator's; `x.clip_grad_norm_()` is an FSDP module's (raw gradients) or an Accelerator's (unscales
first). Construction in the file decides when it is visible; otherwise the name does, conservatively: an
unknown receiver is never an optimizer or a model, so the rules that depend on it stay silent.
"""

from __future__ import annotations

import ast
import re

from precisionlint.core.patterns import lazy_pattern
from precisionlint.script.names import ImportTable, dotted
from precisionlint.script.scopes import Scope
from precisionlint.script.values import Resolver

# A receiver whose .backward(loss) is a framework's: it scales the loss itself when it runs fp16.
_FRAMEWORK_RECEIVER = lazy_pattern(
    globals(), "_FRAMEWORK_RECEIVER", r"accelerator|fabric|engine|deepspeed", re.IGNORECASE)
_FRAMEWORK_PACKAGES = ("accelerate.", "lightning.", "pytorch_lightning.", "deepspeed.")
# `optimizer`, `opt`, `optim`, `opt_g`, `self.optimizer_d`, `optimizers[0]`'s name...; never a scheduler.
_OPTIMIZER_NAME = lazy_pattern(
    globals(), "_OPTIMIZER_NAME", r"(?:^|_)(?:opt|optim|optimi[sz]er)s?\d*(?:_|$)|optimi[sz]er", re.IGNORECASE)
_NOT_OPTIMIZER_NAME = lazy_pattern(globals(), "_NOT_OPTIMIZER_NAME", r"sched|scaler|warmup|lr", re.IGNORECASE)
# A receiver whose .clip_grad_norm_ clips raw gradients (FSDP), as opposed to accelerator/fabric, which unscale.
_MODEL_NAME = lazy_pattern(globals(), "_MODEL_NAME", r"model|module|net|fsdp", re.IGNORECASE)
_NOT_MODEL_NAME = lazy_pattern(
    globals(), "_NOT_MODEL_NAME", r"accelerator|fabric|trainer|engine|optim|strategy", re.IGNORECASE)
_FSDP = frozenset(
    {
        "torch.distributed.fsdp.FullyShardedDataParallel",
        "torch.distributed.fsdp.fully_sharded_data_parallel.FullyShardedDataParallel",
    }
)

# Frameworks that own backward and loss scaling when a file uses them (module prefixes -> label).
_FRAMEWORKS = {
    "lightning": ("lightning", "pytorch_lightning"),
    "accelerate": ("accelerate",),
    "hf-trainer": ("transformers.Trainer", "transformers.Seq2SeqTrainer", "transformers.trainer", "trl"),
    "deepspeed": ("deepspeed",),
    "apex": ("apex.amp", "apex.fp16_utils"),
    "mmengine": ("mmengine",),
    "detectron2": ("detectron2.engine",),
    "fairseq": ("fairseq",),
    "colossalai": ("colossalai",),
    "composer": ("composer",),
}


def frameworks(imports: ImportTable) -> frozenset[str]:
    return frozenset(label for label, prefixes in _FRAMEWORKS.items() if imports.imports_any(prefixes))


def _last_name(receiver: ast.expr) -> str | None:
    text = dotted(receiver)
    return text.rsplit(".", 1)[-1] if text is not None else None


def _built_by(resolver: Resolver, receiver: ast.expr, scope: Scope, prefixes: tuple[str, ...]) -> bool:
    for value, owner in resolver.bound_values(receiver, scope):
        if isinstance(value, ast.Call):
            callee = resolver.qualname(value.func, owner) or ""
            if callee.startswith(prefixes):
                return True
    return False


def _names_framework(name: str) -> bool:
    """_FRAMEWORK_RECEIVER.search(name), without compiling it at every start where the name is ASCII (where the
    pattern's case-insensitive words are found in the lower-cased name)."""
    if name.isascii():
        lowered = name.lower()
        return any(word in lowered for word in ("accelerator", "fabric", "engine", "deepspeed"))
    return _FRAMEWORK_RECEIVER.search(name) is not None


def is_framework_receiver(resolver: Resolver, receiver: ast.expr, scope: Scope, call: ast.Call) -> bool:
    """`accelerator.backward(loss)`, `fabric.backward(loss)`, `model_engine.backward(loss)`."""
    last = _last_name(receiver)
    if last is not None and _names_framework(last):
        return True
    if _built_by(resolver, receiver, scope, _FRAMEWORK_PACKAGES):
        return True
    # DeepSpeed engines are often still called `model`: `model.backward(loss)` takes the loss as argument
    return "deepspeed" in resolver.table.imports.modules and bool(call.args)


def is_optimizer(receiver: ast.expr, key: str | None, known: set[str]) -> bool:
    """`known`: keys built from torch.optim or passed to scaler.step / scaler.unscale_ in this file."""
    if key is not None and key in known:
        return True
    last = _last_name(receiver)
    if last is None or _NOT_OPTIMIZER_NAME.search(last):
        return False
    return bool(_OPTIMIZER_NAME.search(last))


def is_model(resolver: Resolver, receiver: ast.expr, scope: Scope) -> bool:
    """A module whose `clip_grad_norm_` works on raw (possibly still scaled) gradients: FSDP."""
    for value, owner in resolver.bound_values(receiver, scope):
        if isinstance(value, ast.Call) and resolver.qualname(value.func, owner) in _FSDP:
            return True
    text = dotted(receiver)
    last = _last_name(receiver)
    if text is None or last is None:
        return False
    return bool(_MODEL_NAME.search(last)) and not _NOT_MODEL_NAME.search(text)
