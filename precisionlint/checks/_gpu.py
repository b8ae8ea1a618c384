"""Shared helpers of the hardware rules (PL301-PL305): the target GPUs, the precision a document selects
(settings and, in scripts, autocast regions) and the wording that names the GPUs concerned.

A fleet (several target GPUs) must be satisfied on every GPU: each rule reports once per offending setting and
names the GPUs on which it is wrong, rather than repeating the finding per GPU at the same place.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from precisionlint.checks import CheckContext
from precisionlint.core.model import Setting, Span
from precisionlint.core.records import FrozenRecord
from precisionlint.frameworks import Mode, precision_mode
from precisionlint.hardware.gpu import Gpu
from precisionlint.script.grad_mode import without_grad

if TYPE_CHECKING:
    from precisionlint.script.model import AutocastRegion, ScriptModel
    from precisionlint.script.names import Deprecated

# torch dtype spellings (as the script model reports them) -> the short names frameworks.Mode uses.
_DTYPES = {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32", "float": "fp32"}


def targets(ctx: CheckContext) -> tuple[Gpu, ...]:
    """The run's target GPUs, each model once (eight A100s are one A100 for a message)."""
    seen: dict[str, Gpu] = {}
    for gpu in ctx.gpus:
        if gpu is not None:
            seen.setdefault(gpu.name, gpu)
    return tuple(seen.values())


def names(gpus: Iterable[Gpu]) -> str:
    """'V100 SXM2 (cc 7.0) and T4 (cc 7.5)'."""
    parts = [f"{g.name} ({'cc ' if g.compute_capability else ''}{g.cc_text})" for g in gpus]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def precision_settings(ctx: CheckContext, reached: bool = False) -> Iterator[tuple[Setting, Mode]]:
    """Every setting that selects a training precision, with its meaning (unresolved values are skipped), except
    those beside a Lightning `accelerator` of another kind ("tpu", "hpu", "mps": precisionlint.checks._accelerator),
    which never run on the target GPUs. With `reached`, also the values that reach a framework's call through the
    script (CheckContext.reached_settings) and run unless the launch overrides them (not a conditional's arm,
    which often picks by hardware)."""
    from precisionlint.checks._accelerator import elsewhere_scopes

    elsewhere = elsewhere_scopes(ctx)
    if reached:
        from precisionlint.values.settings import chosen_by_the_program_alone
    for setting in ctx.judged_settings if reached else ctx.settings:
        if setting.scope in elsewhere or (setting.origin is not None and not chosen_by_the_program_alone(setting)):
            continue
        if setting.origin is not None and _launched_elsewhere(setting.origin):
            continue  # passed by a launch script written for another accelerator (an NPU launcher)
        mode = precision_mode(setting)
        if mode is not None:
            yield setting, mode


def _launched_elsewhere(origin: object) -> bool:
    """A value a launch line passes (values/launched.py), when that launch script sets another accelerator's
    runtime environment (checks/_accelerator.py)."""
    from precisionlint.values.candidate import LAUNCH_FLAG

    if getattr(origin, "kind", None) != LAUNCH_FLAG:
        return False
    from precisionlint.checks._accelerator import shell_runs_elsewhere
    from precisionlint.project.model import current

    path = getattr(getattr(origin, "call", None), "path", "")
    launcher = current().load_linked(path) if path else None
    return launcher is not None and shell_runs_elsewhere(launcher.text) is not None


class AutocastUse(FrozenRecord):
    """One `torch.autocast` (or `torch.cuda.amp.autocast`) region that runs on a GPU, with its effective dtype."""

    # A plain class rather than a dataclass: importing dataclasses costs every check run's workers several
    # milliseconds (precisionlint/core/records.py has the numbers).
    __slots__ = ("region", "dtype", "explicit", "trains")
    _fields = __slots__

    def __init__(self, region: AutocastRegion, dtype: str, explicit: bool, trains: str = "loss") -> None:
        self.region = region
        self.dtype = dtype  # "fp16" | "bf16" | ...
        self.explicit = explicit  # the dtype is written in the call (else it is CUDA's default, float16)
        # What says the region trains: "loss" when its outputs reach a backward in this file (flow.py), "file"
        # when the file trains somewhere (a backward, an optimizer or scaler step, a GradScaler) but this
        # region's outputs are not seen reaching a loss (a validation pass, or a loss handed to a wrapper),
        # "none" when nothing in the file trains (inference, or a library helper applying a precision its
        # caller chose).
        self.trains = trains

    @property
    def span(self) -> Span:
        dtype_span = self.region.dtype_span
        return dtype_span if self.explicit and dtype_span is not None else self.region.span


