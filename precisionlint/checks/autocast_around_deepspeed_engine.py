"""## What it does
Finds a `torch.autocast` block around the forward call of a DeepSpeed engine
(`engine, optimizer, _, _ = deepspeed.initialize(...)`, then `engine(batch)` under `with torch.autocast(...)`)
whose DeepSpeed config does not enable DeepSpeed's own `torch_autocast` section. The config is the file that
`deepspeed.initialize(config=...)` (or `config_params=`) names, or, when the script passes its command-line
arguments (`deepspeed.initialize(args=args, ...)`), the `--deepspeed_config` file a launch script gives it.

Only literal, unconditional autocast blocks count (a literal dtype, `enabled` omitted or `True`, under no `if`);
the severity follows the project's pinned `deepspeed`:

- error where the pin allows only DeepSpeed 0.17.2 to 0.17.5, which raise at the first forward;
- warning where the autocast's type differs from the 16-bit type the config enables, or where the config
  enables neither and the pin allows only 0.17.6 and newer;
- info where they agree, or where the config enables neither and the version is not pinned (before 0.17.2,
  DeepSpeed left an outer autocast alone, the usual way to add AMP to an fp32 engine); nothing where they agree
  and the pin allows only 0.17.6 and newer, nor where the pin allows only versions before 0.17.2.

## Why is this bad?
DeepSpeed does not let an autocast written around the engine decide the precision of the model inside it.
DeepSpeed 0.17.2 to 0.17.5 raise at the first forward: `AssertionError: torch.autocast is enabled outside
DeepSpeed, but not in the DeepSpeed config. Please enable torch.autocast through the DeepSpeed config to ensure
the correct communication dtype is used.` Since 0.17.6 the engine switches autocast off inside its forward and
logs "torch.autocast is enabled outside DeepSpeed but disabled within the DeepSpeed engine": the model runs in
the type of the config's `fp16` / `bf16` block (float32 when neither is enabled), and the outer autocast covers
only the code outside the engine call, such as the loss. A `bfloat16` autocast around an engine configured for
fp16 therefore trains the model in float16, and an autocast around an engine with neither block trains it in
float32.

## Example
```python
# ds_config.json: {"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}
engine, optimizer, _, _ = deepspeed.initialize(model=model, config="ds_config.json")
for batch in loader:
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = engine(batch)
    engine.backward(loss)
    engine.step()
```

## Use instead
Let the config choose the precision and call the engine outside any autocast:
```python
for batch in loader:
    loss = engine(batch)
    engine.backward(loss)
    engine.step()
```
or, on DeepSpeed 0.17.2 and newer, have the engine apply `torch.autocast` itself:
```json
{"torch_autocast": {"enabled": true, "dtype": "bfloat16"}, "zero_optimization": {"stage": 2}}
```

## Fix safety
No fix: whether the config or the script states the intended precision is the user's decision.

## References
- DeepSpeed `torch_autocast` (0.17.2): https://github.com/deepspeedai/DeepSpeed/pull/6993
- Relaxed nesting, autocast off inside the engine (0.17.6): https://github.com/deepspeedai/DeepSpeed/pull/7543
- DeepSpeed source: https://github.com/deepspeedai/DeepSpeed/blob/master/deepspeed/runtime/torch_autocast.py
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Document, Finding, Related, Severity
from precisionlint.sources.tree import root_map

if TYPE_CHECKING:
    from typing import Any

CODE = "PL404"
NAME = "autocast-around-deepspeed-engine"
SEVERITY = Severity.WARNING
SUMMARY = "A `torch.autocast` around a DeepSpeed engine's forward, which DeepSpeed rejects or switches off."
TARGET = "settings"
READS = "deepspeed, torch, launchers, pins"
CONFIG_WORDS: tuple[bytes, ...] = (b"deepspeed_config",)  # a launcher's --deepspeed_config, read with its script
PYTHON_WORDS: tuple[bytes, ...] = (b"autocast",)
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets

_RAISES = ((0, 17, 2), (0, 17, 6))  # the versions that raise: [first, end)
_TYPES = {"float16": "fp16", "bfloat16": "bf16"}


def check(ctx: CheckContext) -> Iterator[Finding]:
    document = ctx.document
    if document.format == "python":
        if "initialize" in document.text and "autocast" in document.text:
            yield from _script(ctx)
    elif document.format == "shell":
        yield from _launchers(ctx)


class _Config:
    """What a DeepSpeed config file says about precision."""

    def __init__(self, path: str, document: Document) -> None:
        from precisionlint.project.links import deepspeed_precision, enabled

        self.path = path
        self.enabled: str | None = None  # "fp16" | "bf16" | None (neither)
        self.setting = None
        self.known = True
        for name, setting in deepspeed_precision(document).items():
            state = enabled(setting.value) if setting.resolved else None
            if state is None:
                self.known = False  # "auto" or a value chosen elsewhere
            elif state:
                self.enabled, self.setting = name, setting
        self.torch_autocast = _torch_autocast(document)


def _torch_autocast(document: Document) -> bool | None:
    """`torch_autocast.enabled` at the top level: True, False (absent or false), None (not a literal)."""
    root = root_map(document.tree)
    if root is None:
        return None
    section = root.get("torch_autocast")
    if section is None:
        return False
    if section.value.kind != "map":
        return None
    entry = section.value.get("enabled")
    if entry is None:
        return False
    value = entry.value.value if entry.value.kind == "scalar" else None
    return value if isinstance(value, bool) else None


def _verdict(ctx: CheckContext, autocast_dtype: str, config: _Config) -> tuple[Severity, str] | None:
    """(severity, why) for an autocast of `autocast_dtype` around an engine with `config`; None when silent."""
    from precisionlint.project.versions import show

    if config.torch_autocast is not False or not config.known:
        return None
    declared = ctx.project.version("deepspeed")
    first, end = _RAISES
    if declared is not None and declared.all_at_least(first) and declared.all_below(end):
        return Severity.ERROR, (
            f"the project pins {declared.declared('deepspeed')}, and DeepSpeed {show(first)} to 0.17.5 raise at the "
            f"first forward (\"torch.autocast is enabled outside DeepSpeed, but not in the DeepSpeed config\")")
    if declared is not None and declared.all_below(first):
        return None  # before 0.17.2 DeepSpeed did not look at an outer autocast: it applies inside the engine
    newer = declared is not None and declared.all_at_least(end)
    wanted = _TYPES[autocast_dtype]
    runs = {"fp16": "float16", "bf16": "bfloat16"}.get(config.enabled or "", "float32")
    behaviour = ("the engine switches autocast off inside its forward (DeepSpeed 0.17.6 and newer; 0.17.2 to "
                 "0.17.5 raise instead" + ("" if newer else "; before 0.17.2 it applied inside the engine") + ")")
    if config.enabled != wanted:
        severity = Severity.WARNING if (newer or config.enabled is not None) else Severity.INFO
        return severity, (f"{behaviour}, so the model runs in {runs}; only the code outside the engine call "
                          f"runs in {autocast_dtype}")
    if newer:
        return None
    return Severity.INFO, ("DeepSpeed 0.17.2 to 0.17.5 raise at the first forward, and from 0.17.6 on the engine "
                           "switches autocast off inside its forward, where this autocast then does nothing (the "
                           "project's deepspeed pin does not tell which applies)")


def _message(autocast_dtype: str, config: _Config, where: str, why: str) -> str:
    enables = f"enables {config.enabled}" if config.enabled else "enables neither fp16 nor bf16"
    return (f"this {autocast_dtype} `torch.autocast` wraps the forward of a DeepSpeed engine whose config "
            f"({where}) {enables} and not `torch_autocast`: {why}; call the engine outside the autocast, or "
            f"enable `\"torch_autocast\": {{\"enabled\": true, \"dtype\": \"{autocast_dtype}\"}}` in the config")


def _config_of(ctx: CheckContext, literal: Any) -> _Config | None:
    found = ctx.linked(literal)
    if found is None or found[1].format not in ("json", "yaml"):
        return None
    return _Config(*found)


def _related(config: _Config) -> tuple[Related, ...]:
    from precisionlint.project import display_path

    if config.setting is None:
        return ()
    return (Related(display_path(config.path), config.setting.span, f"DeepSpeed `{config.enabled}.enabled=true`"),)


def _where(config: _Config) -> str:
    from precisionlint.project import display_path

    line = f":{config.setting.span.line}" if config.setting is not None else ""
    return f"{display_path(config.path)}{line}"


def _initialize_config(document: Document, call: ast.Call) -> str | None:
    from precisionlint.project.links import path_literal

    keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg is not None}
    value = keywords.get("config", keywords.get("config_params"))
    return path_literal(value, document) if value is not None else None


def _script(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.project.scripts import engine_calls_under_autocast, literal_dtype

    document = ctx.document
    reported: set[int] = set()
    for found in engine_calls_under_autocast(document):
        region = found.use.region
        if id(region) in reported:
            continue
        dtype = literal_dtype(region)
        config = _config_of(ctx, _initialize_config(document, found.initialize))
        if dtype is None or config is None:
            continue
        verdict = _verdict(ctx, dtype, config)
        if verdict is None:
            continue
        reported.add(id(region))
        severity, why = verdict
        yield ctx.report(region.span, _message(dtype, config, _where(config), why), severity=severity,
                         related=_related(config))


def _launchers(ctx: CheckContext) -> Iterator[Finding]:
    """`deepspeed train.py --deepspeed --deepspeed_config ds.json`, where train.py passes its arguments to
    `deepspeed.initialize(args=args, ...)` (no config of its own) and wraps the engine call in autocast."""
    from precisionlint.project import display_path
    from precisionlint.project.scripts import engine_calls_under_autocast, literal_dtype

    for launch in ctx.document.tree or []:
        flag = launch.script_flags.get("deepspeed_config")
        if flag is None or launch.script is None:
            continue
        config = _config_of(ctx, flag.value)
        found_script = ctx.linked(launch.script)
        if config is None or found_script is None:
            continue
        script_path, script = found_script
        if script.format != "python" or "autocast" not in script.text:
            continue
        for found in engine_calls_under_autocast(script):
            keywords = {kw.arg for kw in found.initialize.keywords}
            if "config" in keywords or "config_params" in keywords or "args" not in keywords:
                continue  # the script names its own config (checked there), or does not read the command line
            region = found.use.region
            dtype = literal_dtype(region)
            verdict = _verdict(ctx, dtype, config) if dtype is not None else None
            if verdict is None or dtype is None:
                continue
            severity, why = verdict
            where = f"{display_path(script_path)}:{region.span.line}"
            message = (f"{launch.script} wraps the DeepSpeed engine's forward in a {dtype} `torch.autocast` "
                       f"({where}), and this config ({_where(config)}) "
                       f"{'enables ' + config.enabled if config.enabled else 'enables neither fp16 nor bf16'} "
                       f"and not `torch_autocast`: {why}; call the engine outside the autocast, or enable "
                       f"`\"torch_autocast\": {{\"enabled\": true, \"dtype\": \"{dtype}\"}}` in the config")
            related = (Related(display_path(script_path), region.span, f"{dtype} `torch.autocast`"),
                       *_related(config))
            yield ctx.report(flag.span, message, severity=severity, related=related)
            break
