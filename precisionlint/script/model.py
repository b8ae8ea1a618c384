"""The training-step model of one Python file: what the script rules query instead of walking the AST.

The data types of the model, below the passes that fill them (collect.py, regions.py, flow.py) and the queries
that read them (grad_mode.py); build.py runs the passes (`build_script_model(document)`, once per file).

Stable names other rules rely on: ScriptModel.autocast_regions and AutocastRegion.device / dtype /
dtype_explicit / enabled / span / dtype_span.
"""

from __future__ import annotations

import ast

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.model import Document, Span
from precisionlint.core.records import Record
from precisionlint.script.names import Deprecated
from precisionlint.script.scopes import Scope

if TYPE_CHECKING:
    from typing import Any, Literal

    from precisionlint.script.positions import Positions
    from precisionlint.script.scopes import ScopeTable
    from precisionlint.script.tf32 import Tf32Write
    from precisionlint.script.values import Resolver
    from precisionlint.script.version_tests import Gate

    EventKind = Literal[
        "backward",  # tensor.backward() / torch.autograd.backward(...)
        "scaled_backward",  # scaler.scale(loss).backward()
        "framework_backward",  # accelerator.backward(loss), fabric.backward, self.manual_backward, engine.backward
        "unscale",  # scaler.unscale_(optimizer)
        "scaler_step",  # scaler.step(optimizer)
        "scaler_update",  # scaler.update()
        "optimizer_step",  # optimizer.step()
        "clip",  # torch.nn.utils.clip_grad_norm_(...), fsdp_model.clip_grad_norm_(...)
        "bce",  # F.binary_cross_entropy(...) or a BCELoss module called
    ]
else:
    EventKind = str  # one of those names: at run time only annotations name the type (core/light_typing.py)


# Plain classes rather than dataclasses: importing dataclasses costs every check run's workers several milliseconds
# (precisionlint/core/records.py has the numbers). Each __init__ takes the fields in the order the dataclass did.


class RegionUse(Record):
    """One place an autocast region is active: a `with` statement's body or a decorated function's body."""

    __slots__ = ("region", "node", "kind", "conditional", "scope")
    _fields = __slots__
    _repr_fields = ("kind", "conditional")

    def __init__(
        self,
        region: AutocastRegion,
        node: ast.With | ast.AsyncWith | ast.FunctionDef | ast.AsyncFunctionDef,
        kind: Literal["with", "decorator"],
        conditional: bool,
        scope: Scope,
    ) -> None:
        self.region = region
        self.node = node
        self.kind = kind
        self.conditional = conditional  # the `with` may enter a no-op context instead (nullcontext() on cpu, a flag)
        self.scope = scope  # the function whose statements run under it


