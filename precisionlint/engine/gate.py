"""Which passes read a Python file that passed the prefilter: its tree at all (python_tree_is_read), and the
training-step model of the script rules (needs_script_model). Both decide from the file's text alone."""

from __future__ import annotations

import re

from precisionlint.core.patterns import lazy_pattern


# A Python file that passes the prefilter gets the training-step model (the script rules' one input) only when
# its text holds one of these words: every fact the model can report a finding on is spelled with one of them
# (autocast regions, GradScaler objects and their calls, TF32 switches, the deprecated torch.cuda.amp names). The
# rest pass the prefilter for "precision", "fp16" or "bf16" alone (a metric, a CLI flag, a TrainingArguments call):
# their settings are still checked, but no model is built. They are the MODEL_WORDS the script rules declare (as
# the generated catalog copies them); tests/test_script_gate.py checks every script rule's cases against this gate.
def _model_words() -> tuple[str, ...]:
    from precisionlint.checks.catalog import RULE_WORDS

    return tuple(sorted({word for row in RULE_WORDS for word in row[3]}))


SCRIPT_MODEL_WORDS: tuple[str, ...] = _model_words()


def _tree_words() -> tuple[str, ...]:
    """The TREE_WORDS the rules declare: a Python file that holds one is parsed for the rule that reads it."""
    from precisionlint.checks.catalog import RULE_WORDS

    return tuple(sorted({word for *_, tree in RULE_WORDS for word in tree}))
# A half-precision cast (`model.half()`, `.to(torch.float16)`, `torch.bfloat16`) without any word above matters
# only to the rules about what updates half-precision weights: an optimizer of torch.optim over them
# (half-params-without-master-weights, adam-eps-underflow-fp16: the model records only the constructors of
# torch.optim's optimizer classes, script.names.TORCH_OPTIMIZERS, so the text spells one of their names), or a
# Trainer with `fp16=True` over a model that `from_pretrained` loads in float16 (scaler-with-half-params). Half
# casts are everywhere in model code (a third of the files that pass the prefilter in pytorch-lightning and
# diffusers name nothing else), and most build no optimizer: "optimizer" alone is in every file of a training
# framework, in type hints and hooks.
# A checkpoint that `from_pretrained` loads (in 16 bits, or in its own dtype: `dtype="auto"`, Transformers 5's
# default) matters to the rules about what trains it: beside `fp16` (TrainingArguments), a Trainer, a backward
# call or one of torch.optim's optimizers.
HALF_CAST_WORDS: tuple[str, ...] = ("half", "float16")  # float16 also in bfloat16


def word_probe(text: str) -> str:
    """The text in which to look for the words that decide whether a pass reads a Python file: ASCII text
    itself. The parser NFKC-normalises identifiers that are not ASCII (a fullwidth `ａｕｔｏｃａｓｔ` is
    `autocast`), so other text is followed by its NFKC form, and every character still not ASCII is written as
    `?`. No word looked for holds such a character, so each word written in the text (a string, a comment) or
    normalised into an identifier is in the probe, and the probe is ASCII, which the tests need to rule a file
    out. (pytorch-lightning: 9 of the files that pass the prefilter hold a typographic quote or an ellipsis.)"""
    if text.isascii():
        return text
    if _LAST_PROBE[0] is not text:  # the engine asks twice about a file: whether it is read, then for the model
        import unicodedata

        probe = f"{text}\n{unicodedata.normalize('NFKC', text)}".encode("ascii", "replace").decode("ascii")
        _LAST_PROBE[:] = [text, probe]
    return _LAST_PROBE[1]  # type: ignore[return-value]


_LAST_PROBE: list[str | None] = [None, None]


def _optimizer_words() -> tuple[str, ...]:
    """The names of the optimizer classes the model records, less those that hold another (AdamW holds Adam)."""
    from precisionlint.script.names import OTHER_OPTIMIZER_NAMES, TORCH_OPTIMIZERS

    names = TORCH_OPTIMIZERS | OTHER_OPTIMIZER_NAMES  # bitsandbytes' AdamW8bit holds Adam, apex's FusedAdam too
    return tuple(sorted(name for name in names if not any(other != name and other in name for other in names)))


_OPTIMIZER_WORDS: tuple[str, ...] = ()


# Words of SCRIPT_MODEL_WORDS that count only as a whole name: the model looks for the method of that exact name
# (Lightning's `unscale_gradients` is another method than a GradScaler's `unscale_`).
_WHOLE_NAMES = frozenset({"unscale_"})


def _holds_name(text: str, name: str) -> bool:
    """Whether `name` is written in `text` (ASCII) with no letter, digit or underscore right after it."""
    start = text.find(name)
    while start != -1:
        end = start + len(name)
        if end == len(text) or not (text[end].isalnum() or text[end] == "_"):
            return True
        start = text.find(name, end)
    return False


def needs_script_model(text: str) -> bool:
    """Whether the script rules' model could record anything in this Python text (the words it needs)."""
    if _LAST_ANSWER[0] is text:  # the engine asks twice about a file: whether it is read, then for the model
        answer = _LAST_ANSWER[1]
        _LAST_ANSWER[:] = [None, False]  # asked for the last time: the text is not kept
        return answer  # type: ignore[return-value]
    answer = _needs_script_model(text)
    _LAST_ANSWER[:] = [text, answer]
    return answer


