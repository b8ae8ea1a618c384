"""Autocast regions: what an autocast call resolves to, and which contexts a `with` (or decorator) enters.

A region is created once per autocast call (memoized by node), whether the walk meets the call itself or
reaches it through a variable (`ctx = torch.autocast(...)` ... `with ctx:`), a factory
(`amp_autocast = partial(torch.autocast, ...)` ... `with amp_autocast():`), a conditional
(`nullcontext() if cpu else torch.amp.autocast(...)`) or a function that returns one.
"""

from __future__ import annotations

import ast

from precisionlint.script.model import AutocastRegion, ScriptModel
from precisionlint.script.names import AUTOCAST_APIS, DEVICE_TYPE_AUTOCAST, NULL_CONTEXTS, PARTIAL, dotted
from precisionlint.script.scopes import Scope
from precisionlint.script.values import Device

# Positional parameters, in order: torch.autocast / torch.amp.autocast, and the deprecated device spellings.
_AUTOCAST_PARAMS = ("device_type", "dtype", "enabled", "cache_enabled")
_LEGACY_AUTOCAST_PARAMS = ("enabled", "dtype", "cache_enabled")  # torch.cuda.amp / torch.cpu.amp .autocast
_IMPLIED_DEVICE = {"torch.cuda.amp.autocast": "cuda", "torch.cpu.amp.autocast": "cpu"}
# torch.get_autocast_dtype defaults; other devices are left unknown rather than guessed.
_DEFAULT_DTYPE = {"cuda": "float16", "cpu": "bfloat16"}
_MAX_DEPTH = 6

# What entering a context may mean: an autocast region, or one of these.
NULL = "null"  # nullcontext(), suppress(): no autocast
UNKNOWN_CONTEXT = "unknown"
Context = AutocastRegion | str


def call_arguments(node: ast.Call, order: tuple[str, ...], skip: int = 0) -> tuple[dict[str, ast.expr], bool]:
    """A call's arguments by parameter name (`order` names the positional ones), and whether `*args` or
    `**kwargs` may hide others."""
    params: dict[str, ast.expr] = {}
    unpacked = False
    for index, arg in enumerate(node.args[skip:]):
        if isinstance(arg, ast.Starred):
            unpacked = True
            break
        if index < len(order):
            params[order[index]] = arg
    for keyword in node.keywords:
        if keyword.arg is None:
            unpacked = True
        else:
            params[keyword.arg] = keyword.value
    return params, unpacked


