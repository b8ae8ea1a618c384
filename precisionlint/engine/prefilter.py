"""The cheap text prefilter: whether a file's bytes can hold a finding at all, before they are decoded."""

from __future__ import annotations

from precisionlint.core.model import Format
from precisionlint.engine.decoding import wide_encoding

# The cheap text prefilter: a file that contains none of these byte strings cannot hold a finding of any
# rule, so it is neither decoded nor parsed. Whoever adds a rule that can fire without one of these words
# must add its word here (tests/test_engine.py checks every rule case against this list).
CONFIG_KEYWORDS: tuple[bytes, ...] = (
    b"precision",  # precision, mixed_precision, tf32_matmul_precision
    b"fp16",
    b"bf16",
    b"bfloat16",
    b"tf32",
    b"float16",
    b"fp8",
    b"loss_scale",
    b'"amp"',
    b"amp:",
    b"amp =",
    b"AMP:",  # Detectron2 (yacs): SOLVER.AMP.ENABLED
    b"_component_: torchtune.",  # a torchtune recipe's `dtype: half` names no precision word (PL101)
    b'"_component_": "torchtune.',
    b"deepspeed_config",  # a launcher's --deepspeed_config: read with the script it starts (PL404)
    b"--fp4-",  # a Megatron-LM launch's --fp4-format / --fp4-recipe (PL304), which names no other word here
)
PYTHON_KEYWORDS: tuple[bytes, ...] = (
    b"autocast",
    b"GradScaler",
    b".scale(",
    b"custom_fwd",
    b"custom_bwd",
    b"half",
    b"float16",  # also bfloat16
    b"precision",
    b"fp16",
    b"bf16",
    b"tf32",
    b"fp32_precision",
    b"deepspeed=",  # TrainingArguments(deepspeed="ds.json"): compared with the DeepSpeed file it names
    b"AmpOptimWrapper",  # MMEngine configs: loss_scale / dtype of the AMP optimizer wrapper
    # fp8-unsupported-gpu: Transformer Engine recipes and torchao float8 training (checks/_fp8_recipes.WORDS)
    b"DelayedScaling",
    b"CurrentScaling",
    b"BlockScaling",
    b"Float8LinearConfig",
    b"convert_to_float8_training",
)


def _scan_plan(words: tuple[bytes, ...], gates: tuple[bytes, ...]) -> tuple[tuple[bytes, tuple[bytes, ...]], ...]:
    """How to look for `words` with fewer scans of the file, finding exactly the same files: a word that holds
    another word is found whenever that one is (it is dropped), and words that share a piece (a gate: "16" in
    fp16, bf16 and float16) are looked for only in files that hold the piece. Each scan of a file costs about a
    millisecond per megabyte, and most files hold none of the words, so every word is otherwise one more scan
    (the prefilter was a tenth of a cold run's CPU on SpeechBrain's tree)."""
    kept = [word for word in words if not any(other != word and other in word for other in words)]
    plan: list[tuple[bytes, tuple[bytes, ...]]] = []
    for gate in gates:
        group = tuple(word for word in kept if gate in word)
        if len(group) > 1:
            plan.append((gate, group))
            kept = [word for word in kept if word not in group]
    plan.extend((word, ()) for word in kept)  # a word alone is its own gate: nothing more to look for
    return tuple(plan)


# Gates are pieces shared by several words; which ones does not change what is found, only how fast.
_PYTHON_PLAN = _scan_plan(PYTHON_KEYWORDS, (b"16", b"custom_"))
_CONFIG_PLAN = _scan_plan(CONFIG_KEYWORDS, (b"16", b"amp", b"torchtune."))


def might_hold_findings(data: bytes, fmt: Format) -> bool:
    """Whether `data` holds any of the format's keywords (PYTHON_KEYWORDS or CONFIG_KEYWORDS)."""
    plan = _PYTHON_PLAN if fmt in ("python", "notebook") else _CONFIG_PLAN
    if data[:2] in (b"\xff\xfe", b"\xfe\xff", b"\x00\x00"):
        wide = wide_encoding(data)
        if wide is not None:
            # UTF-16/32 (a byte-order mark): look for the words in the decoded text, so that a config saved by
            # a Windows tool is reported as unreadable (see decode_source) rather than silently skipped.
            data = data.decode(wide, "replace").encode("utf-8", "replace")
    for gate, words in plan:
        if gate in data and (not words or any(word in data for word in words)):
            return True
    return False
