"""Qualified names of the APIs the script rules care about, and the import table that resolves local aliases.

`import torch as th; th.cuda.amp.autocast` and `from torch.cuda.amp import autocast as ac; ac` both resolve
to "torch.cuda.amp.autocast". Submodule spellings (`torch.amp.autocast_mode.autocast`) are folded into the
public name so every rule compares against one spelling.
"""

from __future__ import annotations

import ast

from precisionlint.core.patterns import lazy_pattern
from precisionlint.core.records import FrozenRecord, ValueRecord

AUTOCAST_APIS = frozenset({"torch.autocast", "torch.amp.autocast", "torch.cuda.amp.autocast", "torch.cpu.amp.autocast"})
# The two spellings that take device_type as their first, required argument.
DEVICE_TYPE_AUTOCAST = frozenset({"torch.autocast", "torch.amp.autocast"})
SCALER_APIS = frozenset(
    {
        "torch.amp.GradScaler",
        "torch.cuda.amp.GradScaler",
        "torch.cpu.amp.GradScaler",
        "torch.distributed.fsdp.ShardedGradScaler",
    }
)
CLIP_APIS = frozenset(
    {
        "torch.nn.utils.clip_grad_norm_",
        "torch.nn.utils.clip_grad_value_",
        "torch.nn.utils.clip_grad_norm",  # the old, deprecated spelling: clips in place all the same
        "torch.nn.utils.clip_grads_with_norm_",
    }
)
BCE_FUNCTIONS = frozenset({"torch.nn.functional.binary_cross_entropy"})
BCE_MODULES = frozenset({"torch.nn.BCELoss"})
PARTIAL = frozenset({"functools.partial"})
NULL_CONTEXTS = frozenset({"contextlib.nullcontext", "contextlib.suppress", "contextlib.ExitStack"})
AUTOGRAD_BACKWARD = "torch.autograd.backward"

DTYPES = {
    "torch.float16": "float16",
    "torch.bfloat16": "bfloat16",
    "torch.float32": "float32",
    "torch.float64": "float64",
}

# The optimizer classes of torch.optim (its __all__ in torch 2.13, without the `Optimizer` base class, which is
# never constructed itself): the training-step model records a construction of one of these.
TORCH_OPTIMIZERS = frozenset(
    {"ASGD", "Adadelta", "Adafactor", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "Muon", "NAdam", "RAdam",
     "RMSprop", "Rprop", "SGD", "SparseAdam"}
)

# Optimizers of torch.optim whose update divides by (something + eps) computed in the parameter dtype.
# Default eps per class, checked against torch/optim/*.py.
EPS_OPTIMIZERS = {
    "Adam": 1e-8,
    "AdamW": 1e-8,
    "NAdam": 1e-8,
    "RAdam": 1e-8,
    "Adamax": 1e-8,
    "SparseAdam": 1e-8,
    "Adagrad": 1e-10,
    "RMSprop": 1e-8,
}



class OtherOptimizer(FrozenRecord):
    """An optimizer of another library that updates the parameters it is given in place, in their own dtype."""

    __slots__ = ("eps", "float32_state", "master_keywords")
    _fields = __slots__

    def __init__(self, eps: float | None, float32_state: bool, master_keywords: tuple[str, ...] = ()) -> None:
        self.eps = eps  # the default eps, where an eps rule may judge it (checked against the library's source)
        # its state and the update's arithmetic are float32 whatever the parameters' dtype: no eps underflow
        self.float32_state = float32_state
        self.master_keywords = master_keywords  # keywords that give it float32 master weights of its own


# Transformers' own AdamW (transformers/optimization.py before it was removed, huggingface/transformers#36177):
# `AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0, correct_bias=True)`, its state
# `torch.zeros_like(p)` and its `denom = exp_avg_sq.sqrt().add_(eps)` in the parameters' dtype.
_TRANSFORMERS_ADAMW = OtherOptimizer(1e-6, False)
# bitsandbytes.optim: `AdamW8bit(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, ...)`; its CUDA
# kernels keep the state in float32 (or 8-bit blocks with float32 scales) and compute the update in float32, then
# write it into the 16-bit parameter (bitsandbytes/optim/adamw.py, csrc `optimizer32bit(T* g, T* p, float* state1,
# ..., float eps, ...)`).
_BITSANDBYTES = OtherOptimizer(None, True)
# apex.optimizers.FusedAdam(params, lr=1e-3, bias_correction=True, betas=(0.9, 0.999), eps=1e-8, ...): float32
# state (`torch.zeros_like(p).float()`) and float32 arithmetic; float32 master weights only when asked
# (`master_weights=True`, `use_master=True` in older releases).
_APEX = OtherOptimizer(None, True, ("master_weights", "use_master"))

