"""cross-file-precision-conflict on a launch line: the precision its flag asks for (or the Accelerate config its
`--config_file` names) against a `torch.autocast` that the started script hard-codes to the other 16-bit type."""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._linked_settings import display, related_to, truth, where_line, where_span
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Finding, Related, Severity, Span

if TYPE_CHECKING:
    from typing import Any, NamedTuple
else:
    from precisionlint.core.light_typing import NamedTuple

# Names whose use in a script means it chooses its precision from its arguments or configuration.
_PRECISION_NAMES = ("fp16", "bf16", "mixed_precision", "half_precision", "use_amp", "amp_dtype", "precision",
                    "use_fp16", "use_bf16")
_FLAG_DTYPES = {"fp16": "float16", "bf16": "bfloat16"}


class _Request(NamedTuple):
    dtype: str  # "float16" | "bfloat16"
    span: Span  # where to report (the flag)
    written: str  # how the request reads in the message
    instead: str  # the launch change that would agree with the script
    accelerate: bool  # read by Accelerate (applied inside prepared models only)
    related: tuple[Related, ...] = ()


def _requested(ctx: CheckContext, launch: Any) -> _Request | None:
    """The precision a launch line asks for (a flag, or the Accelerate config its `--config_file` names)."""
    other = {"fp16": "bf16", "bf16": "fp16"}
    mixed = launch.launcher_flags.get("mixed_precision") if launch.launcher == "accelerate" else None
    if mixed is not None and mixed.value in _FLAG_DTYPES:
        return _Request(_FLAG_DTYPES[mixed.value], mixed.flag_span, f"`--mixed_precision {mixed.value}`",
                        f"--mixed_precision {other[mixed.value]}", True)
    mixed = launch.script_flags.get("mixed_precision")
    if mixed is not None and mixed.value in _FLAG_DTYPES:
        return _Request(_FLAG_DTYPES[mixed.value], mixed.flag_span, f"`--mixed_precision {mixed.value}`",
                        f"--mixed_precision {other[mixed.value]}", False)
    asked = [name for name in ("fp16", "bf16") if name in launch.script_flags
             and truth(launch.script_flags[name].value)]
    if len(asked) == 1:
        flag = launch.script_flags[asked[0]]
        return _Request(_FLAG_DTYPES[asked[0]], flag.flag_span, f"`--{asked[0]}`", f"--{other[asked[0]]}", False)
    config_flag = launch.launcher_flags.get("config_file") if launch.launcher == "accelerate" else None
    if config_flag is not None and "mixed_precision" not in launch.launcher_flags and mixed is None:
        config = ctx.linked(config_flag.value)
        settings = [s for s in config[1].settings if s.name == "mixed_precision" and s.framework == "accelerate"
                    and s.resolved] if config is not None else []
        if config is not None and len(settings) == 1 and settings[0].value in _FLAG_DTYPES:
            setting = settings[0]
            where = where_line(config[0], setting)
            return _Request(
                _FLAG_DTYPES[setting.value], config_flag.span,
                f"the Accelerate config `{config_flag.value}` (`mixed_precision: {setting.value}`, {where})",
                f"mixed_precision: {other[setting.value]}` in that config, or `--mixed_precision "
                f"{other[setting.value]}", True,
                (related_to(config[0], setting, f"Accelerate `mixed_precision: {setting.value}`"),))
    return None


def launcher_vs_script(ctx: CheckContext, launch: Any) -> Iterator[Finding]:
    from precisionlint.project.scripts import hard_coded_training_autocast, mentions

    if launch.script is None:
        return
    request = _requested(ctx, launch)
    if request is None:
        return
    script = ctx.linked(launch.script)
    if script is None or script[1].format != "python":
        return
    path, linked = script
    if any(s.name == "mixed_precision" and s.framework == "accelerate" for s in linked.settings):
        return  # Accelerator(mixed_precision=...) in the script: reported above when it disagrees
    if mentions(linked, _PRECISION_NAMES):
        return  # the script reads a precision argument: what it does with it is decided at run time
    for hard in hard_coded_training_autocast(linked):
        if hard.dtype == request.dtype:
            continue
        region = hard.region
        span = region.dtype_span or region.span
        asked = "bf16" if request.dtype == "bfloat16" else "fp16"
        if request.accelerate:
            advice = ("Accelerate applies its setting only inside models passed through `accelerator.prepare`; "
                      "take the dtype from the Accelerator (`accelerator.autocast()`)")
        else:
            advice = "take the autocast dtype from the flag"
        yield ctx.report(
            request.span,
            f"{request.written} asks for {asked}, but {launch.script} hard-codes a {hard.dtype} `torch.autocast` "
            f"on its training path ({where_span(path, span)}): the code under it computes in {hard.dtype} "
            f"whatever the launch asks; {advice}, or use `{request.instead}`",
            severity=Severity.WARNING,
            related=(Related(display(path), span, f"`torch.autocast` hard-coded to {hard.dtype}"), *request.related),
        )
        return