class AutocastRegion(Record):
    """One autocast call (torch.autocast, torch.amp.autocast, torch.cuda/cpu.amp.autocast or a
    functools.partial of one) and every place it is entered.

    device   "cuda", "cpu", ... or None when not statically known
    dtype    "float16" | "bfloat16" | "float32" | None (unknown); the device default when dtype is omitted
             and the device is known (cuda: float16, cpu: bfloat16)
    enabled  True / False as written or resolved, None when computed
    """

    __slots__ = ("api", "device", "dtype", "dtype_explicit", "enabled", "span", "dtype_span", "device_explicit",
                 "unpacked", "form", "call", "scope", "uses", "in_conditional_expression", "dtype_expr",
                 "enabled_expr", "possible_dtypes")
    _fields = __slots__
    _repr_fields = ("api", "device", "dtype", "dtype_explicit", "enabled", "span", "dtype_span", "device_explicit",
                    "unpacked", "form", "in_conditional_expression", "possible_dtypes")

    def __init__(
        self,
        api: str,
        device: str | None,
        dtype: str | None,
        dtype_explicit: bool,
        enabled: bool | None,
        span: Span,
        dtype_span: Span | None,
        device_explicit: bool,
        unpacked: bool,
        form: Literal["call", "partial"],
        call: ast.Call,
        scope: Scope,
        uses: list[RegionUse] | None = None,
        in_conditional_expression: bool = False,
        dtype_expr: ast.expr | None = None,
        enabled_expr: ast.expr | None = None,
        possible_dtypes: frozenset[str] = frozenset(),
    ) -> None:
        self.api = api
        self.device = device
        self.dtype = dtype
        self.dtype_explicit = dtype_explicit
        self.enabled = enabled
        self.span = span
        self.dtype_span = dtype_span
        self.device_explicit = device_explicit  # device_type given (torch.cuda/cpu.amp.autocast imply theirs)
        self.unpacked = unpacked  # *args / **kwargs passed: other arguments may be hidden there
        self.form = form
        self.call = call
        self.scope = scope
        self.uses: list[RegionUse] = [] if uses is None else uses
        # written as one arm of `x if c else y` (nanoGPT: `nullcontext() if device_type == 'cpu' else autocast(...)`)
        self.in_conditional_expression = in_conditional_expression
        self.dtype_expr = dtype_expr
        self.enabled_expr = enabled_expr
        # dtypes the dtype= expression may take when it is chosen at run time (a dict of dtypes indexed by a flag,
        # `torch.bfloat16 if a else torch.float16`): {"float32", "bfloat16", "float16"}; empty when unknown
        self.possible_dtypes = possible_dtypes

    @property
    def conditional(self) -> bool:
        """Some `with` may enter a no-op context instead of this autocast."""
        return self.in_conditional_expression or any(use.conditional for use in self.uses)

    @property
    def line(self) -> int:
        return self.span.line

    def may_run_float16(self) -> bool:
        """float16 explicitly, or dtype omitted on a device that is or may be cuda."""
        if self.dtype == "float16":
            return True
        return not self.dtype_explicit and self.device in (None, "cuda") and not self.unpacked


class Event(Record):
    """A call that matters to the training step, in evaluation order within its function."""

    __slots__ = ("kind", "node", "span", "scope", "stmt", "order", "autocast", "loops", "scaler", "scaler_text",
                 "optimizer", "loss", "scaled_name", "pending_unscale", "pending_step", "reached")
    _fields = __slots__
    _repr_fields = ("kind", "span", "order", "scaler", "scaler_text", "optimizer", "scaled_name", "pending_unscale",
                    "pending_step")

    def __init__(
        self,
        kind: EventKind,
        node: ast.Call,
        span: Span,
        scope: Scope,
        stmt: ast.stmt,
        order: int,
        autocast: RegionUse | None,
        loops: tuple[ast.AST, ...] = (),
        scaler: str | None = None,
        scaler_text: str | None = None,
        optimizer: str | None = None,
        loss: ast.expr | None = None,
        scaled_name: str | None = None,
        pending_unscale: frozenset[str] = frozenset(),
        pending_step: frozenset[str] = frozenset(),
        reached: frozenset[AutocastRegion] = frozenset(),
    ) -> None:
        self.kind = kind
        self.node = node
        self.span = span
        self.scope = scope
        self.stmt = stmt
        self.order = order
        self.autocast = autocast  # innermost active autocast use; None outside or disabled
        self.loops = loops  # enclosing loops in this function, outermost first
        self.scaler = scaler  # scaler key (see GradScalerInfo.key)
        self.scaler_text = scaler_text  # the scaler as written: "self.scaler"
        self.optimizer = optimizer  # scaler.step/unscale_ argument or optimizer.step receiver, as written
        self.loss = loss  # backward kinds: the tensor backpropagated
        # a plain `x.backward()` where `x = scaler.scale(...)` on some path: flow.py treats it as a scaled backward
        # of `scaler` on the paths where `x` holds the scaled tensor
        self.scaled_name = scaled_name
        # Filled by flow.py: scaler keys that, on some path reaching this event, ...
        self.pending_unscale = pending_unscale  # ... have scaled gradients not yet unscaled (clip events)
        self.pending_step = pending_step  # ... have a scaled backward not yet followed by scaler.step
        # Filled by flow.py: autocast regions whose outputs reach this backward's loss on some path.
        self.reached = reached


