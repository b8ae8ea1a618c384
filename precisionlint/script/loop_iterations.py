"""Loops whose body runs at least once: a loop over a collection a working training program never leaves
empty ends only through an iteration, so the flow analysis gives its zero-iteration path no weight.
"""

from __future__ import annotations

import ast

from precisionlint.script.names import dotted

# Words in the name of a collection a training program never leaves empty: its optimizers (and the schedulers
# and scalers kept beside them), its parameter groups, its training batches. Looping over an empty one would be
# a bug of its own.
_NONEMPTY_WORDS = frozenset({"optimizers", "optims", "opts", "schedulers", "scalers", "loaders", "groups"})
_MAP_WORDS = frozenset({"optimizers", "optimizer", "optims", "optim", "opts", "opt"})


def _words(text: str) -> list[str]:
    return text.rsplit(".", 1)[-1].lower().split("_")

def runs_at_least_once(iterable: ast.expr) -> bool:
    """The loop body runs at least once: a non-empty literal, `range(k)` with a literal k >= 1, or a collection
    of optimizers / parameter groups / a training loader (`for opt in optimizers`, `zip(optims, scalers)`,
    `enumerate(train_loader)`, `self.optimizer.param_groups`)."""
    if isinstance(iterable, (ast.List, ast.Tuple, ast.Set)):
        return bool(iterable.elts) and not any(isinstance(e, ast.Starred) for e in iterable.elts)
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name):
        name = iterable.func.id
        if name == "range" and len(iterable.args) == 1:
            bound = iterable.args[0]
            return isinstance(bound, ast.Constant) and isinstance(bound.value, int) and bound.value >= 1
        if name in ("zip", "enumerate", "reversed", "list", "tuple", "sorted") and iterable.args:
            parts = iterable.args if name == "zip" else iterable.args[:1]
            return all(runs_at_least_once(part) for part in parts)
        return False
    if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute):
        text = dotted(iterable.func.value)
        if iterable.func.attr in ("values", "items") and not iterable.args and text is not None:
            return bool(_MAP_WORDS.intersection(_words(text)))  # `optimizers_dict.values()`
        return False
    text = dotted(iterable)
    if text is None:
        return False
    words = _words(text)
    return bool(_NONEMPTY_WORDS.intersection(words)) or words[-1].endswith("loader")
