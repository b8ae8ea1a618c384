"""Building the training-step model of one Python file: the passes in order, over the file's `ast` tree.

scopes.py records bindings and imports (shared with the value layer), collect.py records everything the model
holds in source order, then flow.py orders the GradScaler protocol along each path of each function and follows
autocast outputs to backward calls (reaching definitions, on the same paths). CheckContext.script calls this once
per file and caches the result.
"""

from __future__ import annotations

import ast

from precisionlint.core.model import Document
from precisionlint.script.collect import collect
from precisionlint.script.flow import run_flow
from precisionlint.script.model import ScriptModel


def build_script_model(document: Document) -> ScriptModel:
    tree = document.tree
    if not isinstance(tree, ast.Module):
        tree = ast.Module(body=[], type_ignores=[])
    model = collect(document, tree)
    run_flow(model)
    return model
