"""The training-step model of a Python script, built once per file from its `ast` tree.

Imports point down this list: the data types, the passes that fill them, the façade that runs the passes.

    positions.py      UTF-8 byte columns of `ast` to 1-based character columns
    names.py          import and alias resolution (`import torch as th`, `from torch.cuda.amp import autocast as ac`)
    scopes.py         module / class / function scopes and what each name is bound to (the first walk)
    values.py         static values of expressions: literals, constants, dtype lookups; UNKNOWN otherwise
    receivers.py      what a method is called on when no type is written (optimizer? FSDP model? Accelerator?)
    objects.py        the keys one object (a model, an optimizer) is known under in different functions
    exits.py          the branch around a line that leaves its function (a cast for inference, then `return`)
    tf32.py           the TF32 state model: each write of a TF32 setting, the arms it runs under
    model.py          the data types of the model (ScriptModel, AutocastRegion, Event, GradScalerInfo, ...)
    regions.py        autocast calls and the contexts a `with` or decorator enters (variables, partials, factories)
    grad_mode.py      autocast regions entered only where autograd records nothing (`torch.no_grad()`)
    walk_state.py     the second walk, in layers: where the walk is, and the look-ups its layers share
    constructions.py    GradScalers, optimizers and casts, and the names assignments bind them to
    calls.py            what each call is: regions, events of the training step, TF32 settings, deprecated spellings
    collect.py          statements and scopes, then what is decided once the whole file is read; collect()
    flow_names.py     what statements and tests read and write, by name
    flow_liveness.py  where each fact of the flow analysis dies
    loop_iterations.py  loops whose body runs at least once
    flow_states.py    the states of the flow analysis, a GradScaler's status in one, function summaries
    flow_shared.py    what the flow analysis of one file shares between its functions
    flow_function.py  path-sensitive ordering inside one function: the GradScaler protocol, autocast outputs
                      reaching a backward (an abstract interpreter over statements)
    flow.py           run_flow: every function, in rounds that carry a shared scaler across calls
    build.py          build_script_model(): scopes, collect, flow
    fixes.py          token-level edits shared by the script rules' fixes

Nothing here imports torch or executes the script.
"""
