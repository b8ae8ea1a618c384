"""A GPU name as people or drivers write it ("NVIDIA A100-SXM4-80GB", "rtx3090", "H100 PCIe") -> the table's
card, and the close names to suggest when none matches."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable

from precisionlint.hardware.gpu import Gpu
from precisionlint.hardware.table import ENTRIES, GPUS

_VENDOR_WORDS = frozenset({"nvidia", "tesla", "geforce", "quadro", "rtx", "amd", "instinct", "radeon", "hgx", "dgx",
                           "generation", "edition", "workstation", "superchip"})
_MEMORY = re.compile(r"^(\d+(\.\d+)?(gb|g|gib)|hbm\d*e?|gddr\d*x?)$")
_FORM = {"sxm": "sxm", "sxm2": "sxm", "sxm3": "sxm", "sxm4": "sxm", "sxm5": "sxm", "pcie": "pcie", "pci": "pcie",
         "nvl": "nvl", "oam": "oam"}


def name_key(name: str) -> tuple[str, str | None]:
    """(model, form factor) of a GPU name: lowercase, vendor words, memory sizes and separators dropped.

    "NVIDIA A100-SXM4-80GB" -> ("a100", "sxm"); "NVIDIA GeForce RTX 3090" -> ("3090", None);
    "AMD Instinct MI250X/MI250" -> ("mi250x", None).
    """
    text = name.lower().split("/", 1)[0]
    # "a100-80gb" and "80 gb" both drop; "2080 ti" must stay one model name.
    tokens = re.findall(r"[a-z0-9.]+", text)
    model: list[str] = []
    form: str | None = None
    for i, token in enumerate(tokens):
        token = token.strip(".")
        if not token or token in _VENDOR_WORDS or _MEMORY.match(token) or token in ("gb", "gib"):
            continue
        if token.replace(".", "").isdigit() and i + 1 < len(tokens) and tokens[i + 1] in ("gb", "gib"):
            continue  # "80 GB"
        if token.startswith("rtx") and len(token) > 3:  # "RTX3090", "rtxa6000"
            token = token[3:]
        if token in _FORM:
            form = _FORM[token]
            continue
        model.append(token)
    return "".join(model), form


def _index(entries: Iterable[tuple[Gpu, tuple[str, ...]]]) -> dict[tuple[str, str | None], Gpu]:
    index: dict[tuple[str, str | None], Gpu] = {}
    for gpu, aliases in entries:
        for alias in (gpu.name, *aliases):
            key = name_key(alias)
            index.setdefault(key, gpu)
            # The first entry listing a bare model name (no form) is that model's default variant.
            index.setdefault((key[0], None), gpu)
    return index


_INDEX = _index(ENTRIES)


def find_gpu(name: str) -> Gpu | None:
    """The table entry for a GPU name as people or drivers write it, or None."""
    model, form = name_key(name)
    if not model:
        return None
    gpu = _INDEX.get((model, form))
    if gpu is None and form is not None:
        gpu = _INDEX.get((model, None))  # "T4 PCIe": the only T4
    return gpu


def suggestions(name: str, limit: int = 3) -> list[str]:
    model, _ = name_key(name)
    names = {gpu.name: name_key(gpu.name)[0] for gpu in GPUS}
    by_key: dict[str, str] = {}
    for (key, _form), gpu in _INDEX.items():
        by_key.setdefault(key, gpu.name)
    close = difflib.get_close_matches(model, list(by_key), n=limit, cutoff=0.5)
    found = []
    for key in close:
        if by_key[key] not in found:
            found.append(by_key[key])
    if not found:  # prefix match: "h1" -> H100 SXM...
        found = [n for n, key in names.items() if model and key.startswith(model[:2])][:limit]
    return found


def known_names() -> list[str]:
    return [gpu.name for gpu in GPUS]