class GradScalerInfo(Record):
    """A GradScaler object, by the name it lives under.

    key      "<scope qualname>:<name>" for a variable, "<Class>.self.<attr>" for an attribute of `self`.
    api      constructor qualname, None when never constructed in this file (a parameter, an inherited attribute)
    enabled  True (omitted or literal True), False (literal), None (computed, conditional, or unknown)
    """

    __slots__ = ("key", "text", "api", "span", "enabled", "enabled_expr", "conditional", "condition", "local_to",
                 "owner_class", "escapes", "events")
    _fields = __slots__
    _repr_fields = ("key", "text", "api", "span", "enabled", "conditional", "escapes")

    def __init__(
        self,
        key: str,
        text: str,
        api: str | None = None,
        span: Span | None = None,
        enabled: bool | None = None,
        enabled_expr: ast.expr | None = None,
        conditional: bool = False,
        condition: tuple[ast.expr, bool] | None = None,
        local_to: Scope | None = None,
        owner_class: Scope | None = None,
        escapes: bool = False,
        events: list[Event] | None = None,
    ) -> None:
        self.key = key
        self.text = text
        self.api = api
        self.span = span
        self.enabled = enabled
        self.enabled_expr = enabled_expr
        self.conditional = conditional  # built in one arm of `x if c else y` / under an `if`
        # built only where this test has this truth value (one construction, in one arm): `GradScaler() if a else None`
        self.condition = condition
        self.local_to = local_to  # the function owning a local variable
        self.owner_class = owner_class  # the class of a `self.` attribute
        self.escapes = escapes  # passed as an argument to some call: the callee may step or update it
        self.events: list[Event] = [] if events is None else events

    @property
    def constructed(self) -> bool:
        return self.api is not None

    def scaled_backwards(self) -> list[Event]:
        """`scaler.scale(loss).backward()`, and `x.backward()` where `x = scaler.scale(loss)` on some path."""
        return [e for e in self.events if e.kind == "scaled_backward" or e.scaled_name is not None]

    def scaled_elsewhere(self, event: Event) -> Event | None:
        """A scaled backward of this scaler in another function than `event`'s, for messages that reason
        across functions ("scaled backward in `Trainer.backward_step`, line 212")."""
        return next((e for e in self.scaled_backwards() if e.scope is not event.scope), None)


class HalfCast(Record):
    """`model.half()`, `.bfloat16()`, `.to(torch.float16)`, `.to(dtype=...)`, `.type(...)`, `.float()`."""

    __slots__ = ("key", "text", "dtype", "span", "scope")
    _fields = __slots__
    _repr_fields = ("key", "text", "dtype", "span")

    def __init__(self, key: str, text: str, dtype: str, span: Span, scope: Scope) -> None:
        self.key = key
        self.text = text
        self.dtype = dtype  # "float16" | "bfloat16" | "float32"
        self.span = span
        self.scope = scope


class OptimizerInfo(Record):
    """An optimizer construction: torch.optim's, or one of transformers, bitsandbytes or apex
    (script.names.OTHER_OPTIMIZERS) that updates its parameters in their own dtype."""

    __slots__ = ("cls", "api", "key", "param_keys", "eps", "eps_explicit", "eps_span", "fused", "wrapped", "span",
                 "scope", "node", "float32_state")
    _fields = __slots__
    _repr_fields = ("cls", "api", "key", "param_keys", "eps", "eps_explicit", "eps_span", "fused", "wrapped", "span")

    def __init__(
        self,
        cls: str,
        api: str,
        key: str | None,
        param_keys: frozenset[str],
        eps: float | None,
        eps_explicit: bool,
        eps_span: Span | None,
        fused: bool | None,
        wrapped: bool,
        span: Span,
        scope: Scope,
        node: ast.Call,
        float32_state: bool = False,
    ) -> None:
        self.cls = cls  # "AdamW"
        self.api = api  # "torch.optim.AdamW"
        self.key = key  # the variable it is assigned to, if any
        self.param_keys = param_keys  # keys of the modules whose .parameters() it receives
        self.eps = eps  # explicit or default eps; None when written but not resolvable
        self.eps_explicit = eps_explicit
        self.eps_span = eps_span
        self.fused = fused
        self.wrapped = wrapped  # an argument of another call (FP16_Optimizer(...), a wrapper that keeps master weights)
        self.span = span
        self.scope = scope
        self.node = node
        # its state and arithmetic are float32 whatever the parameters' dtype (bitsandbytes, apex): eps cannot
        # underflow, though the 16-bit parameters still take the rounded update
        self.float32_state = float32_state


