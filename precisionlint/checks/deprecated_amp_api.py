"""## What it does
Finds the device-specific AMP entry points that PyTorch deprecated in favour of `torch.amp`:
`torch.cuda.amp.autocast`, `torch.cuda.amp.GradScaler`, `torch.cuda.amp.custom_fwd`,
`torch.cuda.amp.custom_bwd`, `torch.cpu.amp.autocast` and `torch.cpu.amp.GradScaler`, whether written as an
attribute chain (through any alias of torch, or `from torch.cuda import amp`) or imported with
`from torch.cuda.amp import ...`. Imports inside `except ImportError:`, a feature test or a version test are
compatibility fallbacks and are not reported, except the branch of a torch version test
(`version.parse(torch.__version__) >= version.parse("1.6")`) that every torch that warns, among those the
project declares, takes. An imported name the file uses only in type annotations
(`scaler: Optional[GradScaler]`) is never called there, so nothing warns: that finding is information.

## Why is this bad?
Since PyTorch 2.4 each of these emits a `FutureWarning` ("`torch.cuda.amp.autocast(args...)` is deprecated.
Please use `torch.amp.autocast('cuda', args...)` instead.") on every call, and deprecated APIs are removed in
later releases. The `torch.amp` spellings take the device as an argument. Where every torch version the
project declares is older than 2.4 (`torch==2.1.2`), nothing warns yet and the finding is information for the
upgrade, not a warning.

## Example
```python
from torch.cuda.amp import autocast, GradScaler

scaler = GradScaler()
with autocast(dtype=torch.float16):
    ...
```

## Use instead
```python
from torch.amp import autocast, GradScaler

scaler = GradScaler("cuda")
with autocast("cuda", dtype=torch.float16):
    ...
```

## Fix safety
Safe when the project declares a torch version that has the replacement: `torch.amp.GradScaler` needs torch
2.3, `torch.amp.custom_fwd(device_type=...)` 2.4, and `torch.amp.autocast` is marked safe from 2.0 (versions
come from `pyproject.toml`, `requirements*.txt` (or `*_requirements.txt`), `setup.py`/`setup.cfg`,
`environment.yml`, a Dockerfile, or `[tool.precisionlint] target-versions`). Where the declared floor is
older, or no torch version is declared, the fix is unsafe and its description names the torch version it needs;
where every torch version the project declares is older than the replacement (`torch==2.1.2` for
`torch.amp.GradScaler`), no fix is offered, since it would write an API that does not exist there.

The fix rewrites the module path (`torch.cuda.amp` -> `torch.amp`, keeping the root alias such as `th`
and every `as` alias), adds `"cuda"` (or `"cpu"`) as the first argument of each call, names the positional
arguments of the old autocast (`autocast(True)` -> `autocast("cuda", enabled=True)`, since the new signature
puts `dtype` second) and adds `device_type="cuda"` to `custom_fwd`/`custom_bwd`. An autocast written without
a dtype gets the old default written out (`dtype=torch.float16` for CUDA, `dtype=torch.bfloat16` for the CPU):
`torch.amp.autocast(device)` without a dtype takes the autocast dtype current when it is built, so inside a
caller's bfloat16 region `torch.amp.autocast("cuda")` is bfloat16 where `torch.cuda.amp.autocast()` was
float16. An autocast called with `**kwargs` and no dtype gets an unsafe fix (the unpacked arguments may or may
not name one). When some use cannot be rewritten exactly (the name passed around uncalled, `*args`, no name
bound to torch for the dtype), no fix is offered for that import or use.

## References
- https://pytorch.org/docs/stable/amp.html
- https://github.com/pytorch/pytorch/blob/main/torch/cuda/amp/autocast_mode.py
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator

from precisionlint.checks import CheckContext
from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Finding, Fix, Severity, Span
from precisionlint.sources.python_index import all_statements, lines_holding, walk, walk_on_lines

if TYPE_CHECKING:
    from precisionlint.project.versions import Version, VersionRange
    from precisionlint.script.fixes import AmpEdits
    from precisionlint.script.version_tests import Gate

CODE = "PL207"
NAME = "deprecated-amp-api"
SEVERITY = Severity.WARNING
SUMMARY = "torch.cuda.amp / torch.cpu.amp APIs are deprecated (FutureWarning): use torch.amp."
TARGET = "script"
READS = "torch, pins"
PYTHON_WORDS: tuple[bytes, ...] = (b"autocast", b"GradScaler", b"custom_fwd", b"custom_bwd")
MODEL_WORDS: tuple[str, ...] = ("autocast", "GradScaler", "custom_fwd", "custom_bwd")
NEEDS_PROJECT = True  # reads the project around the file: pins, linked files or the accelerator it targets
FIXABLE = True


# The torch release from which each replacement is known to exist: torch.amp.GradScaler appeared in 2.3 and
# torch.amp.custom_fwd/custom_bwd (with device_type) in 2.4; for torch.amp.autocast 2.0 is the floor we vouch for.
_NEEDS = {"scaler": (2, 3), "custom_fwd": (2, 4), "custom_bwd": (2, 4), "autocast": (2, 0)}
# The release whose calls of these spellings emit the FutureWarning.
_WARNS_FROM = (2, 4)


def _fix(ctx: CheckContext, description: str, needed: tuple[int, int], amp: AmpEdits) -> Fix | None:
    """Safe only where the project's declared torch floor has the replacement and the rewrite is exact;
    otherwise (older, or no torch declared, or arguments that may differ) the fix is unsafe and says why. None
    where every torch the project declares is older than the replacement: it would write an API that does not
    exist there (framework-version-mismatch then reports it)."""
    from precisionlint.checks._pins import floor_has

    torch = ctx.project.version("torch")
    if torch is not None and torch.all_below(needed):
        return None
    has, note = floor_has(ctx, "torch", needed)
    notes = [n for n in (note if not has else "", amp.inexact) if n]
    if not notes:
        return Fix(description, "safe", tuple(amp.edits))
    return Fix(f"{description} ({'; '.join(notes)})", "unsafe", tuple(amp.edits))


def check(ctx: CheckContext) -> Iterator[Finding]:
    from precisionlint.script.fixes import deprecated_import_fix, deprecated_use_fix, parses_after

    model = ctx.script
    # Where every torch the project allows is older than 2.4, nothing warns yet: the finding is a note for the
    # upgrade, not a warning about the program as it runs.
    torch = ctx.project.version("torch")
    quiet = torch is not None and torch.all_below(_WARNS_FROM)
    when = f"; the declared torch{torch.describe()} does not warn yet" if quiet and torch is not None else ""
    found: list[tuple[Span, str, str, tuple[int, int], AmpEdits | None, bool]] = []
    annotations = _Annotations(model.document.tree, model.document.text)
    runs = _switch_reader(torch)
    for record in model.deprecated_imports:
        # the branch's import is reported only where the file calls what it imports: an import alone never warns,
        # and a switch copied into every module of a package is often left unused
        if record.gates and (not runs(record.gates) or not annotations.read_outside_annotations(
                [alias.asname or alias.name for alias, d in record.names if d is not None])):
            continue
        old = [(alias.name, d) for alias, d in record.names if d is not None]
        listed = ", ".join(f"`{record.module}.{name}`" for name, _ in old)
        advice = ", ".join(dict.fromkeys(d.advice for _, d in old))
        verb, warns = ("is", "it warns") if len(old) == 1 else ("are", "they warn")
        typing_only = annotations.only_in_annotations(
            [alias.asname or alias.name for alias, d in record.names if d is not None])
        found.append(
            (
                record.span,
                f"{listed} {verb} deprecated; use {advice}"
                f"\n{warns} on every call since PyTorch 2.4 (FutureWarning){when}{_branch(record.gates)}"
                f"{_typing_only('it' if len(old) == 1 else 'them') if typing_only else ''}",
                "Import from `torch.amp` and pass the device",
                max(_NEEDS[d.kind] for _, d in old),
                # a fallback binding's uses are not followed: rewriting the import alone would break them
                None if record.gates else deprecated_import_fix(model, record),
                typing_only,
            )
        )
    for use in model.deprecated_uses:
        if use.gates and not runs(use.gates):
            continue
        advice = use.deprecated.advice
        found.append(
            (
                use.span,
                f"`{use.qualname}` is deprecated; use {advice}"
                f"\nit warns on every call since PyTorch 2.4 (FutureWarning){when}{_branch(use.gates)}",
                f"Use `{advice}`",
                _NEEDS[use.deprecated.kind],
                deprecated_use_fix(model, use),
                False,  # attribute chains are recorded where they are used as values, not in annotations
            )
        )
    # Every fix must leave a file that parses. The edits of different findings touch different statements, so
    # when all of them together parse, each one alone does too: one parse for the file, not one per finding.
    every = [edit for *_, amp, _ in found if amp for edit in amp.edits]
    together = bool(every) and parses_after(model, every)
    for span, message, description, needed, amp, typing_only in found:
        fix = None
        if amp and amp.edits and (together or parses_after(model, amp.edits)):
            fix = _fix(ctx, description, needed, amp)
        yield ctx.report(span, message, fix=fix, severity=Severity.INFO if quiet or typing_only else None)


def _branch(gates: tuple[Gate, ...]) -> str:
    """Names the version test whose branch runs (the innermost), for a finding under one."""
    if not gates:
        return ""
    test = ast.unparse(gates[-1].test)
    test = test if len(test) <= 80 else test[:77] + "..."
    return f", and every such torch this project allows takes this branch of `{test}`"


def _switch_reader(torch: VersionRange | None) -> Callable[[tuple[Gate, ...]], bool]:
    """Whether a branch of torch version tests runs on every torch that warns (2.4 or newer) and that the
    project allows: `if version.parse(torch.__version__) >= version.parse("1.6"):` around the deprecated
    spelling is taken on all of them, so it is no compatibility fallback. Where the project allows no torch
    that warns, or a test depends on which of them runs, the branch is a fallback, as before."""
    from precisionlint.script.version_tests import taken

    floor: Version = _WARNS_FROM
    ceiling = None
    if torch is not None:
        if torch.all_below(_WARNS_FROM):
            return lambda gates: False
        if torch.floor is not None and torch.floor.version > floor:
            floor = torch.floor.version
        ceiling = torch.ceiling
    return lambda gates: taken(gates, floor, ceiling)


# Named only in annotations (mmagic: `loss_scaler: Optional[GradScaler] = None` after
# `from torch.cuda.amp.grad_scaler import GradScaler`): nothing is called, so nothing warns; the finding is a note.
def _typing_only(pronoun: str) -> str:
    return f", but this file names {pronoun} only in type annotations, which never call {pronoun}"


class _Annotations:
    """Which reads of the names asked about lie inside annotations (parameters, returns, annotated assignments).
    The reads are found by walking only the statements on lines where one of those names is written, and only the
    annotations that span one of those lines are walked: most files read the deprecated names outside any
    annotation, and walking every annotation of a typed module cost more than the rest of the rule."""

    def __init__(self, tree: object, text: str) -> None:
        self.tree = tree
        self.text = text
        self.loads: dict[tuple[str, ...], list[ast.Name]] = {}

    def _inside(self, uses: list[ast.Name]) -> set[int]:
        """The nodes of the annotations written on the lines of `uses` (a read inside an annotation lies within
        the annotation's lines)."""
        if not isinstance(self.tree, ast.AST):
            return set()
        lines = sorted({use.lineno for use in uses})
        nodes: set[int] = set()
        # only the statements written on those lines can hold such an annotation: the rest of the file is not read
        for annotation in _annotations_of(all_statements(self.tree, lines)):
            first, last = annotation.lineno, annotation.end_lineno or annotation.lineno
            if any(first <= line <= last for line in lines):
                nodes.update(id(inner) for inner in walk(annotation))
        return nodes

    def _loads(self, names: list[str]) -> list[ast.Name]:
        """Every read of one of `names` in the file (any scope)."""
        key = tuple(names)
        found = self.loads.get(key)
        if found is None:
            wanted = set(names)
            lines = lines_holding(self.text, key)  # a read of a name is written on its line
            found = self.loads[key] = [
                node for node in walk_on_lines(self.tree, lines)  # type: ignore[arg-type]
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in wanted
            ]
        return found

    def read_outside_annotations(self, names: list[str]) -> bool:
        """Whether the file reads one of these names outside annotations (any scope)."""
        uses = self._loads(names)
        if not uses:
            return False
        inside = self._inside(uses)
        return any(id(node) not in inside for node in uses)

    def only_in_annotations(self, names: list[str]) -> bool:
        """Whether the file reads these names, and only inside annotations (any scope: a shadowing local is
        counted too, which can only keep the finding a warning)."""
        uses = self._loads(names)
        if not uses:
            return False
        inside = self._inside(uses)
        return all(id(node) in inside for node in uses)


def _annotations_of(statements: list[ast.stmt]) -> Iterator[ast.expr]:
    for node in statements:
        if isinstance(node, ast.AnnAssign):
            yield node.annotation
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            arguments = node.args
            for argument in (*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs,
                             arguments.kwarg):
                if argument is not None and argument.annotation is not None:
                    yield argument.annotation
            if node.returns is not None:
                yield node.returns
