"""What each call of the script is: an autocast region, a GradScaler, an optimizer or a cast (handed to
constructions.py), an event of the training step (backward, the scaler's protocol, clipping, optimizer steps,
BCE), a TF32 setting, or a deprecated AMP spelling. Calls whose kind needs the whole file (`x.step()`) are kept
as pending calls for collect.py to classify after the walk.
"""

from __future__ import annotations

import ast

from precisionlint.core.patterns import lazy_pattern
from precisionlint.script.constructions import ConstructionRecorder
from precisionlint.script.model import DeprecatedUse, NameUse, Tf32Use
from precisionlint.script.names import (
    AUTOCAST_APIS,
    AUTOGRAD_BACKWARD,
    BCE_FUNCTIONS,
    BCE_MODULES,
    CLIP_APIS,
    DEPRECATED,
    OTHER_OPTIMIZER_NAMES,
    PARTIAL,
    SCALER_APIS,
    TORCH_OPTIMIZERS,
    dotted,
    other_optimizer,
)
from precisionlint.script.receivers import is_framework_receiver
from precisionlint.script.walk_state import PendingCall

# Wrappers that keep float32 master weights of the optimizer they take (apex's and Megatron's FP16_Optimizer,
# MixedPrecisionOptimizer): an optimizer handed to one later (`optimizer = FP16_Optimizer(optimizer)`) is wrapped.
_MASTER_WRAPPER = lazy_pattern(globals(), "_MASTER_WRAPPER", r"(?i)(?:fp16|half|mixed_?precision|master)\w*optimizer$")
# The packages whose optimizers script.names.other_optimizer knows (transformers, bitsandbytes, apex).
_OTHER_OPTIMIZER_PACKAGES = ("transformers.", "bitsandbytes.optim", "apex.optimizers.")

_LEGACY_TF32 = frozenset(
    {
        "torch.backends.cuda.matmul.allow_tf32",
        "torch.backends.cudnn.allow_tf32",
        "torch.set_float32_matmul_precision",
        "torch.get_float32_matmul_precision",
    }
)

# The last part of every qualified name visit_Attribute looks for. canonical() keeps an attribute's last part
# (it renames only `torch.half`, `torch.float` and `torch.double`, none of these), so an attribute whose own
# name is not among them cannot resolve to one: most attributes (`self.encoder`, `x.shape`) are not resolved.
_ATTRIBUTE_ENDS = frozenset({name.rsplit(".", 1)[1] for name in (*DEPRECATED, *_LEGACY_TF32)} | {"fp32_precision"})
# The same for the callees _classify compares with: a method call (`self.encoder(x)`, `x.view(...)`) whose name
# is none of these, nor a class of torch.optim, is no such API.
_CALL_ENDS = frozenset(
    name.rsplit(".", 1)[1]
    for name in (*AUTOCAST_APIS, *SCALER_APIS, *CLIP_APIS, *BCE_FUNCTIONS, AUTOGRAD_BACKWARD, *_LEGACY_TF32, *PARTIAL)
) | TORCH_OPTIMIZERS | OTHER_OPTIMIZER_NAMES | {"AdamW8bit", "PagedAdamW", "PagedAdamW8bit", "PagedAdamW32bit",
                                          "AdamW32bit", "Adam8bit", "Adam32bit", "PagedAdam", "PagedAdam8bit",
                                          "PagedAdam32bit", "Lion8bit", "Lion32bit", "PagedLion", "PagedLion8bit",
                                          "PagedLion32bit", "SGD8bit", "SGD32bit", "RMSprop8bit", "RMSprop32bit",
                                          "Adagrad8bit", "Adagrad32bit", "LAMB8bit", "LAMB32bit", "LARS8bit",
                                          "LARS32bit", "AdEMAMix8bit", "AdEMAMix32bit"}