def autocast_uses(ctx: CheckContext) -> Iterator[AutocastUse]:
    """GPU autocast regions of a Python document (precisionlint.script.model.AutocastRegion).

    A region on "cpu" (or another non-CUDA device) is not about the target GPUs; a disabled one runs in float32;
    a dtype that cannot be resolved is unknown, not wrong. The script model fills an omitted dtype with the
    device's default (cuda: float16), so `torch.autocast("cuda")` counts as float16; with `**kwargs` in the
    call the dtype may hide there, so an omitted one is not assumed.

    A file whose GPU regions write both float16 and bfloat16 (`autocast(dtype=torch.float16)` in one arm,
    `autocast(dtype=torch.bfloat16)` in the other: Accelerate's and alpaca_farm's precision helpers, a script
    with `--fp16`/`--bf16` switches) offers both; which runs is its caller's choice, made elsewhere, so none of
    its explicit regions is reported as the wrong 16-bit type for the target GPUs.
    """
    if ctx.document.format != "python":
        return
    model = ctx.script
    written = {_DTYPES.get(str(r.dtype).rsplit(".", 1)[-1]) for r in model.autocast_regions
               if r.dtype_explicit and r.enabled is not False and r.device in (None, "cuda")}
    if _passes_cuda_autocast_uncalled(model):
        written.add("fp16")  # `return torch.cuda.amp.autocast`: the caller enters it with CUDA's default, float16
    offers_both = {"fp16", "bf16"} <= written
    backward = model.events_of("backward", "scaled_backward", "framework_backward")
    reached = {id(region) for event in backward for region in event.reached}
    trains_here = file_trains(model)
    for region in model.autocast_regions:
        if region.enabled is False:
            continue
        device = region.device
        if device is not None and device != "cuda":
            continue
        explicit = bool(region.dtype_explicit)
        if region.dtype is None or (not explicit and (device is None or region.unpacked)):
            continue
        short = _DTYPES.get(str(region.dtype).rsplit(".", 1)[-1])
        if offers_both and explicit and short in ("fp16", "bf16"):
            continue
        if short is not None:
            trains = "loss" if id(region) in reached else "file" if trains_here else "none"
            if trains != "none" and without_grad(model, region):
                trains = "none"  # no gradient flows through it: what it computes is inference, even mid-training
            yield AutocastUse(region, short, explicit, trains)


def file_trains(model: ScriptModel) -> bool:
    """Whether anything in the file trains: a backward, an optimizer or scaler step, an optimizer or a
    GradScaler. A file with none of these is inference, or a library helper applying a precision its caller
    chose: what the target GPUs run is decided by the caller."""
    return bool(model.events_of("backward", "scaled_backward", "framework_backward")
                or model.events_of("optimizer_step", "scaler_step") or model.optimizers
                or model.has_scaler_evidence())


def _passes_cuda_autocast_uncalled(model: ScriptModel) -> bool:
    """The file hands out `torch.cuda.amp.autocast` itself, uncalled, for a caller to enter with CUDA's default
    float16: open_clip's precision helper (as copied into EVA-CLIP) returns it for 'amp' and
    `lambda: torch.cuda.amp.autocast(dtype=torch.bfloat16)` for 'amp_bf16'."""
    def uncalled_cuda_autocast(deprecated: Deprecated | None, call: object, bare_decorator: bool) -> bool:
        return (deprecated is not None and deprecated.kind == "autocast" and deprecated.device == "cuda"
                and call is None and not bare_decorator)

    if any(uncalled_cuda_autocast(use.deprecated, use.call, use.bare_decorator) for use in model.deprecated_uses):
        return True
    return any(uncalled_cuda_autocast(deprecated, use.call, use.bare_decorator)
               for record in model.deprecated_imports for alias, deprecated in record.names
               for use in record.uses.get(alias.asname or alias.name, []))


# Each framework's own spelling of a precision to suggest instead: (bf16 mixed, fp16 mixed with loss scaling,
# float32). A framework not listed gets the words, not a spelling.
INSTEAD: dict[str, tuple[str, str, str]] = {
    "lightning": ("'bf16-mixed'", "'16-mixed'", "'32-true'"),
    "accelerate": ("'bf16'", "'fp16'", "'no'"),
    "composer": ("'amp_bf16'", "'amp_fp16'", "'fp32'"),
    "axolotl": ("`bf16: true`", "`fp16: true`", "neither `bf16` nor `fp16`"),
    "hf": ("`bf16: true`", "`fp16: true`", "neither `bf16` nor `fp16`"),  # `bf16=True` in a Python call
    "torchtune": ("`dtype: bf16`", "", "`dtype: fp32`"),  # its recipes refuse fp16 ("full fp16 training is not
}                                                         # supported with this recipe")
# Frameworks that refuse fp16 training: on a GPU without bf16 the advice is float32.
NO_FP16 = frozenset({"torchtune"})
_INSTEAD_WORDS = ("bf16 mixed precision", "fp16 mixed precision with loss scaling", "float32")


def instead(setting: Setting, dtype: str) -> str:
    """The precision to suggest instead ("bf16", "fp16" or "fp32"), in the setting's framework's own words (its
    float32 where it has no fp16)."""
    column = ("bf16", "fp16", "fp32").index(dtype)
    spellings = INSTEAD.get(setting.framework)
    if spellings is None:
        return _INSTEAD_WORDS[column]
    spelled = spellings[column] or spellings[2]  # no fp16 in that framework: float32
    if setting.framework == "hf" and setting.format == "python":
        return spelled.replace(": true", "=True")  # TrainingArguments(fp16=True)
    return spelled


def framework_label(setting: Setting) -> str:
    """How a message names the framework that reads the setting: its own title ("NeMo (Megatron)",
    "SpeechBrain"), not the internal name of its table ("nemo")."""
    if setting.scope == "trainer_config":  # the table the user wrote, not the Trainer it is handed to
        return "[trainer_config]"
    short = {"lightning": "Lightning", "hf": "Transformers", "accelerate": "Accelerate", "deepspeed": "DeepSpeed",
             "torch": "PyTorch", "composer": "Composer", "nemo": "NeMo"}.get(setting.framework)
    if short is not None:
        return short
    from precisionlint.frameworks.registry import title

    return title(setting.framework)


def shown(setting: Setting) -> str:
    """`precision='16-mixed'` as it reads in a message."""
    if not setting.key_path:
        return f"{setting.name}={setting.value!r}"
    if setting.framework == "torch":  # a call: set_float32_matmul_precision('high')
        return f"{setting.key_path[0]}({setting.value!r})"
    key = ".".join(setting.key_path[-2:]) if setting.framework == "deepspeed" else setting.key_path[-1]
    return f"{key}={setting.value!r}"