OTHER_OPTIMIZERS: dict[str, OtherOptimizer] = {
    "transformers.AdamW": _TRANSFORMERS_ADAMW,
    "transformers.optimization.AdamW": _TRANSFORMERS_ADAMW,
    **{f"apex.optimizers.{name}": _APEX
       for name in ("FusedAdam", "FusedLAMB", "FusedSGD", "FusedNovoGrad", "FusedAdagrad")},
}
_BITSANDBYTES_CLASS = lazy_pattern(
    globals(), "_BITSANDBYTES_CLASS", r"^(?:Paged)?(?:Adam|AdamW|Lion|SGD|RMSprop|Adagrad|LAMB|LARS|AdEMAMix)"
                                 r"(?:8bit|32bit)?$")


def other_optimizer(qualname: str) -> OtherOptimizer | None:
    """The optimizer of transformers, bitsandbytes or apex a qualified name constructs (any module path inside
    the library's optimizer package: `bitsandbytes.optim.adamw.PagedAdamW8bit`)."""
    found = OTHER_OPTIMIZERS.get(qualname)
    if found is not None:
        return found
    package, _, name = qualname.rpartition(".")
    if package.startswith("bitsandbytes.optim") and _BITSANDBYTES_CLASS.match(name):
        return _BITSANDBYTES
    if package.startswith("apex.optimizers.") and f"apex.optimizers.{name}" in OTHER_OPTIMIZERS:
        return _APEX
    return None


# The last parts of those names, for the quick tests that gate the training-step model.
OTHER_OPTIMIZER_NAMES = frozenset({"FusedAdam", "FusedLAMB", "FusedSGD", "FusedNovoGrad", "FusedAdagrad", "Lion",
                                   "LAMB", "LARS", "AdEMAMix"})


# Plain classes rather than dataclasses: importing dataclasses costs every check run's workers several milliseconds
# (precisionlint/core/records.py has the numbers).


class Deprecated(FrozenRecord):
    """A deprecated AMP entry point and what replaces it (torch >= 2.4 warns with exactly this advice)."""

    __slots__ = ("replacement", "device", "kind")
    _fields = __slots__

    def __init__(self, replacement: str, device: str, kind: str) -> None:
        self.replacement = replacement  # e.g. "torch.amp.autocast"
        self.device = device  # "cuda" or "cpu"
        self.kind = kind  # "autocast" | "scaler" | "custom_fwd" | "custom_bwd"

    @property
    def advice(self) -> str:
        if self.kind in ("autocast", "scaler"):
            return f'{self.replacement}("{self.device}", ...)'
        return f'{self.replacement}(device_type="{self.device}")'


DEPRECATED = {
    "torch.cuda.amp.autocast": Deprecated("torch.amp.autocast", "cuda", "autocast"),
    "torch.cpu.amp.autocast": Deprecated("torch.amp.autocast", "cpu", "autocast"),
    "torch.cuda.amp.GradScaler": Deprecated("torch.amp.GradScaler", "cuda", "scaler"),
    "torch.cpu.amp.GradScaler": Deprecated("torch.amp.GradScaler", "cpu", "scaler"),
    "torch.cuda.amp.custom_fwd": Deprecated("torch.amp.custom_fwd", "cuda", "custom_fwd"),
    "torch.cuda.amp.custom_bwd": Deprecated("torch.amp.custom_bwd", "cuda", "custom_bwd"),
}
# Modules whose every public name has a torch.amp twin: `from torch.cuda.amp import X` can become
# `from torch.amp import X` when every X is one of these.
DEPRECATED_MODULES = {
    "torch.cuda.amp": frozenset({"autocast", "GradScaler", "custom_fwd", "custom_bwd"}),
    "torch.cpu.amp": frozenset({"autocast", "GradScaler"}),
}

