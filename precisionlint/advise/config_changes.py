"""The recommendation against the user's configuration (advise --config, advise --write): each precision
setting of the file kept, changed, removed or added, and the changes to write into one file."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from precisionlint.advise.recommendation import Recommendation, recommendation_settings

if TYPE_CHECKING:
    from precisionlint.core.model import Document


@dataclass(frozen=True)
class Change:
    """What to do with one setting of the user's file. action: change | keep | remove | unknown | add."""

    action: str
    key: str
    current: Any
    recommended: Any
    reason: str
    line: int | None = None
    column: int | None = None
    framework: str | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["current"] = _jsonable(self.current)
        data["recommended"] = _jsonable(self.recommended)
        return data


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


@dataclass(frozen=True)
class Comparison:
    path: str
    changes: tuple[Change, ...] = field(default=())

    @property
    def needs_changes(self) -> bool:
        return any(c.action in ("change", "remove", "add") for c in self.changes)


def compare_config(document: Document, rec: Recommendation) -> Comparison:
    """Each precision setting of `document` against the recommendation, plus what is missing."""
    from precisionlint.frameworks import precision_mode

    want = recommendation_settings(rec)
    changes: list[Change] = []
    chooses_precision = False
    has_tf32 = False
    frameworks: set[str] = set()
    for s in document.settings:
        key = s.key_text
        where: dict[str, Any] = {"line": s.span.line, "column": s.span.column, "framework": s.framework}
        frameworks.add(s.framework)
        if s.name in ("precision", "mixed_precision", "fp16", "bf16"):
            chooses_precision = True
            if not s.resolved:
                changes.append(Change("unknown", key, s.value, want[s.name],
                                      "not a literal value: cannot tell what it is at run time", **where))
                continue
            if s.framework == "deepspeed" and s.value == "auto":
                changes.append(Change("keep", key, s.value, s.value,
                                      "'auto' follows the Transformers/Accelerate setting", **where))
                continue
            if s.name == "precision":
                mode = precision_mode(s)
                wanted_dtype = "fp8" if rec.fp8 else rec.dtype
                ok = mode is not None and mode.dtype == wanted_dtype and (
                    mode.kind == ("true" if wanted_dtype == "fp32" else "mixed"))
            else:
                ok = s.value == want[s.name]
            changes.append(Change("keep" if ok else "change", key, s.value,
                                  s.value if ok else want[s.name],
                                  "matches the recommendation" if ok else f"recommended: {rec.precision}", **where))
        elif s.name in ("tf32_matmul_precision", "tf32"):
            has_tf32 = True
            changes.append(_compare_tf32(s, rec, where))
    if document.format == "python":
        regions = _autocast_changes(document, rec)
        chooses_precision = chooses_precision or bool(regions)
        changes.extend(regions)
    if not chooses_precision:
        changes.append(Change("add", "precision", None, rec.precision,
                              "the file sets no training precision; add the snippet for your framework below"))
    if not has_tf32 and rec.tf32_matmul_precision == "high" and chooses_precision:
        if "hf" in frameworks:
            changes.append(Change("add", "tf32", None, True, "enable TF32 for float32 matmuls (tf32: true)"))
        elif any(s.scope == "trainer_config" for s in document.settings):
            changes.append(Change("add", "trainer_config.tf32_matmul_precision", None, "high",
                                  "enable TF32 for float32 matmuls"))
        else:
            changes.append(Change("add", "torch.set_float32_matmul_precision", None, "high",
                                  "call torch.set_float32_matmul_precision(\"high\") at start-up"))
    return Comparison(document.path, tuple(changes))


def _compare_tf32(s: Any, rec: Recommendation, where: dict[str, Any]) -> Change:
    key = s.key_text
    want = rec.tf32_matmul_precision
    if not s.resolved:
        return Change("unknown", key, s.value, want, "not a literal value", **where)
    if want is None and rec.tf32_available:  # mixed precision on TF32 hardware
        enabled = s.value is True or s.value in ("high", "medium")
        if enabled and s.framework == "lightning":
            return Change("remove", key, s.value, None, "under mixed precision it only reaches float32 matmuls "
                          "outside autocast (check reports it as PL104)", **where)
        return Change("keep", key, s.value, s.value, "harmless: it only reaches float32 matmuls outside autocast",
                      **where)
    if s.name == "tf32":  # Transformers' bool
        enabled = s.value is True
        if want is None:
            if enabled:
                return Change("remove", key, s.value, None, "no TF32 on this hardware: tf32=True raises ValueError",
                              **where)
            return Change("keep", key, s.value, s.value, "harmless here", **where)
        ok = enabled == (want == "high")
        return Change("keep" if ok else "change", key, s.value, s.value if ok else want == "high",
                      "matches the recommendation" if ok else f"recommended TF32 setting: {want}", **where)
    value = s.value
    enabled = value in ("high", "medium")
    if want is None:
        if enabled:
            return Change("remove", key, value, None, "no TF32 on this hardware: the setting has no effect", **where)
        return Change("keep", key, value, value, "no effect on this hardware", **where)
    ok = enabled == (want == "high")
    reason = "matches the recommendation"
    if ok and value == "medium":
        reason = "'medium' is the same as 'high' on CUDA"
    return Change("keep" if ok else "change", key, value, value if ok else want,
                  reason if ok else f"recommended: {want!r}", **where)