# The text last asked about and the answer (each word is a scan of the whole text: half of the question's CPU
# was asking it again for the same file).
_LAST_ANSWER: list[str | bool | None] = [None, False]


def _needs_script_model(text: str) -> bool:
    global _OPTIMIZER_WORDS
    probe = word_probe(text)
    if any(_holds_name(probe, word) if word in _WHOLE_NAMES else word in probe for word in SCRIPT_MODEL_WORDS):
        return True
    if "clip_grad" in probe and ".backward(" in probe and (
            "mixed_precision" in probe and "Accelerator(" in probe or "precision" in probe and "Fabric(" in probe):
        return True  # clip-before-unscale: a plain clip after a framework's scaled backward (accelerator.backward)
    if ("self.manual_backward(" in probe and "clip_grad" in probe and "precision" in probe and "Trainer(" in probe
            and "def manual_backward" not in probe):
        # clip-before-unscale: a clip after Lightning's manual_backward under a float16 Trainer (not Lightning's
        # own LightningModule, whose docstrings say all of it)
        return True
    loads = "from_pretrained" in probe
    if not loads and not any(word in probe for word in HALF_CAST_WORDS):
        return False
    if not _OPTIMIZER_WORDS:
        _OPTIMIZER_WORDS = _optimizer_words()
    if any(name in probe for name in _OPTIMIZER_WORDS):
        return True
    # scaler-with-half-params (a float16 load trained with fp16=True), fp16-on-bf16-checkpoint (a float16 load
    # of a bfloat16 checkpoint that a Trainer or a backward trains), half-params-without-master-weights (a load in
    # 16 bits, or in the checkpoint's own dtype, that a Trainer trains)
    return loads and ("fp16" in probe or "Trainer" in probe or ".backward(" in probe)


def python_tree_is_read(text: str) -> bool:
    """Whether any pass reads the tree of a Python file that passed the prefilter. False only when each of them
    would stop at its own test of the text: no word the script rules' model needs (needs_script_model), no
    framework call that passes a setting a rule reports on (the framework settings pass: MMEngine's marker, or a
    framework's import, one of its calls and a precision keyword followed by `=`; Lightning's `accelerator=` and
    `strategy=` only qualify a precision of the same call), no link to a DeepSpeed config that
    cross-file-precision-conflict could follow (may_link_a_deepspeed_config), and no suppression comment to
    check. Such a file is neither parsed nor checked further: no rule could report on it, so a syntax error in it
    is not reported either (pytorch-lightning: 82 of the 170 Python files that pass the prefilter, for
    "precision" in prose or a metric's name, a Trainer given only an accelerator or a strategy, DeepSpeed's
    name, or a cast to float16 beside no optimizer).
    tests/test_engine.py checks this against every pass on real files."""
    if needs_script_model(text):
        return True
    from precisionlint.engine.suppress import may_hold_directives
    from precisionlint.frameworks.call_words import MMENGINE_MARKER
    from precisionlint.frameworks.python_calls import (
        may_call_a_framework,
        may_import_a_framework,
        may_pass_a_precision_setting,
    )

    probe = word_probe(text)
    if any(word in probe for word in _tree_words()):
        return True  # a settings rule reads what the tree holds (fp8-unsupported-gpu: the recipes a script builds)
    if MMENGINE_MARKER in probe or may_link_a_deepspeed_config(probe) or (
            may_import_a_framework(probe) and may_call_a_framework(probe) and may_pass_a_precision_setting(probe)):
        return True  # the keyword scan is kept for the settings pass that follows
    return may_hold_directives(text, python=True)  # comments are not normalised: the text as written


# A DeepSpeed config named by a literal path: cross-file-precision-conflict follows only those of a .json,
# .yaml or .yml file (in any case).
_CONFIG_PATH_SUFFIX = lazy_pattern(globals(), "_CONFIG_PATH_SUFFIX", r"\.(?:json|ya?ml)", re.IGNORECASE)


def may_link_a_deepspeed_config(text: str) -> bool:
    """False only when cross-file-precision-conflict finds no DeepSpeed config to compare the file with:
    `TrainingArguments(..., deepspeed="ds.json")` names one of its classes and a config path, and
    `Trainer(precision=..., strategy=DeepSpeedStrategy(config=...))` the strategy, the Trainer and a precision
    keyword. The rest of DeepSpeed's and Lightning's own code says "deepspeed" on every page and links to no
    config (pytorch-lightning: 21 files). `text` is ASCII (word_probe)."""
    if "deepspeed" not in text and "DeepSpeed" not in text:
        return False
    from precisionlint.frameworks.python_calls import may_call_a_framework, may_pass_a_precision_setting
    from precisionlint.project.links import HF_ARGUMENT_CLASSES

    if "deepspeed" in text and any(name in text for name in HF_ARGUMENT_CLASSES) and _CONFIG_PATH_SUFFIX.search(text):
        return True
    return "DeepSpeedStrategy" in text and may_call_a_framework(text) and may_pass_a_precision_setting(text)