# Names in torch.__all__ (torch 2.13) that the script rules resolve: what `from torch import *` binds for them.
TORCH_STAR_NAMES = frozenset(
    {
        "autocast",
        "GradScaler",
        "float16",
        "bfloat16",
        "float32",
        "float64",
        "half",
        "set_float32_matmul_precision",
        "get_float32_matmul_precision",
        "device",
    }
)

_CANONICAL = {
    "torch.amp.autocast_mode.autocast": "torch.amp.autocast",
    "torch.cuda.amp.autocast_mode.autocast": "torch.cuda.amp.autocast",
    "torch.cpu.amp.autocast_mode.autocast": "torch.cpu.amp.autocast",
    "torch.amp.grad_scaler.GradScaler": "torch.amp.GradScaler",
    "torch.cuda.amp.grad_scaler.GradScaler": "torch.cuda.amp.GradScaler",
    "torch.cpu.amp.grad_scaler.GradScaler": "torch.cpu.amp.GradScaler",
    "torch.distributed.fsdp.sharded_grad_scaler.ShardedGradScaler": "torch.distributed.fsdp.ShardedGradScaler",
    "torch.cuda.amp.autocast_mode.custom_fwd": "torch.cuda.amp.custom_fwd",
    "torch.cuda.amp.autocast_mode.custom_bwd": "torch.cuda.amp.custom_bwd",
    "torch.amp.autocast_mode.custom_fwd": "torch.amp.custom_fwd",
    "torch.amp.autocast_mode.custom_bwd": "torch.amp.custom_bwd",
    "torch.nn.utils.clip_grad.clip_grad_norm_": "torch.nn.utils.clip_grad_norm_",
    "torch.nn.utils.clip_grad.clip_grad_value_": "torch.nn.utils.clip_grad_value_",
    "torch.nn.utils.clip_grad.clip_grad_norm": "torch.nn.utils.clip_grad_norm",
    "torch.nn.utils.clip_grad.clip_grads_with_norm_": "torch.nn.utils.clip_grads_with_norm_",
    "torch.nn.modules.loss.BCELoss": "torch.nn.BCELoss",
    "torch.nn.modules.BCELoss": "torch.nn.BCELoss",
    "torch.half": "torch.float16",
    "torch.float": "torch.float32",
    "torch.double": "torch.float64",
}


_OPTIMIZER_MODULES = frozenset(
    {
        "adam",
        "adamw",
        "sgd",
        "nadam",
        "radam",
        "adamax",
        "adagrad",
        "rmsprop",
        "adadelta",
        "asgd",
        "rprop",
        "lbfgs",
        "sparse_adam",
        "adafactor",
        "optimizer",
    }
)


def canonical(qualname: str) -> str:
    known = _CANONICAL.get(qualname)
    if known is not None:
        return known
    # torch.optim.adamw.AdamW -> torch.optim.AdamW
    if qualname.startswith("torch.optim."):
        parts = qualname.split(".")
        if len(parts) == 4 and parts[2] in _OPTIMIZER_MODULES:
            return f"torch.optim.{parts[3]}"
    return qualname


def dotted(expr: ast.expr) -> str | None:
    """`a.b.c` for a Name/Attribute chain, else None."""
    parts: list[str] = []
    node = expr
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class ImportBinding(FrozenRecord):
    __slots__ = ("qualname", "node", "alias", "fallback")
    _fields = __slots__

    def __init__(self, qualname: str, node: ast.Import | ast.ImportFrom, alias: ast.alias, fallback: bool) -> None:
        self.qualname = qualname
        self.node = node
        self.alias = alias
        self.fallback = fallback  # inside `except ImportError:` or a version/hasattr test: the compatibility spelling