def _autocast_changes(document: Document, rec: Recommendation) -> list[Change]:
    from precisionlint.script.build import build_script_model

    try:
        regions = build_script_model(document).autocast_regions
    except RecursionError:  # nesting too deep for the model: the settings comparison still stands
        return []
    wanted = {"bf16": "bfloat16", "fp16": "float16"}.get(rec.dtype)
    changes = []
    for region in regions:
        if region.device not in (None, "cuda") or region.enabled is False:
            continue
        explicit = region.dtype_explicit
        span = region.dtype_span if explicit and region.dtype_span is not None else region.span
        key = "torch.autocast(dtype=...)"
        where: dict[str, Any] = {"line": span.line, "column": span.column, "framework": "torch"}
        # The script model fills an omitted dtype with the device default (cuda: float16).
        dtype = region.dtype if (explicit or region.device == "cuda") and not region.unpacked else None
        if dtype is None:
            changes.append(Change("unknown", key, None, wanted, "dtype not known statically", **where))
        elif wanted is None:
            changes.append(Change("remove", key, dtype, None, "recommended: float32 training without autocast",
                                  **where))
        elif dtype == wanted:
            changes.append(Change("keep", key, dtype, dtype, "matches the recommendation", **where))
        elif not explicit:
            changes.append(Change("change", key, dtype, wanted, f"no dtype: CUDA autocast defaults to float16; add "
                                  f"dtype=torch.{wanted} (recommended: {rec.precision})", **where))
        else:
            changes.append(Change("change", key, dtype, wanted, f"recommended: {rec.precision}", **where))
    return changes


def _trains_fp8(setting: Any) -> bool:
    from precisionlint.frameworks import precision_mode

    mode = precision_mode(setting)
    return mode is not None and mode.dtype == "fp8"


def uses_fp8(document: Document) -> bool:
    """Whether a configuration already trains in FP8 (Lightning transformer-engine, Accelerate fp8, ...)."""
    return any(_trains_fp8(s) for s in document.settings if s.name in ("precision", "mixed_precision"))


def changes_for_file(document: Document, rec: Recommendation) -> dict[str, object]:
    """The recommendation as changes to one config file: only the settings of frameworks the file already
    uses (a Lightning file never gains `mixed_precision`), canonical name -> value, None to remove.

    A file with no precision setting yet gets the seed's `[trainer_config]` keys. Defaults are not written
    out (`fp16: false` where fp16 is absent), DeepSpeed's "auto" is left alone (it follows the Trainer), and
    a Transformers `tf32` the user set is kept when the recommendation has no opinion on it."""
    want = recommendation_settings(rec)
    frameworks = {s.framework for s in document.settings}
    scopes = {s.scope for s in document.settings}
    names: list[str] = []
    if not document.settings:
        names = ["precision", "tf32_matmul_precision"]
    if "lightning" in frameworks:
        names.append("precision")
        if "trainer_config" in scopes:
            names.append("tf32_matmul_precision")
    if "hf" in frameworks:
        names += ["fp16", "bf16", "tf32"]
    if "accelerate" in frameworks:
        names.append("mixed_precision")
    if "deepspeed" in frameworks:
        names += ["fp16", "bf16"]
    changes: dict[str, object] = {}
    for name in dict.fromkeys(names):
        value = want[name]
        existing = document.settings_named(name)
        if rec.fp8 and name in ("precision", "mixed_precision") and existing and all(
                _trains_fp8(s) for s in existing):
            continue  # an FP8 spelling of its own (transformer-engine-float16, amp_fp8) stands
        if not existing and (value is None or value is False):
            continue  # absent already means this
        if existing and all(s.value == "auto" for s in existing):
            continue
        if name == "tf32" and value is None:
            continue
        if not existing and name in ("fp16", "bf16") and frameworks == {"deepspeed"}:
            continue  # a DeepSpeed block is not created from nothing: the Trainer's "auto" usually owns it
        changes[name] = value
    return changes
