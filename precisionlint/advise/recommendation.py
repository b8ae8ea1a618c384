"""What `advise` recommends, as plain data: the decision path's steps and the Recommendation, and the
recommendation as canonical settings (the names every framework module knows)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

# Lightning's spelling of FP8 training (Transformer Engine, bf16 for the rest); Accelerate says mixed_precision fp8.
FP8_PRECISION = "transformer-engine"


@dataclass(frozen=True)
class Step:
    """One node of the decision path: the question, the answer for these targets, and why."""

    question: str
    answer: str
    reason: str


@dataclass(frozen=True)
class Recommendation:
    device: str  # "gpu" | "cpu"
    targets: tuple[str, ...]
    precision: str  # Lightning 2.x spelling: "bf16-mixed" | "16-mixed" | "32-true"
    tf32_matmul_precision: str | None  # "high" | "highest" | None: no TF32 on this hardware, leave unset
    priority: str | None
    params: float | None
    params_assumed: bool
    path: tuple[Step, ...]
    notes: tuple[str, ...] = ()
    evidence: tuple[str, ...] = ()  # sentences from the probe's measurements
    measured: bool = False
    tf32_available: bool = False  # every target has TF32 (so an unset TF32 setting is a choice, not a limit)

    @property
    def dtype(self) -> str:
        """The 16-bit type of the mixed precision (FP8 training runs what is not FP8 in bf16), or fp32."""
        return {"bf16-mixed": "bf16", "16-mixed": "fp16", FP8_PRECISION: "bf16"}.get(self.precision, "fp32")

    @property
    def fp8(self) -> bool:
        """FP8 training (Transformer Engine): kept from a configuration that already uses it, where every
        target has FP8 tensor cores."""
        return self.precision == FP8_PRECISION

    @property
    def grad_scaler(self) -> bool:
        return self.dtype == "fp16"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["dtype"] = self.dtype
        data["fp8"] = self.fp8
        data["grad_scaler"] = self.grad_scaler
        return data


def recommendation_settings(rec: Recommendation) -> dict[str, object]:
    """Canonical setting name -> recommended value, each in the vocabulary of the framework that owns the name
    (frameworks.py): Lightning `precision`, `tf32_matmul_precision`; Transformers (and DeepSpeed `enabled`)
    `fp16` / `bf16`; Transformers `tf32` (None: leave unset); Accelerate `mixed_precision`."""
    tf32_flag: bool | None = None
    if rec.tf32_matmul_precision == "high":
        tf32_flag = True
    elif rec.tf32_matmul_precision == "highest":
        tf32_flag = False
    return {
        "precision": rec.precision,
        "tf32_matmul_precision": rec.tf32_matmul_precision,
        "fp16": rec.dtype == "fp16",
        "bf16": rec.dtype == "bf16",
        "tf32": tf32_flag,
        "mixed_precision": "fp8" if rec.fp8 else {"bf16": "bf16", "fp16": "fp16"}.get(rec.dtype, "no"),
    }