class ImportTable(ValueRecord):
    """Local name -> the modules/objects imported under it, for the whole file.

    Imports are resolved file-wide: scripts import at the top, inside `main()` or inside try blocks, and a
    name is almost never imported as two different torch objects.
    """

    _fields = ("bindings", "from_imports", "scope_ids", "modules", "star_modules", "gates")
    __slots__ = (*_fields, "_heads")

    def __init__(
        self,
        bindings: dict[str, list[ImportBinding]] | None = None,
        from_imports: list[tuple[ast.ImportFrom, bool]] | None = None,
        scope_ids: dict[int, int] | None = None,
        modules: set[str] | None = None,
        star_modules: list[str] | None = None,
        gates: dict[int, tuple[object, ...]] | None = None,
    ) -> None:
        self.bindings: dict[str, list[ImportBinding]] = {} if bindings is None else bindings
        self.from_imports: list[tuple[ast.ImportFrom, bool]] = [] if from_imports is None else from_imports
        # id(import node) -> id(scope it binds in)
        self.scope_ids: dict[int, int] = {} if scope_ids is None else scope_ids
        # every module path imported, for framework detection
        self.modules: set[str] = set() if modules is None else modules
        self.star_modules: list[str] = [] if star_modules is None else star_modules  # `from X import *`
        # id(fallback import node) -> the torch version tests (script.version_tests.Gate) it stands under, where
        # nothing but such tests makes it a fallback: a rule may know which branch the torch it cares about takes
        self.gates: dict[int, tuple[object, ...]] = {} if gates is None else gates
        # every module imported and each of its parents (`a.b.c`: `a`, `a.b`, `a.b.c`), as of how many modules
        self._heads: tuple[int, frozenset[str]] = (-1, frozenset())

    def add(self, node: ast.Import | ast.ImportFrom, fallback: bool) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.modules.add(alias.name)
                if alias.asname:
                    self._bind(alias.asname, alias.name, node, alias, fallback)
                else:
                    root = alias.name.split(".", 1)[0]
                    self._bind(root, root, node, alias, fallback)
            return
        if node.level or not node.module:
            if any(alias.name == "*" for alias in node.names):
                self.star_modules.append("." * node.level + (node.module or ""))  # `from .utils import *`
            return  # relative imports are the project's own modules
        self.modules.add(node.module)
        self.from_imports.append((node, fallback))
        for alias in node.names:
            if alias.name == "*":
                self.star_modules.append(node.module)
                continue
            self.modules.add(f"{node.module}.{alias.name}")
            self._bind(alias.asname or alias.name, f"{node.module}.{alias.name}", node, alias, fallback)

    def _bind(
        self, name: str, qualname: str, node: ast.Import | ast.ImportFrom, alias: ast.alias, fallback: bool
    ) -> None:
        self.bindings.setdefault(name, []).append(ImportBinding(canonical(qualname), node, alias, fallback))

    def resolve_name(self, name: str) -> str | None:
        found = self.bindings.get(name)
        if not found:
            return self._star_name(name) if self.star_modules else None
        # A try/except ImportError pair binds one name twice; the primary (non-fallback) spelling is what runs
        # on a current PyTorch.
        primary = [b for b in found if not b.fallback] or found
        names = {b.qualname for b in primary}
        if len(names) > 1:
            # `if version >= 2.4: from torch.amp import X / else: from torch.cuda.amp import X`
            names = {n for n in names if n not in DEPRECATED}
        return next(iter(names)) if len(names) == 1 else None

    def _star_name(self, name: str) -> str | None:
        """A name no import binds, reached through a star import: `from torch import *` binds torch's public
        names (`autocast`, `GradScaler`, `float16`); a project module imported with `*` that the file then uses
        as `torch.` re-exports torch itself (`from apex_utils import *`)."""
        if name in TORCH_STAR_NAMES and "torch" in self.star_modules:
            return canonical(f"torch.{name}")
        if name == "torch" and any(m != "torch" and not m.startswith("torch.") for m in self.star_modules):
            return "torch"
        return None

    def imports_any(self, prefixes: tuple[str, ...]) -> bool:
        """A module is one of `prefixes` or inside one. Asked for each framework and rule: the modules' parents
        are listed once (each module against each prefix was a twentieth of the collector's time)."""
        count, heads = self._heads
        if count != len(self.modules):  # imports are added while the scope walk reads them
            parents = set()
            for module in self.modules:
                parents.add(module)
                cut = module.find(".")
                while cut != -1:
                    parents.add(module[:cut])
                    cut = module.find(".", cut + 1)
            count, heads = self._heads = (len(self.modules), frozenset(parents))
        return any(p in heads for p in prefixes)