class RegionFinder:
    def __init__(self, model: ScriptModel) -> None:
        self.model = model
        self.resolver = model.resolver
        self.positions = model.positions
        # (id(call), api): one call may stand for two APIs (`ac = cuda_ac if gpu else cpu_ac; with ac():`)
        self.by_call: dict[tuple[int, str], AutocastRegion] = {}

    def _q(self, expr: ast.expr, scope: Scope) -> str | None:
        return self.resolver.qualname(expr, scope)

    def _add(self, node: ast.Call, region: AutocastRegion, framework: bool = False) -> AutocastRegion:
        self.by_call[(id(node), region.api)] = region
        (self.model.framework_regions if framework else self.model.autocast_regions).append(region)
        return region

    def region(
        self, node: ast.Call, api: str, scope: Scope, partial: bool, in_conditional: bool = False
    ) -> AutocastRegion:
        """The region of an autocast call (or of `functools.partial(autocast, ...)`, whose arguments follow
        the callee), with device, dtype and enabled resolved where the script makes them static."""
        known = self.by_call.get((id(node), api))
        if known is not None:
            return known
        order = _AUTOCAST_PARAMS if api in DEVICE_TYPE_AUTOCAST else _LEGACY_AUTOCAST_PARAMS
        params, unpacked = call_arguments(node, order, skip=1 if partial else 0)
        device_expr = params.get("device_type")
        device: str | None = _IMPLIED_DEVICE.get(api)
        if device is None and device_expr is not None:
            value = self.resolver.value(device_expr, scope)
            if isinstance(value, Device):
                device = value.type
            elif isinstance(value, str):
                device = value.split(":", 1)[0]
        dtype_expr = params.get("dtype")
        possible: frozenset[str] = frozenset()
        if dtype_expr is not None:
            dtype = self.resolver.dtype(dtype_expr, scope)
            possible = self.resolver.possible_dtypes(dtype_expr, scope)
            if dtype is None:
                dtype, possible = self._reached_dtypes(dtype_expr, scope, possible)
        else:
            dtype = None if unpacked or device is None else _DEFAULT_DTYPE.get(device)
        enabled_expr = params.get("enabled")
        enabled: bool | None
        if enabled_expr is None:
            enabled = None if unpacked else True
        else:
            enabled = self.resolver.truth(enabled_expr, scope)
        region = AutocastRegion(
            api=api,
            device=device,
            dtype=dtype,
            dtype_explicit=dtype_expr is not None,
            enabled=enabled,
            span=self.positions.span(node),
            dtype_span=self.positions.span(dtype_expr) if dtype_expr is not None else None,
            device_explicit=api in _IMPLIED_DEVICE or device_expr is not None,
            unpacked=unpacked,
            form="partial" if partial else "call",
            call=node,
            scope=scope,
            in_conditional_expression=in_conditional,
            dtype_expr=dtype_expr,
            enabled_expr=enabled_expr,
            possible_dtypes=possible,
        )
        return self._add(node, region)

    def _reached_dtypes(self, expr: ast.expr, scope: Scope,
                        possible: frozenset[str]) -> tuple[str | None, frozenset[str]]:
        """A dtype the value layer follows where the Resolver does not (a helper's return, an argparse choice
        through a table, a parameter's callers): the dtype when it is the one on every path, and every dtype
        the expression may take."""
        from precisionlint.script.values import Dtype
        from precisionlint.values.settings import document_finder

        finder = document_finder(self.model.document)
        if finder is None:
            return None, possible
        found = finder.candidates(expr, scope)
        from precisionlint.values.candidate import ARGUMENT, PARAMETER

        if any(c.kind in (PARAMETER, ARGUMENT) for c in found.items):
            # a parameter's default or a caller's argument: the dtype a library helper's caller picks
            # (flash-attention's benchmark_forward_backward(amp_dtype=torch.float16) times a backward, it trains
            # nothing): not a dtype this file runs
            return None, possible
        dtypes = frozenset(c.value.name for c in found.items if isinstance(c.value, Dtype))
        if found.complete and found.items and len(dtypes) == len({c.value for c in found.items}):
            # every way of choosing the dtype is known: exactly these (a table's entries that an option's
            # choices can pick, not every entry)
            if len(dtypes) == 1 and len(found.items) == 1 and found.items[0].every_path:
                return next(iter(dtypes)), dtypes
            return None, dtypes
        return None, possible | dtypes

    def framework_region(self, node: ast.Call, framework: str, scope: Scope) -> AutocastRegion:
        """`accelerator.autocast()` / `fabric.autocast()`: the dtype comes from the framework's precision
        setting, which the script does not show; device and dtype stay unknown."""
        api = "accelerate.Accelerator.autocast" if framework == "accelerate" else "lightning.Fabric.autocast"
        known = self.by_call.get((id(node), api))
        if known is not None:
            return known
        region = AutocastRegion(
            api=api,
            device=None,
            dtype=None,
            dtype_explicit=False,
            enabled=None,
            span=self.positions.span(node),
            dtype_span=None,
            device_explicit=True,
            unpacked=False,
            form="call",
            call=node,
            scope=scope,
        )
        return self._add(node, region, framework=True)

    def partial_of_autocast(self, node: ast.Call, scope: Scope) -> str | None:
        """The autocast API of `functools.partial(torch.autocast, ...)`, else None."""
        if self._q(node.func, scope) in PARTIAL and node.args:
            api = self._q(node.args[0], scope)
            if api in AUTOCAST_APIS:
                return api
        return None

    def contexts(self, expr: ast.expr, scope: Scope, depth: int = 0) -> list[Context]:
        """What entering `expr` as a context manager may mean: autocast regions, NULL or UNKNOWN_CONTEXT."""
        if depth > _MAX_DEPTH:
            return [UNKNOWN_CONTEXT]
        if isinstance(expr, ast.IfExp):
            found = self.contexts(expr.body, scope, depth + 1) + self.contexts(expr.orelse, scope, depth + 1)
            _mark_conditional(found)
            return found
        if isinstance(expr, ast.Call):
            return self._call_contexts(expr, scope, depth)
        values = self.resolver.bound_values(expr, scope)
        if not values:
            return [UNKNOWN_CONTEXT]
        found = []
        for value, owner in values:
            found += [UNKNOWN_CONTEXT] if value is None else self.contexts(value, owner, depth + 1)
        return found

    def _call_contexts(self, expr: ast.Call, scope: Scope, depth: int) -> list[Context]:
        name = self._q(expr.func, scope)
        if name in AUTOCAST_APIS:
            return [self.region(expr, name, scope, partial=False)]
        api = self.partial_of_autocast(expr, scope)
        if api is not None:
            return [self.region(expr, api, scope, partial=True)]
        if name in NULL_CONTEXTS:
            return [NULL]
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "autocast":
            framework = self.framework_of(expr.func.value, scope)
            if framework is not None:
                return [self.framework_region(expr, framework, scope)]
        factories = self._factories(expr.func, expr, scope)
        if factories:
            return factories
        function = self.resolver.function_for(expr.func, scope)
        if function is not None and function.returns:
            found: list[Context] = []
            for returned in function.returns:
                found += self.contexts(returned, function, depth + 1)
            return found
        return [UNKNOWN_CONTEXT]

    def _factories(self, func: ast.expr, call: ast.Call, scope: Scope) -> list[Context]:
        """`amp_ctx(...)` where amp_ctx is bound to autocast itself, a partial of it, or a null context."""
        values = self.resolver.bound_values(func, scope)
        if not values:
            return []
        found: list[Context] = []
        pending = list(values)
        while pending:
            value, owner = pending.pop(0)
            if isinstance(value, ast.IfExp):
                pending += [(value.body, owner), (value.orelse, owner)]
            elif isinstance(value, (ast.Name, ast.Attribute)):
                name = self._q(value, owner)
                if name in AUTOCAST_APIS:
                    found.append(self.region(call, name, scope, partial=False))
                else:
                    found.append(NULL if name in NULL_CONTEXTS else UNKNOWN_CONTEXT)
            elif isinstance(value, ast.Call) and (api := self.partial_of_autocast(value, owner)) is not None:
                found.append(self.region(value, api, owner, partial=True))
            else:
                found.append(UNKNOWN_CONTEXT)
        if len(values) > 1 or any(isinstance(v, ast.IfExp) for v, _ in values):
            _mark_conditional(found)
        return found if any(isinstance(item, AutocastRegion) for item in found) else []

    def framework_of(self, receiver: ast.expr, scope: Scope) -> str | None:
        """ "accelerate" / "lightning" for `accelerator` / `fabric` objects, by construction or by name."""
        for value, owner in self.resolver.bound_values(receiver, scope):
            if isinstance(value, ast.Call):
                callee = self._q(value.func, owner) or ""
                if callee.startswith("accelerate."):
                    return "accelerate"
                if callee.startswith(("lightning.", "pytorch_lightning.")):
                    return "lightning"
        text = (dotted(receiver) or "").rsplit(".", 1)[-1].lower()
        if "accelerator" in text:
            return "accelerate"
        if "fabric" in text:
            return "lightning"
        return None


def _mark_conditional(found: list[Context]) -> None:
    for item in found:
        if isinstance(item, AutocastRegion):
            item.in_conditional_expression = True