class Tf32Use(Record):
    __slots__ = ("kind", "api", "span", "branches", "version_switched")
    _fields = __slots__

    def __init__(
        self,
        kind: Literal["legacy", "new"],
        api: str,
        span: Span,
        branches: tuple[tuple[int, str], ...],
        version_switched: bool = False,
    ) -> None:
        self.kind = kind
        self.api = api  # "torch.backends.cuda.matmul.allow_tf32", "torch.set_float32_matmul_precision", ...
        self.span = span
        self.branches = branches  # (id of if/try node, arm) from the outside in: exclusive arms
        # under a version / hasattr test or a try with an ImportError-style handler
        self.version_switched = version_switched


class DeprecatedUse(Record):
    """`torch.cuda.amp.autocast(...)` and friends spelled as an attribute chain (any alias of torch)."""

    __slots__ = ("qualname", "deprecated", "node", "span", "call", "bare_decorator", "scope", "gates")
    _fields = __slots__
    _repr_fields = ("qualname", "deprecated", "span", "bare_decorator")

    def __init__(
        self,
        qualname: str,
        deprecated: Deprecated,
        node: ast.Attribute,
        span: Span,
        call: ast.Call | None = None,
        bare_decorator: bool = False,
        scope: Scope | None = None,
        gates: tuple[Gate, ...] = (),
    ) -> None:
        self.qualname = qualname
        self.deprecated = deprecated
        self.node = node
        self.span = span
        self.call = call  # when the chain is called
        self.bare_decorator = bare_decorator  # `@torch.cuda.amp.custom_fwd` without parentheses
        self.scope = scope
        # the torch version tests it stands under (a compatibility switch: script.version_tests), () for none
        self.gates = gates


class NameUse(Record):
    """A use of a name imported from a deprecated module (`autocast` after `from torch.cuda.amp import autocast`)."""

    __slots__ = ("node", "call", "bare_decorator")
    _fields = __slots__
    _repr_fields = ("bare_decorator",)

    def __init__(self, node: ast.Name, call: ast.Call | None = None, bare_decorator: bool = False) -> None:
        self.node = node
        self.call = call
        self.bare_decorator = bare_decorator


class DeprecatedImport(Record):
    """`from torch.cuda.amp import autocast as ac, GradScaler` (one per statement)."""

    __slots__ = ("node", "module", "names", "span", "uses", "gates")
    _fields = __slots__
    _repr_fields = ("module", "span")

    def __init__(
        self,
        node: ast.ImportFrom,
        module: str,
        names: list[tuple[ast.alias, Deprecated | None]],
        span: Span,
        uses: dict[str, list[NameUse]] | None = None,
        gates: tuple[Gate, ...] = (),
    ) -> None:
        self.node = node
        self.module = module  # "torch.cuda.amp"
        self.names = names  # None: a name without a torch.amp twin
        self.span = span
        self.uses: dict[str, list[NameUse]] = {} if uses is None else uses  # local name -> uses
        # the torch version tests it stands under (its uses are then not followed), () for none
        self.gates = gates


