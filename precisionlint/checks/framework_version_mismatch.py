"""## What it does
Finds a precision value, spelling, argument or API that the framework version the project declares rejects:

- a Lightning 2.x `precision` spelling (`"bf16-mixed"`, `"16-mixed"`, `"32-true"`, `"transformer-engine"`,
  ...) where the project pins Lightning 1.x;
- the Trainer arguments `amp_backend` and `amp_level` (apex AMP) where it pins Lightning 2.0 or newer, in a
  config read by Lightning or a `Trainer(...)` call;
- `torch.amp.GradScaler` / `torch.GradScaler` where it pins torch older than 2.3; `torch.amp.custom_fwd` /
  `custom_bwd` (which take `device_type=`) older than 2.4; the `fp32_precision` TF32 API older than 2.9;
- fp16's loss-scaling keys (`loss_scale`, `initial_scale_power`, `loss_scale_window`, `hysteresis`,
  `consecutive_hysteresis`, `min_loss_scale`) in a DeepSpeed `bf16` block where it pins DeepSpeed 0.17.1 or
  newer;
- the `TrainingArguments` keys `fp16_backend`, `half_precision_backend` and `fp16_opt_level` where it pins
  Transformers 5 or newer.

Versions are read from the project's `pyproject.toml` (PEP 621 and Poetry), `requirements*.txt` (with `-r`
includes), `setup.py` / `setup.cfg` literals, conda environment files (`environment*.yml`, `<name>_env.yml`,
`conda*.yml`), Dockerfiles (`pip install` lines, PyTorch base images) and lock files (`uv.lock`, `poetry.lock`,
`pixi.toml`), from the file's folder up to the project root, then from the folders under the root that hold
the whole project's environment (`docker/`, `requirements/`, `env/`, `.devcontainer/`, ...);
`[tool.precisionlint] target-versions = { torch = "2.4", lightning = "2.2" }` states them where nothing is
pinned. Where every version the declaration allows rejects the value, the finding is an error. A declared floor
is a promise too: where the floor lacks an API or spelling that a newer allowed version has (`torch>=2.2` and
`torch.amp.GradScaler`, added in 2.3; `pytorch-lightning>=1.8` and `"16-mixed"`), the finding is a warning that
names the floor and the version that added it. A range without a floor (`torch<3`) or no declaration at all
says nothing. A Lightning 2.x spelling beside an argument only Lightning 1.x accepts (`gpus`,
`resume_from_checkpoint`, ...) in one mapping or call is a warning too: one of the two fails at start-up,
whichever Lightning runs. Uses under a version test or in a `try:` with an `ImportError` fallback are not
reported. Where the reader of a config is only likely (see "How a file is attributed"), the finding is a
warning.

A DeepSpeed `amp` block is not reported here: no DeepSpeed release rejects it (up to 0.19 an enabled `amp`
block still runs NVIDIA apex AMP); `conflicting-precision` reports it beside an enabled fp16 or bf16 block.
Every Lightning 1.x precision value (`16`, `"bf16"`, `32`, ...) is still accepted by Lightning 2.x
(`legacy-precision-value` reports them).

## Why is this bad?
The job fails at start-up, after the cluster was booked: Lightning 1.x raises `Precision 'bf16-mixed' is
invalid`; the Lightning 2.x Trainer has no `amp_backend` / `amp_level` arguments (apex support was removed:
`TypeError: Trainer.__init__() got an unexpected keyword argument 'amp_backend'`); torch older than 2.3 has no
`torch.amp.GradScaler` (AttributeError), torch older than 2.4 has no `torch.amp.custom_fwd`, torch older than
2.9 has no `fp32_precision` settings (`torch.backends.cuda.matmul` refuses the unknown attribute with
`AttributeError: Unknown attribute fp32_precision`; an assignment to `torch.backends.fp32_precision` creates a
module attribute that nothing reads);
DeepSpeed 0.17.1 and newer validate the `bf16` block with unknown keys forbidden, so a `loss_scale` there
fails with a pydantic `ValidationError` ("Extra inputs are not permitted") - older releases ignored it, since
bf16 training uses no loss scaling; and Transformers 5 removed `fp16_backend`, `half_precision_backend` and
`fp16_opt_level` together with apex (`TypeError: unexpected keyword argument`, or `HfArgumentParser` refusing
the unused keys of a YAML/JSON file).

## Example
```yaml
# requirements.txt: pytorch-lightning==1.9.5
trainer:
  precision: bf16-mixed
```

## Use instead
```yaml
trainer:
  precision: bf16   # Lightning 1.x spelling; or upgrade to Lightning 2.x
```

## Fix safety
The loss-scaling keys of a DeepSpeed `bf16` block are removed by a safe fix where the file is certainly a
DeepSpeed config: no DeepSpeed release ever read them. A removed Lightning or Transformers argument in a config
is removed by an unsafe fix (under the old version it still chose apex). Spellings and torch APIs get no fix:
whether to change the code or the pin is the user's decision.

## References
- Lightning 1.9 precision values: https://lightning.ai/docs/pytorch/1.9.5/common/trainer.html#precision
- Lightning 2.0 precision spellings and removed apex arguments: https://lightning.ai/docs/pytorch/stable/upgrade/from_1_9.html
- `torch.amp.GradScaler` (2.3) and `custom_fwd(device_type=...)` (2.4): https://pytorch.org/docs/stable/amp.html
- DeepSpeed source, `deepspeed/runtime/precision_config.py` (`DeepSpeedBF16Config`, 0.17.1) and
  `deepspeed/runtime/config_utils.py` (`extra="forbid"`)
- Transformers v5 migration guide (`TrainingArguments` removals): https://github.com/huggingface/transformers/blob/main/MIGRATION_GUIDE_V5.md
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from precisionlint.checks import CheckContext
from precisionlint.checks._attribution import at_most_warning, certain, hedge
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Finding, Fix, Setting, Severity, Span
from precisionlint.project import disk_path
from precisionlint.project.versions import VersionRange, show

if TYPE_CHECKING:
    import ast  # a config's check imports this module and parses no Python
    from typing import NamedTuple
else:
    from precisionlint.core.light_typing import NamedTuple

CODE = "PL401"
NAME = "framework-version-mismatch"
SEVERITY = Severity.ERROR
SUMMARY = "A precision value or API that the project's pinned framework version rejects."
TARGET = "settings"
READS = "lightning, hf, torch, pins"
PYTHON_WORDS: tuple[bytes, ...] = (b"autocast", b"GradScaler", b"custom_fwd", b"custom_bwd")  # torch.amp APIs
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets
FIXABLE = True

# Lightning 2.x spellings and the 1.x value that means the same (None: no 1.x equivalent).
_LIGHTNING_2 = {"16-mixed": "16", "bf16-mixed": "bf16", "32-true": "32", "64-true": "64", "16-true": None,
                "bf16-true": None, "transformer-engine": None, "transformer-engine-float16": None}
# The 1.x Trainer's apex AMP arguments, gone from the Trainer's signature in Lightning 2.0.
_LIGHTNING_1_ONLY = ("amp_backend", "amp_level")
# torch APIs and the release that introduced them.
_TORCH_APIS = {
    "torch.amp.GradScaler": (2, 3),
    "torch.GradScaler": (2, 3),
    "torch.amp.grad_scaler.GradScaler": (2, 3),
    "torch.amp.custom_fwd": (2, 4),
    "torch.amp.custom_bwd": (2, 4),
}
_TRANSFORMERS_5_REMOVED = ("fp16_backend", "half_precision_backend", "fp16_opt_level")
# DeepSpeedBF16Config (extra keys forbidden) replaced the key-by-key reading of the bf16 block in 0.17.1.
_DEEPSPEED_STRICT_BF16 = (0, 17, 1)


def _pinned(found: VersionRange, package: str) -> str:
    return f"this project declares {found.declared(package)}"


def check(ctx: CheckContext) -> Iterator[Finding]:
    yield from _settings(ctx)
    if ctx.document.format == "python" and _mentions_new_torch_api(ctx.document.text):
        yield from _torch_apis(ctx)


def _settings(ctx: CheckContext) -> Iterator[Finding]:
    bf16_blocks = {s.scope for s in ctx.settings if s.framework == "deepspeed" and s.key_path[-2:-1] == ("bf16",)}
    for setting in ctx.settings:
        if setting.name == "precision" and setting.framework == "lightning" and setting.resolved:
            yield from _lightning_2_spelling(ctx, setting)
        elif setting.name in _LIGHTNING_1_ONLY and setting.framework == "lightning":
            yield from _removed_argument(ctx, setting, _LIGHTNING_2_REMOVAL)
        elif setting.name in _TRANSFORMERS_5_REMOVED and setting.framework == "hf":
            yield from _removed_argument(ctx, setting, _TRANSFORMERS_5_REMOVAL)
        elif setting.name == "bf16_loss_scaling" and setting.framework == "deepspeed":
            if setting.key_path[-2] == "bfloat16" and setting.scope in bf16_blocks:
                continue  # DeepSpeed reads the old `bfloat16` block only when there is no `bf16` block
            yield from _bf16_loss_scaling(ctx, setting)


def _lightning_2_spelling(ctx: CheckContext, setting: Setting) -> Iterator[Finding]:
    value = setting.value
    if not isinstance(value, str) or value not in _LIGHTNING_2:
        return
    found = ctx.project.version("lightning")
    old = _LIGHTNING_2[value]
    advice = f"write `{old}` (the 1.x spelling)" if old else "it has no Lightning 1.x equivalent"
    refusal = f"Lightning 1.x rejects it (\"Precision '{value}' is invalid\")"
    if found is not None and found.all_below((2, 0)):
        yield ctx.report(
            setting.span,
            f"`precision={value!r}` is a Lightning 2.x spelling, but {_pinned(found, 'lightning')}: {refusal}; "
            f"{advice}, or upgrade Lightning to 2.0 or newer{hedge(setting, 'Lightning')}",
            severity=at_most_warning(setting, Severity.ERROR),
        )
    elif found is not None and found.admits_below((2, 0)) and found.floor is not None:
        floor = show(found.floor.version)
        yield ctx.report(
            setting.span,
            f"`precision={value!r}` is a Lightning 2.x spelling, but {_pinned(found, 'lightning')}, which admits "
            f"Lightning {floor}: {refusal}; raise the Lightning floor to 2.0, or {advice}"
            f"{hedge(setting, 'Lightning')}",
            severity=Severity.WARNING,
        )
    elif found is None or not found.all_at_least((2, 0)):  # under a 2.x floor the 1.x argument is the mistake
        from precisionlint.frameworks.lightning import one_x_arguments  # a Lightning setting's: Lightning's module

        beside = one_x_arguments(ctx.document, setting)
        if beside:
            names = ", ".join(f"`{name}`" for name in beside[:3])
            yield ctx.report(
                setting.span,
                f"`precision={value!r}` is a Lightning 2.x spelling, but {names} beside it "
                f"{'is an argument' if len(beside) == 1 else 'are arguments'} only Lightning 1.x accepts: "
                f"one of them fails at start-up (Lightning 1.x: \"Precision '{value}' is invalid\"; 2.x: "
                f"`TypeError: unexpected keyword argument '{beside[0]}'`); under Lightning 1.x {advice}, "
                f"under 2.x remove {names}{hedge(setting, 'Lightning')}",
                severity=Severity.WARNING,
            )


class _Removal(NamedTuple):
    """An argument a framework release removed: where it was, what refuses it now, what replaces it."""

    package: str
    since: tuple[int, int]
    removed_from: str  # "from the Lightning Trainer in 2.0 (apex AMP support is gone)"
    refusal: str  # "the 2.x Trainer refuses it at start-up (...)"; {name} is the argument
    remedy: str
    fix_title: str  # {name} is the argument
    reader: str  # for the hedge of a setting whose framework is only likely


_LIGHTNING_2_REMOVAL = _Removal(
    "lightning", (2, 0), "from the Lightning Trainer in 2.0 (apex AMP support is gone)",
    "the 2.x Trainer refuses it at start-up (`TypeError: unexpected keyword argument '{name}'`)",
    "`precision` alone selects native AMP", "Remove `{name}` (under Lightning 1.x it selected apex AMP)", "Lightning",
)
_TRANSFORMERS_5_REMOVAL = _Removal(
    "transformers", (5, 0), "from TrainingArguments in Transformers 5 (apex support is gone)",
    "TrainingArguments refuses it at start-up", "native torch AMP is the only backend",
    "Remove `{name}` (Transformers 4 read it)", "Transformers TrainingArguments",
)


def _removed_argument(ctx: CheckContext, setting: Setting, removal: _Removal) -> Iterator[Finding]:
    found = ctx.project.version(removal.package)
    if found is None or not found.all_at_least(removal.since):
        return
    name = setting.name
    yield ctx.report(
        setting.key_span,
        f"`{name}` was removed {removal.removed_from}, and {_pinned(found, removal.package)}: "
        f"{removal.refusal.format(name=name)}; remove it ({removal.remedy}){hedge(setting, removal.reader)}",
        fix=_removal(setting, removal.fix_title.format(name=name), safe=False),
        severity=at_most_warning(setting, Severity.ERROR),
    )


def _bf16_loss_scaling(ctx: CheckContext, setting: Setting) -> Iterator[Finding]:
    found = ctx.project.version("deepspeed")
    if found is None or not found.all_at_least(_DEEPSPEED_STRICT_BF16):
        return
    block, key = setting.key_path[-2:]
    # No DeepSpeed release read these keys in the bf16 block (bf16 runs with a loss scale of 1): removing
    # one changes nothing where it was accepted, and is then safe wherever DeepSpeed surely reads the file.
    fix = _removal(setting, f"Remove `{block}.{key}`", safe=certain(setting))
    yield ctx.report(
        setting.key_span,
        f"`{key}` in the `{block}` block is an fp16 loss-scaling key, and {_pinned(found, 'deepspeed')}: "
        f"DeepSpeed 0.17.1 and newer validate the bf16 block with unknown keys forbidden and fail at start-up "
        f"(\"Extra inputs are not permitted\"); remove it (bf16 training uses no loss scaling, and older "
        f"releases ignored it){hedge(setting, 'DeepSpeed')}",
        fix=fix,
        severity=at_most_warning(setting, Severity.ERROR),
    )


def _removal(setting: Setting, description: str, safe: bool) -> Fix | None:
    from precisionlint.sources.setting_edits import remove_entry

    return remove_entry(setting, description, safe=safe)


def _mentions_new_torch_api(text: str) -> bool:
    return "GradScaler" in text or "custom_fwd" in text or "custom_bwd" in text or "fp32_precision" in text


def _torch_apis(ctx: CheckContext) -> Iterator[Finding]:
    import ast

    found = ctx.project.version("torch")
    if found is None or not any(found.all_below(introduced) or found.admits_below(introduced)
                                for introduced in _INTRODUCED):
        return  # nothing to compare with, or every API is there in every declared version: no need to look
    model = ctx.script
    uses: list[tuple[Span, str, tuple[int, int]]] = []
    resolver, table = model.resolver, model.table
    found_uses = _walk(ctx.document.tree, _api_lines(ctx.document.text))
    # A floor is a promise for the files it speaks for, and a file that tests the torch version anywhere picks
    # its APIs by version itself (Accelerate's GradScaler factory: an `is_torch_version` test beside branches
    # for other devices).
    floor_promised = not any(guarded and _torch_use(node) for node, guarded in found_uses) and ctx.project.covers(
        disk_path(ctx.document), found)
    for node, guarded in found_uses:
        if guarded:
            continue
        if isinstance(node, ast.ImportFrom) and node.module in ("torch.amp", "torch") and node.level == 0:
            for alias in node.names:
                api = f"{node.module}.{alias.name}"
                if api in _TORCH_APIS:
                    uses.append((model.positions.span(node), api, _TORCH_APIS[api]))
        elif isinstance(node, ast.Attribute) and node.attr in _API_ATTRIBUTES:
            scope = table.scope_of(node) or table.module
            qualname = resolver.qualname(node, scope)
            if qualname in _TORCH_APIS:
                uses.append((model.positions.span(node), qualname, _TORCH_APIS[qualname]))
    for use in model.tf32_uses:
        if use.kind == "new" and not use.version_switched:
            uses.append((use.span, use.api, (2, 9)))
    for span, api, introduced in uses:
        if found.all_below(introduced):
            yield ctx.report(
                span,
                f"`{api}` appeared in PyTorch {show(introduced)}, but {_pinned(found, 'torch')}: it does not "
                f"exist there; use the API of that version or raise the torch pin to {show(introduced)} or newer",
            )
        elif found.admits_below(introduced) and found.floor is not None and floor_promised:
            floor = show(found.floor.version)
            yield ctx.report(
                span,
                f"`{api}` appeared in PyTorch {show(introduced)}, but {_pinned(found, 'torch')}, which admits "
                f"torch {floor}: it does not exist there; raise the torch floor to {show(introduced)} or use "
                f"the API of {floor}",
                severity=Severity.WARNING,
            )


def _torch_use(node: ast.AST) -> bool:
    """An API attribute, or an import from torch or torch.amp."""
    import ast

    return isinstance(node, ast.Attribute) or (
        isinstance(node, ast.ImportFrom) and node.module in ("torch.amp", "torch") and node.level == 0)


_API_ATTRIBUTES = frozenset(("GradScaler", "custom_fwd", "custom_bwd"))
_INTRODUCED = frozenset((*_TORCH_APIS.values(), (2, 9)))  # the releases the APIs below appeared in
_LEAF_FIELDS = frozenset(("ctx", "op", "ops"))  # expression contexts and operators: no API use below them
_FIELDS: dict[type, tuple[str, ...]] = {}


# `from torch` at a word's start. The boundary is tested after the literal (`from` not preceded by a word
# character), not before it (`\bfrom`): a pattern that starts with a literal is searched for that literal first,
# where one that starts with `\b` is tried at every position of the text (over the 294 scripts of four real
# repositories that this rule reads: 0.46 s against 0.013 s). The same matches at the same positions: each
# position is put the same test.
_FROM_TORCH = r"from(?<!\wfrom)(?:\s|\\)+torch\b"  # compiled on first use (re's cache), not at import


def _api_lines(text: str) -> list[int] | None:
    """The lines where an API name of _API_ATTRIBUTES is written or a `from torch... import` starts: the
    statements that take in none of them hold nothing _walk looks for (None: every line may)."""
    from precisionlint.sources.python_index import lines_holding

    return lines_holding(text, tuple(_API_ATTRIBUTES), re.compile(_FROM_TORCH))


def _walk(tree: ast.AST, lines: list[int] | None = None) -> list[tuple[ast.AST, bool]]:
    """The `from ... import` statements and the attributes named like an API of _TORCH_APIS, in the order of a
    depth-first walk (last child first), each with whether it sits under a version test or in a `try:` with an
    ImportError-style handler (a compatibility switch that picks the API by version). One loop over the nodes,
    without ast.iter_child_nodes' generators, which cost more than the rest of this rule. With `lines`, a
    statement whose lines take in none of them is left out with all under it (what is found keeps its order)."""
    import ast

    from precisionlint.script.scopes import is_compat_handler, is_compat_test
    from precisionlint.sources.python_index import takes_in

    found: list[tuple[ast.AST, bool]] = []
    AST, Attribute, ImportFrom, stmt = ast.AST, ast.Attribute, ast.ImportFrom, ast.stmt
    fields_of = _FIELDS
    stack: list[tuple[ast.AST, bool]] = [(tree, False)]
    pop, push = stack.pop, stack.append
    while stack:
        node, guarded = pop()
        kind = type(node)
        if kind is ImportFrom or (kind is Attribute and node.attr in _API_ATTRIBUTES):  # type: ignore[attr-defined]
            found.append((node, guarded))
        inner = guarded
        if not guarded:
            if isinstance(node, ast.Try) or kind.__name__ == "TryStar":
                inner = any(is_compat_handler(h) for h in node.handlers)  # type: ignore[attr-defined]
            elif isinstance(node, (ast.If, ast.IfExp)):
                inner = is_compat_test(node.test)
        fields = fields_of.get(kind)
        if fields is None:
            fields = fields_of[kind] = tuple(f for f in kind._fields if f not in _LEAF_FIELDS)
        for field in fields:
            value = getattr(node, field, None)
            if isinstance(value, AST):
                if lines is None or not isinstance(value, stmt) or takes_in(value, lines):
                    push((value, inner))
            elif isinstance(value, list):
                for item in value:
                    if isinstance(item, AST) and (lines is None or not isinstance(item, stmt) or takes_in(item, lines)):
                        push((item, inner))
    return found
