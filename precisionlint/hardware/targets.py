"""The target GPUs a run is given: names from the command line or the configuration, the configuration's own
cards (custom-gpus), and `auto` (this machine's)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from precisionlint.hardware.capability import gpu_from_capability, gpu_from_spec, parse_cc
from precisionlint.hardware.detect import detect_local
from precisionlint.hardware.gpu import Gpu, UnknownGpuError
from precisionlint.hardware.names import find_gpu, name_key, suggestions


def custom_gpu(name: str, spec: dict) -> Gpu:
    """A card from the configuration's custom-gpus table (validated by config.py): capabilities from its
    compute capability or gfx ISA unless given, peaks as given."""
    cc_text = spec.get("compute-capability")
    cc = parse_cc(str(cc_text)) if cc_text is not None else None
    gfx = spec.get("gfx-arch")
    base = gpu_from_capability(name, cc, gfx, spec.get("memory-gb"))
    return base.replace(
        bf16=spec.get("bf16", base.bf16),
        tf32=spec.get("tf32", base.tf32),
        fp8=spec.get("fp8", base.fp8),
        peak_tflops={k: float(v) for k, v in spec.get("peak-tflops", {}).items()},
        source="custom-gpus in the configuration",
    )


def resolve_targets(names: Sequence[str], custom: dict | None = None,
                    local: Callable[[], tuple[Gpu, ...]] | None = None) -> tuple[Gpu, ...]:
    """The GPUs named on the command line or in the configuration, in order, without duplicates.

    "auto" means the GPUs of this machine: `local()` when given (the command line passes one that may ask
    PyTorch), else detect_local() (nvidia-smi alone); `cc8.9` / `sm_89` / `gfx942` any card of that compute
    capability or ISA; `custom` the configuration's own cards (name -> spec), which come first.
    Comma-separated lists are accepted. Raises UnknownGpuError for a name that matches nothing.
    """
    custom_by_key = {name_key(name)[0]: (name, spec) for name, spec in (custom or {}).items()}
    result: list[Gpu] = []
    for raw in names:
        for name in (part.strip() for part in str(raw).split(",")):
            if not name:
                continue
            found: Iterable[Gpu]
            if name.lower() == "auto":
                found = (local or detect_local)()
            elif name_key(name)[0] in custom_by_key:
                found = (custom_gpu(*custom_by_key[name_key(name)[0]]),)
            else:
                gpu = find_gpu(name) or gpu_from_spec(name)
                if gpu is None:
                    raise UnknownGpuError(name, suggestions(name))
                found = (gpu,)
            for gpu in found:
                if gpu not in result:
                    result.append(gpu)
    return tuple(result)