class ScriptModel(Record):
    # No __slots__: release() empties the instance's __dict__.
    _fields = ("document", "positions", "table", "resolver", "autocast_regions", "framework_regions", "scalers",
               "events", "casts", "optimizers", "tf32_uses", "tf32_writes", "deprecated_uses", "deprecated_imports",
               "frameworks", "scaler_constructions", "scaler_wrapper_calls", "statement_autocast", "autocast_scopes",
               "calls")
    _repr_fields = ("autocast_regions", "framework_regions", "scalers", "events", "casts", "optimizers", "tf32_uses",
                    "tf32_writes", "deprecated_uses", "deprecated_imports", "frameworks", "scaler_constructions",
                    "scaler_wrapper_calls")

    def __init__(
        self,
        document: Document,
        positions: Positions,
        table: ScopeTable,
        resolver: Resolver,
        autocast_regions: list[AutocastRegion] | None = None,
        framework_regions: list[AutocastRegion] | None = None,
        scalers: dict[str, GradScalerInfo] | None = None,
        events: list[Event] | None = None,
        casts: list[HalfCast] | None = None,
        optimizers: list[OptimizerInfo] | None = None,
        tf32_uses: list[Tf32Use] | None = None,
        tf32_writes: list[Tf32Write] | None = None,
        deprecated_uses: list[DeprecatedUse] | None = None,
        deprecated_imports: list[DeprecatedImport] | None = None,
        frameworks: frozenset[str] = frozenset(),
        scaler_constructions: list[Span] | None = None,
        scaler_wrapper_calls: list[Span] | None = None,
        statement_autocast: dict[int, RegionUse | None] | None = None,
        autocast_scopes: set[int] | None = None,
        calls: dict[int, set[int]] | None = None,
    ) -> None:
        self.document = document
        self.positions = positions
        self.table = table
        self.resolver = resolver
        self.autocast_regions: list[AutocastRegion] = [] if autocast_regions is None else autocast_regions
        # `accelerator.autocast()` / `fabric.autocast()`: regions whose device and dtype are the framework's setting,
        # kept apart so that readers of autocast_regions see torch's own autocast calls only
        self.framework_regions: list[AutocastRegion] = [] if framework_regions is None else framework_regions
        self.scalers: dict[str, GradScalerInfo] = {} if scalers is None else scalers
        self.events: list[Event] = [] if events is None else events
        self.casts: list[HalfCast] = [] if casts is None else casts
        self.optimizers: list[OptimizerInfo] = [] if optimizers is None else optimizers
        self.tf32_uses: list[Tf32Use] = [] if tf32_uses is None else tf32_uses
        # the TF32 state model (script/tf32.py)
        self.tf32_writes: list[Tf32Write] = [] if tf32_writes is None else tf32_writes
        self.deprecated_uses: list[DeprecatedUse] = [] if deprecated_uses is None else deprecated_uses
        self.deprecated_imports: list[DeprecatedImport] = [] if deprecated_imports is None else deprecated_imports
        # Training frameworks that own the backward pass and the loss scaler when they are used:
        # "lightning", "accelerate", "hf-trainer", "deepspeed", "apex", "mmengine", "detectron2", "fairseq", ...
        self.frameworks = frameworks
        # every GradScaler(...) call, named or not
        self.scaler_constructions: list[Span] = [] if scaler_constructions is None else scaler_constructions
        # calls of anything named *scaler*
        self.scaler_wrapper_calls: list[Span] = [] if scaler_wrapper_calls is None else scaler_wrapper_calls
        # id(statement) -> the innermost enabled autocast use it runs under; a statement outside one (or under a
        # disabled one) has no entry: read it with .get
        self.statement_autocast: dict[int, RegionUse | None] = {} if statement_autocast is None else statement_autocast
        # id(scope) with a statement under autocast
        self.autocast_scopes: set[int] = set() if autocast_scopes is None else autocast_scopes
        # id(scope) -> id(def scopes) it calls
        self.calls: dict[int, set[int]] = {} if calls is None else calls
        # (id(function), line of a cast) -> the branch around the cast that leaves its function (script.exits),
        # computed when first asked
        self._exit_branches: dict[tuple[int, int], Any] = {}
        # id(function node) -> ids of its `with` statements that run without autograd (script.grad_mode)
        self.quiet_withs: dict[int, set[int]] = {}
        # the last name of every call's callee (`f` of `f(x)` and of `self.f(x)`): a def named by none of them is
        # called by nothing in the file (Resolver.function_for resolves a call only to a def of its last name)
        self.call_names: set[str] = set()

    def release(self) -> None:
        """Break this model's reference cycles (scopes and their parents, regions and their uses, the document
        that caches the model), for a run that is done with the file: its tree is then freed at once, where the
        cyclic garbage collector would have to walk all of it first. The model is unusable afterwards."""
        for scope in self.table.by_node.values():
            scope.parent = None
            scope.functions = {}
            scope.attrs = {}
        for region in self.all_regions:
            region.uses = []
        self.document.script_model = None
        self.__dict__.clear()

    def events_of(self, *kinds: EventKind) -> list[Event]:
        return [e for e in self.events if e.kind in kinds]

    @property
    def backward_calls(self) -> list[Event]:
        return self.events_of("backward", "scaled_backward", "framework_backward")

    @property
    def framework_managed(self) -> bool:
        return bool(self.frameworks)

    @property
    def all_regions(self) -> list[AutocastRegion]:
        return self.autocast_regions + self.framework_regions

    def casts_of(self, optimizer: OptimizerInfo, dtypes: tuple[str, ...]) -> list[HalfCast]:
        """Casts to one of `dtypes` of the modules (or their submodules/parents) whose parameters `optimizer`
        receives. A module also cast back to float32 anywhere (`model.float()`) does not count: the casts
        are flow-insensitive, so the order cannot be told apart. Neither does a cast in an `if` branch that
        leaves the function without stepping or naming the optimizer (script.exits)."""
        from precisionlint.script.exits import steps_after

        restored, candidates = self._casts_by_dtype(dtypes)
        name = optimizer.key.split(":", 1)[-1].rsplit(".", 1)[-1] if optimizer.key else None
        found = []
        for cast in candidates:
            if any(_related(cast.key, r) for r in restored):
                continue
            if restored and self._same_object(cast.key, restored):
                continue  # cast back to float32 where another function holds it (`self.model.float()`)
            if not any(_related(cast.key, key) for key in optimizer.param_keys) and not self._same_object(
                    cast.key, optimizer.param_keys):
                continue
            # a cast in a branch that returns without stepping or naming the optimizer (inference, export)
            if steps_after(cast.scope.node, cast.span.line, optimizer.span.line, name, self._exit_branches):
                found.append(cast)
        return found

    def _casts_by_dtype(self, dtypes: tuple[str, ...]) -> tuple[frozenset[str], list[HalfCast]]:
        """The keys cast to float32, and the casts to one of `dtypes` in source order: asked once per optimizer
        and rule, they were two passes over every cast of the file each time (quadratic in a long script)."""
        cache = self.__dict__.setdefault("_cast_lists", {})
        key = (dtypes, len(self.casts))  # the collector appends casts; the rules ask when it is done
        found = cache.get(key)
        if found is None:
            found = cache[key] = (frozenset(c.key for c in self.casts if c.dtype == "float32"),
                                  [c for c in self.casts if c.dtype in dtypes])
        return found  # type: ignore[no-any-return]

    def _same_object(self, key: str, others: frozenset[str]) -> bool:
        """`key` names the same object as one of `others` through the file's calls and attributes
        (script.objects: `Trainer(model)` ... `self.model = model` ... `self.model.parameters()`)."""
        if not others:
            return False
        aliases = self.__dict__.get("_aliases")
        if aliases is None:
            from precisionlint.script.objects import ObjectAliases

            aliases = self.__dict__["_aliases"] = ObjectAliases(self.document.tree, self.table, self.resolver)
        canonical = aliases.canonical(key)
        return any(_related(canonical, aliases.canonical(other)) for other in others)

    def has_scaler_evidence(self) -> bool:
        """A GradScaler is constructed, some object is used as one (`x.scale(loss).backward()`,
        `x.unscale_(opt)`), or a scaler wrapper is called (`loss_scaler(loss, optimizer)`), anywhere in the file."""
        return bool(self.scalers or self.scaler_constructions or self.scaler_wrapper_calls)


def _related(a: str, b: str) -> bool:
    """The same module, or one contains the other (`model` and `model.encoder`)."""
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")

