"""Hugging Face Accelerate: `mixed_precision` in an `accelerate config` file or `Accelerator(...)`.

Evidence: the keys `accelerate config` writes (`compute_environment`, `distributed_type`, ...): two of them make
the file certain, one likely. Vocabulary: accelerate/utils/dataclasses.py `PrecisionType` (no, fp16, bf16, fp8;
the value is lower-cased before the check) - anything else raises ValueError.
"""

from __future__ import annotations

from collections.abc import Iterator

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.frameworks import deepspeed
from precisionlint.frameworks.base import CERTAIN, LIKELY, Call, Facts, Mode, Row, Section, Vocabulary, described, exact

if TYPE_CHECKING:
    from typing import Any

NAME = "accelerate"
TITLE = "Accelerate"
# What a config, or a Python file, that it reads a setting from holds (one of them at least: engine.prefilter).
CONFIG_WORDS: tuple[bytes, ...] = (b"precision",)
PYTHON_WORDS: tuple[bytes, ...] = (b"precision",)
# The calls whose keyword arguments are its settings (frameworks.python_calls reads them, through calls_catalog.py).
PYTHON_CALLS: tuple[Call, ...] = (
    Call(("accelerate",), ("Accelerator",), NAME, {"mixed_precision": "mixed_precision"}),
)

MIXED_PRECISION = ("no", "fp16", "bf16", "fp8")
MODES = {"no": Mode("fp32", "true"), "fp16": Mode("fp16", "mixed"), "bf16": Mode("bf16", "mixed"),
         "fp8": Mode("fp8", "mixed")}
VOCABULARY = Vocabulary(
    framework=NAME, title=TITLE, key="mixed_precision", accepted=MIXED_PRECISION,
    canonical=exact(MIXED_PRECISION, fold_case=True), modes=MODES, rejection="raises ValueError at start-up",
    source="accelerate/utils/dataclasses.py (PrecisionType)",
)
VOCABULARIES = {"mixed_precision": VOCABULARY}
ROWS = (Row(NAME, ("mixed_precision",), "mixed_precision"),)
MARKERS = frozenset({"compute_environment", "distributed_type", "num_processes", "machine_rank", "num_machines",
                     "deepspeed_config", "fsdp_config", "use_cpu", "dynamo_config", "downcast_bf16",
                     "main_training_function", "gpu_ids", "main_process_port", "rdzv_backend", "same_network",
                     "tpu_env", "tpu_use_cluster", "megatron_lm_config", "enable_cpu_affinity"})


def attribute(root: Any, facts: Facts) -> Iterator[Section]:
    if root is None or root.kind != "map":
        return
    found = root.keys() & MARKERS
    if not found:
        return
    if len(found) >= 2:
        confidence, evidence = CERTAIN, f"Accelerate config keys {described(found)}"
    else:
        confidence, evidence = LIKELY, f"the Accelerate config key {described(found)}"
    entry = root.get("mixed_precision")
    if entry is not None and entry.value.kind == "scalar":
        yield Section(NAME, "accelerate", root, (), ROWS, confidence, evidence)
    # DeepSpeed settings embedded in the Accelerate config.
    embedded = root.get("deepspeed_config")
    if embedded is not None and deepspeed.has_blocks(embedded.value):
        yield Section(deepspeed.NAME, "deepspeed_config", embedded.value, ("deepspeed_config",), deepspeed.ROWS,
                      confidence, f"the `deepspeed_config:` of an Accelerate config ({evidence})")
