"""The objects a script constructs (GradScalers, optimizers, modules cast to 16 bits) and the names they are
assigned to; called by the walk (calls.py classifies the constructor calls, collect.py the assignments).
"""

from __future__ import annotations

import ast

from precisionlint.script.model import HalfCast, OptimizerInfo
from precisionlint.script.names import EPS_OPTIMIZERS, PARTIAL, other_optimizer
from precisionlint.script.regions import call_arguments
from precisionlint.script.scopes import Scope
from precisionlint.script.walk_state import ScalerConstruction, WalkState
from precisionlint.sources.python_index import walk

# Positional parameters, in order, of the GradScaler constructors.
_SCALER_PARAMS = ("device", "init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled")
_LEGACY_SCALER_PARAMS = _SCALER_PARAMS[1:]
_EPS_POSITION = {"Adagrad": 5}  # Adam, AdamW, NAdam, RAdam, Adamax, SparseAdam, RMSprop: 3


class ConstructionRecorder(WalkState):
    """Records GradScaler, optimizer and cast constructions (calls.py meets the calls) and names the objects
    built when an assignment binds them (collect.py meets the assignments)."""

    def _constructs(self, call: ast.Call) -> bool:
        """Whether bind_constructions has anything to name for this call (most assigned calls build nothing)."""
        if id(call) in self.scaler_ctors:
            return True
        optimizer = self.optimizers.get(id(call))
        if optimizer is not None and optimizer.key is None:
            return True
        link: ast.expr = call
        while isinstance(link, ast.Call) and isinstance(link.func, ast.Attribute):
            if id(link) in self.cast_calls:
                return True
            link = link.func.value
        return False

    def bind_constructions(self, targets: list[ast.expr], value: ast.expr) -> None:
        """Name the objects built on the right: a GradScaler, an optimizer, a model cast to half."""
        if not (self.scaler_ctors or self.optimizers or self.cast_calls):
            return  # nothing built yet that an assignment could name (most assignments of most files)
        if not any(self._constructs(call) for call, _ in _value_calls(value)):
            return
        refs = [r for r in (self.ref(t) for t in targets) if r is not None]
        if not refs:
            return
        for call, conditional in _value_calls(value):
            ctor = self.scaler_ctors.get(id(call))
            if ctor is not None:
                ctor.targets.extend(refs)
                ctor.conditional |= conditional
                if isinstance(value, ast.IfExp) and call in (value.body, value.orelse):
                    ctor.condition = (value.test, call is value.body)  # `GradScaler() if use_fp16 else None`
            optimizer = self.optimizers.get(id(call))
            if optimizer is not None and optimizer.key is None:
                optimizer.key = refs[0][0]
            # `model = Net().to(device).half()`, `self.model = model.half()`: Module casts return the module,
            # so the assigned name holds the cast object too
            link: ast.expr = call
            while isinstance(link, ast.Call) and isinstance(link.func, ast.Attribute):
                dtype = self.cast_calls.get(id(link))
                if dtype is not None:
                    for key, text in refs:
                        self._add_cast(key, text, dtype, link)
                link = link.func.value

    def scaler_construction(self, node: ast.Call, api: str) -> None:
        order = (
            _SCALER_PARAMS
            if api in ("torch.amp.GradScaler", "torch.distributed.fsdp.ShardedGradScaler")
            else (_LEGACY_SCALER_PARAMS)
        )
        params, unpacked = call_arguments(node, order)
        enabled_expr = params.get("enabled")
        enabled: bool | None
        if enabled_expr is None:
            enabled = None if unpacked else True
        else:
            enabled = self.resolver.truth(enabled_expr, self.scope)
        # `if __name__ == "__main__":` is how a script runs at all, not a condition on the scaler
        conditional = self.in_conditional > 0 or any(
            scope is self.scope and arm in ("body", "orelse") and node_id not in self.main_guards
            for node_id, arm, scope in self.branches
        )
        ctor = ScalerConstruction(api, node, self.scope, enabled, enabled_expr, conditional)
        arms = [(node_id, arm) for node_id, arm, scope in self.branches if scope is self.scope]
        if arms and arms[-1][0] in self.branch_tests and arms[-1][1] in ("body", "orelse"):
            ctor.condition = (self.branch_tests[arms[-1][0]], arms[-1][1] == "body")  # `if use_fp16: scaler = ...`
        self.scaler_ctors[id(node)] = ctor
        self.model.scaler_constructions.append(self.positions.span(node))

    def optimizer_construction(self, node: ast.Call, api: str) -> None:
        cls = api.rsplit(".", 1)[1]
        other = other_optimizer(api) if not api.startswith("torch.optim.") else None
        if other is not None and any(k.arg in other.master_keywords or k.arg is None for k in node.keywords):
            return  # `FusedAdam(..., master_weights=True)`: float32 master weights of its own (or hidden in **kw)
        default_eps = EPS_OPTIMIZERS.get(cls) if other is None else other.eps
        params, _ = call_arguments(node, ("params",))
        param_expr = params.get("params")
        eps_expr = params.get("eps")
        if eps_expr is None and (cls in EPS_OPTIMIZERS if other is None else other.eps is not None):
            position = _EPS_POSITION.get(cls, 3) if other is None else 3
            if len(node.args) > position and not any(isinstance(a, ast.Starred) for a in node.args[: position + 1]):
                eps_expr = node.args[position]
        eps: float | None = None
        if eps_expr is not None:
            value = self.resolver.value(eps_expr, self.scope)
            try:  # an integer too large for a float (1 followed by 400 zeros) is no eps a rule can judge
                eps = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
            except OverflowError:
                eps = None
        elif not any(k.arg is None for k in node.keywords):
            eps = default_eps
        fused_expr = params.get("fused")
        parent = self.call_stack[-1] if self.call_stack else None
        wrapped = (
            parent is not None
            and (node in parent.args or any(k.value is node for k in parent.keywords))
            and self.q(parent.func) not in PARTIAL
        )
        info = OptimizerInfo(
            cls=cls,
            api=api,
            key=None,
            param_keys=frozenset(self._param_keys(param_expr, self.scope, 0))
            if param_expr is not None
            else frozenset(),
            eps=eps,
            eps_explicit=eps_expr is not None,
            eps_span=self.positions.span(eps_expr) if eps_expr is not None else None,
            fused=self.resolver.truth(fused_expr, self.scope) if fused_expr is not None else None,
            wrapped=wrapped,
            span=self.positions.span(node),
            scope=self.scope,
            node=node,
            float32_state=other is not None and other.float32_state,
        )
        self.optimizers[id(node)] = info
        self.model.optimizers.append(info)

    def _param_keys(self, expr: ast.expr, scope: Scope, depth: int,
                    memo: dict[tuple[int, str, int], set[str]] | None = None) -> set[str]:
        """Keys of the modules whose parameters an optimizer receives, following local variables
        (nanoGPT: `param_dict = {pn: p for pn, p in self.named_parameters()}` ... `optim_groups`).

        A name's values are the same wherever it is read in one scope, so each (scope, name, depth) is followed
        once per optimizer (`memo`): without it, a module that rebinds its names to each other (`m2 = model`,
        `model = m2`, repeated) was followed through every value of every value, three levels deep, which
        grew as the cube of the file (a 36 kB file took 8 s)."""
        memo = {} if memo is None else memo
        keys: set[str] = set()
        for node in walk(expr):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in ("parameters", "named_parameters"):
                    keys.update(key for key, _ in self.keys_of(node.func.value, scope))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and depth < 3:
                key = (id(scope), node.id, depth)
                found = memo.get(key)
                if found is None:
                    found = memo[key] = set()  # filled below; depth grows, so the key cannot recur meanwhile
                    for value, owner in self.resolver.bound_values(node, scope):
                        if value is not None:
                            found |= self._param_keys(value, owner, depth + 1, memo)
                keys |= found
        return keys

    def cast_dtype(self, node: ast.Call) -> str | None:
        """The floating dtype of `.to(...)` / `.type(...)`, when one is given and resolvable."""
        candidates = [a for a in node.args if not isinstance(a, ast.Starred)]
        candidates += [k.value for k in node.keywords if k.arg in ("dtype", "dst_type")]
        for expr in candidates:
            dtype = self.resolver.dtype(expr, self.scope)
            if dtype in ("float16", "bfloat16", "float32"):
                return dtype
        return None

    def cast(self, node: ast.Call, receiver: ast.expr, dtype: str) -> None:
        base = receiver
        # `model.cuda().half()`, `model.to(device).half()`: the object cast is the chain's root
        while (
            isinstance(base, ast.Call)
            and isinstance(base.func, ast.Attribute)
            and base.func.attr
            in (
                "cuda",
                "cpu",
                "to",
                "eval",
                "train",
                "requires_grad_",
                "half",
                "bfloat16",
                "float",
            )
        ):
            base = base.func.value
        self.cast_calls[id(node)] = dtype
        for key, text in self.keys_of(base):
            self._add_cast(key, text, dtype, node)

    def _add_cast(self, key: str, text: str, dtype: str, node: ast.Call) -> None:
        self.model.casts.append(HalfCast(key, text, dtype, self.positions.span(node), self.scope))


def _value_calls(value: ast.expr, conditional: bool = False) -> list[tuple[ast.Call, bool]]:
    """The calls whose result may be the assigned value: `X(...)`, either arm of `a if c else b`, `a or b`."""
    if isinstance(value, ast.Call):
        return [(value, conditional)]
    if isinstance(value, ast.IfExp):
        return _value_calls(value.body, True) + _value_calls(value.orelse, True)
    if isinstance(value, ast.BoolOp):
        found: list[tuple[ast.Call, bool]] = []
        for operand in value.values:
            found += _value_calls(operand, True)
        return found
    return []

