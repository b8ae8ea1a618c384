"""The names by which a Python file's text shows that it may pass a framework a precision setting, as plain strings:
the engine's gate and frameworks.python_calls test a file's text for them before anything is parsed, and a file
none of them appear in needs none of the frameworks' modules (they, and the attribution rows they build on, are
imported only when a file names them)."""

from __future__ import annotations

# The classes that take Hugging Face TrainingArguments' precision flags and its `deepspeed=` config path:
# Transformers' own and TRL's trainer configs, which subclass TrainingArguments. The one list every reader of these
# calls uses (frameworks.python_calls for the flags, project.links for the DeepSpeed link, the engine's gate).
HF_ARGUMENT_CLASSES = ("TrainingArguments", "Seq2SeqTrainingArguments", "SFTConfig", "DPOConfig", "GRPOConfig",
                       "ORPOConfig", "KTOConfig", "RewardConfig", "PPOConfig", "CPOConfig")
# The wrapper an MMEngine config's `optim_wrapper = dict(type=...)` names for mixed precision (frameworks.mmengine).
MMENGINE_MARKER = "AmpOptimWrapper"