class CallRecorder(ConstructionRecorder):
    """Classifies each call after its arguments are visited (evaluation order), and records the TF32 settings
    and deprecated AMP spellings met in attributes and names."""

    # -- TF32 and deprecated spellings ----------------------------------------------------------------------
    def tf32_write(self, target: ast.expr, value: ast.expr | None) -> None:
        """`torch.backends.cuda.matmul.allow_tf32 = True`, `...fp32_precision = "ieee"`, or (target a call's
        callee) `torch.set_float32_matmul_precision("high")`: one entry of the TF32 state model."""
        from precisionlint.script import tf32

        name = self.q(target)
        if name is None:
            return
        kind = ("legacy", "matmul") if name == tf32.SETTER else tf32.describe(name)
        if kind is None:
            return
        resolved = self.resolver.value(value, self.scope) if value is not None else None
        where: ast.AST = self.func_calls[id(target)] if name == tf32.SETTER else target
        gates = tuple(
            (self.branch_tests[node_id], arm == "body")
            for node_id, arm, scope in self.branches
            if scope is self.scope and node_id in self.branch_tests and arm in ("body", "orelse")
        )
        self.model.tf32_writes.append(
            tf32.Tf32Write(
                api=name,
                family=kind[0],  # type: ignore[arg-type]
                backend=kind[1],
                value=resolved,
                enables=tf32.enables(name, resolved),
                span=self.positions.span(where),
                text=self.positions.segment(where) if name == tf32.SETTER else
                f"{self.positions.segment(target)} = {self.positions.segment(value) if value is not None else '...'}",
                scope=self.scope,
                gates=gates,
            )
        )

    def visit_Attribute(self, node: ast.Attribute) -> None:
        name = self.q(node) if node.attr in _ATTRIBUTE_ENDS else None
        if name is not None:
            deprecated = DEPRECATED.get(name)
            if deprecated is not None and not self.opaque and isinstance(node.ctx, ast.Load):
                self.model.deprecated_uses.append(
                    DeprecatedUse(
                        qualname=name,
                        deprecated=deprecated,
                        node=node,
                        span=self.positions.span(node),
                        call=self.func_calls.get(id(node)),
                        bare_decorator=id(node) in self.bare_decorators,
                        scope=self.scope,
                        gates=tuple(self.gates),
                    )
                )
            self._tf32(node, name)
        # generic_visit for an attribute's one child, inline: a third of the collector's visits are attributes,
        # most of them `self.x` or `x.shape`, whose value is a name it does not look at
        value = node.value
        kind = type(value)
        if kind in self._inert or (kind is ast.Name and self._names is not None and value.id not in self._names):  # type: ignore[attr-defined]
            return
        self.visit(value)

    def _tf32(self, node: ast.Attribute, name: str) -> None:
        kind = None
        if name in _LEGACY_TF32 and id(node) not in self.func_calls:  # calls are recorded in visit_Call
            kind = "legacy"
        elif (
            isinstance(node.ctx, ast.Store) and name.startswith("torch.backends.") and name.endswith(".fp32_precision")
        ):
            kind = "new"
        if kind is not None:
            self._tf32_use(kind, name, node)

    def _tf32_use(self, kind: str, name: str, node: ast.AST) -> None:
        branches = tuple((node_id, arm) for node_id, arm, _ in self.branches)
        self.model.tf32_uses.append(
            Tf32Use(kind, name, self.positions.span(node), branches, self.switched > 0)  # type: ignore[arg-type]
        )

    def visit_Name(self, node: ast.Name) -> None:
        if not self.deprecated_names or not isinstance(node.ctx, ast.Load):
            return
        owner = self.table.lookup(self.scope, node.id) or self.table.module
        imported = self.deprecated_names.get((id(owner), node.id))
        if imported is not None:
            name = self.q(node)
            if name is not None and name in DEPRECATED:
                imported.uses.setdefault(node.id, []).append(
                    NameUse(node, self.func_calls.get(id(node)), id(node) in self.bare_decorators)
                )

    # -- calls ----------------------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        self.func_calls[id(func)] = node
        kind = type(func)
        last = func.attr if kind is ast.Attribute else func.id if kind is ast.Name else None  # type: ignore[attr-defined]
        scope = self.frame.scope
        wraps = False
        if last is not None:
            model = self.model
            model.call_names.add(last)
            if "scaler" in last.lower() and dotted(func) is not None:
                # timm's NativeScaler, `loss_scaler(loss, optimizer, clip_grad=...)`: a GradScaler behind a wrapper
                model.scaler_wrapper_calls.append(self.positions.span(node))
            called = self.resolver.function_for(func, scope)  # a callee without a name is no def of the file
            if called is not None:
                model.calls.setdefault(id(scope), set()).add(id(called))
            # The pattern ends in "optimizer": an ASCII name that does not is not searched (nor the pattern
            # compiled, at every start); other names are left to the pattern's own case folding.
            wraps = (not last.isascii() or last[-9:].lower() == "optimizer") \
                and _MASTER_WRAPPER.search(last) is not None
        self.call_stack.append(node)
        # generic_visit inline (the callee, the arguments, the keywords' values, in that order), with its filter;
        # each argument that names a variable is noted on the way (finish() reads them as sets: order is free)
        visit, inert, names, passed = self.visit, self._inert, self._names, self.passed
        Name, Attribute = ast.Name, ast.Attribute
        kind = type(func)
        if kind is Attribute and func.attr not in _ATTRIBUTE_ENDS:  # type: ignore[attr-defined]
            # visit_Attribute inline for a method's callee that resolves to nothing it records: its value
            value = func.value  # type: ignore[attr-defined]
            kind = type(value)
            if kind not in inert and not (kind is Name and names is not None and value.id not in names):
                visit(value)
        elif kind not in inert and not (kind is Name and names is not None and func.id not in names):  # type: ignore[attr-defined]
            visit(func)
        keywords = node.keywords
        for child in (*node.args, *[keyword.value for keyword in keywords]) if keywords else node.args:
            kind = type(child)
            if kind is Name or kind is Attribute:
                passed.append((child, scope))
                if wraps:
                    self.wrapped_later.append((child, scope))
                if kind is Name and (kind in inert or names is not None and child.id not in names):  # type: ignore[attr-defined]
                    continue
            elif kind in inert:
                continue
            visit(child)
        self.call_stack.pop()
        self._classify(node)

    def _classify(self, node: ast.Call) -> None:
        func = node.func
        # A method's qualified name ends in its own name (see _CALL_ENDS): most are not resolved at all.
        known = type(func) is not ast.Attribute or func.attr in _CALL_ENDS  # type: ignore[attr-defined]
        name = self.resolver.qualname(func, self.frame.scope) if known else None
        in_conditional = self.in_conditional > 0
        if name in AUTOCAST_APIS:
            self.finder.region(node, name, self.scope, partial=False, in_conditional=in_conditional)
        elif name in PARTIAL and (api := self.finder.partial_of_autocast(node, self.scope)) is not None:
            self.finder.region(node, api, self.scope, partial=True, in_conditional=in_conditional)
        elif name in SCALER_APIS:
            self.scaler_construction(node, name)
        elif name in CLIP_APIS:
            self.event("clip", node)
        elif name in BCE_FUNCTIONS:
            self.event("bce", node)
        elif name == AUTOGRAD_BACKWARD:
            self.event("backward", node, loss=node.args[0] if node.args else None)
        elif name in _LEGACY_TF32:
            self._tf32_use("legacy", name, node)
            if name == "torch.set_float32_matmul_precision":
                argument = node.args[0] if node.args else next(
                    (k.value for k in node.keywords if k.arg == "precision"), None
                )
                self.tf32_write(func, argument)
        elif name is not None and name.startswith("torch.optim.") and name[12:] in TORCH_OPTIMIZERS:
            self.optimizer_construction(node, name)
        elif name is not None and name.startswith(_OTHER_OPTIMIZER_PACKAGES) and other_optimizer(name) is not None:
            self.optimizer_construction(node, name)
        elif self.may_call_bce_module and self._calls_bce_module(func):
            self.event("bce", node)
        elif isinstance(func, ast.Attribute):
            self._method(node, func)

    def _method(self, node: ast.Call, func: ast.Attribute) -> None:
        attr, receiver = func.attr, func.value
        if attr == "backward":
            self._backward(node, receiver)
        elif attr == "manual_backward":
            self.event("framework_backward", node, loss=node.args[0] if node.args else None)
        elif attr == "unscale_":
            ref = self.ref(receiver)
            if ref is not None:
                self.scale_keys.add(ref[0])
                self._note_stepped(node)
                self.event("unscale", node, scaler=ref[0], scaler_text=ref[1], optimizer=self.optimizer_text(node))
        elif attr in ("step", "update", "clip_grad_norm_"):
            self.candidates.append(
                PendingCall(
                    attr,
                    node,
                    receiver,
                    self.scope,
                    self.stmt,
                    self.next_order(),
                    self.innermost(),
                    tuple(self.frame.loops),
                )
            )
            if attr == "step":
                self._note_stepped(node)
        elif attr in ("half", "bfloat16", "float") and not node.args and not node.keywords:
            self.cast(node, receiver, {"half": "float16", "bfloat16": "bfloat16", "float": "float32"}[attr])
        elif attr in ("to", "type"):
            dtype = self.cast_dtype(node)
            if dtype is not None:
                self.cast(node, receiver, dtype)

    def _backward(self, node: ast.Call, receiver: ast.expr) -> None:
        if isinstance(receiver, ast.Call):
            if isinstance(receiver.func, ast.Attribute) and receiver.func.attr == "scale" and receiver.args:
                self._scaled_backward(node, receiver)
                return
            if isinstance(receiver.func, ast.Name) and receiver.func.id == "super":
                return  # an autograd.Function / module overriding backward and delegating
        if is_framework_receiver(self.resolver, receiver, self.scope, node):
            self.event("framework_backward", node, loss=node.args[0] if node.args else None)
            return
        # `loss = scaler.scale(loss)` ... `loss.backward()`: whether `loss` holds the scaled tensor when backward
        # runs depends on the path (flow.py decides); the event carries the scaler it may belong to.
        if isinstance(receiver, ast.Name):
            for value, _owner in self.resolver.bound_values(receiver, self.scope):
                if _is_scale_call(value):
                    assert isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
                    ref = self.ref(value.func.value)
                    if ref is not None:
                        self.scale_keys.add(ref[0])
                        self.event(
                            "backward", node, loss=receiver, scaler=ref[0], scaler_text=ref[1], scaled_name=receiver.id
                        )
                        return
        self.event("backward", node, loss=receiver)

    def _scaled_backward(self, node: ast.Call, scale_call: ast.Call) -> None:
        assert isinstance(scale_call.func, ast.Attribute)
        ref = self.ref(scale_call.func.value)
        if ref is None:
            self.event("backward", node, loss=scale_call.args[0])
            return
        self.scale_keys.add(ref[0])
        self.event("scaled_backward", node, scaler=ref[0], scaler_text=ref[1], loss=scale_call.args[0])

    def _note_stepped(self, node: ast.Call) -> None:
        if node.args:
            ref = self.ref(node.args[0])
            if ref is not None:
                self.stepped_keys.add(ref[0])

    def optimizer_text(self, node: ast.Call) -> str | None:
        """The optimizer a scaler call takes, as written: its first argument or its `optimizer=`."""
        if node.args and not isinstance(node.args[0], ast.Starred):
            return self.positions.segment(node.args[0])
        for keyword in node.keywords:
            if keyword.arg == "optimizer":
                return self.positions.segment(keyword.value)
        return None

    def _calls_bce_module(self, func: ast.expr) -> bool:
        if isinstance(func, ast.Call):
            return self.q(func.func) in BCE_MODULES
        for value, owner in self.resolver.bound_values(func, self.scope):
            if isinstance(value, ast.Call) and self.q(value.func, owner) in BCE_MODULES:
                return True
        return False


def _is_scale_call(value: ast.expr | None) -> bool:
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "scale"
        and len(value.args) == 1
    )

