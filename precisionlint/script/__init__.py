"""The training-step model of a Python script, built once per file from its `ast` tree.

    names.py      import and alias resolution (`import torch as th`, `from torch.cuda.amp import autocast as ac`)
    scopes.py     module / class / function scopes and what each name is bound to
    values.py     static values of expressions: literals, constants, dtype lookups; UNKNOWN otherwise
    collect.py    the single walk that records regions, scalers, backward, clip, steps, casts, optimizers
    regions.py    autocast calls and the contexts a `with` or decorator enters (variables, partials, factories)
    receivers.py  what a method is called on when no type is written (optimizer? FSDP model? Accelerator?)
    flow.py       path-sensitive ordering of the GradScaler protocol, and which autocast outputs reach a backward
    model.py      the public data types and build_script_model()
    fixes.py      token-level edits shared by the script rules' fixes
    positions.py  UTF-8 byte columns of `ast` to 1-based character columns

Nothing here imports torch or executes the script.
"""
