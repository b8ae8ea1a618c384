"""Evidence that a file is written for an accelerator other than the user's NVIDIA GPUs (Habana Gaudi, Google TPU,
Apple MPS), where the GPU-support rules (PL301, PL302, PL303, PL304) have nothing true to say.

A statement such as "V100 has no native bf16" is about the target GPUs; a DeepSpeed config of a Gaudi project, a
torch_xla training script or a Lightning Trainer with `accelerator="tpu"` never runs on them. Only strong evidence
counts, and a file that mentions CUDA (or NVIDIA, or Accelerate's MULTI_GPU) anywhere keeps its findings: a script
that supports both CUDA and HPU (`device = "hpu" if ... else "cuda"`) still runs on the target GPUs.

- the file: a Python module that imports, unconditionally at its top level, a package that runs only on such an
  accelerator (`habana_frameworks`, `optimum.habana`, `torch_xla`); an import inside an `if` or `try` is an
  optional path (Diffusers imports torch_xla under `is_torch_xla_available()`), not evidence;
- the file: an Accelerate config whose `distributed_type` is not a GPU one (XLA, MULTI_HPU, MULTI_XPU, ...);
- the file: a launch script that sets the runtime environment of such an accelerator (`PYTORCH_NPU_ALLOC_CONF`,
  `ASCEND_*` and `HCCL_*` for Ascend NPUs, `PT_HPU_*` for Gaudi, `PJRT_DEVICE=TPU`): Open-Sora-Plan keeps its
  NPU launchers beside its GPU ones, with the same training script and flags;
- the scope: a Lightning `accelerator` of "tpu", "hpu" or "mps" next to the precision setting (one Trainer call,
  one `trainer:` table);
- the project: the project is optimum-habana itself (the name its setup.py, setup.cfg or pyproject.toml gives it),
  the interface of Transformers and Diffusers to Gaudi, whose example configs (DeepSpeed JSON, FSDP) are
  written for Gaudi; its files that mention CUDA keep their findings.

A file named for other NVIDIA GPUs is not judged against the targets either: Dolly keeps `a100_config.json`,
`a10_config.json` and `v100_config.json` and its script reads `f"{gpu_family}_config.json"`, so with `--gpu V100`
the A100 file's bf16 never runs on a V100. Only a name token that is a GPU model (`a100`, `h100`, `rtx4090`: a
letter and a number, looked up in the GPU table) counts, and a file that names one of the targets keeps its
findings.

Each test is a text test first: the words looked for must be in the file's text before anything else is read.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from precisionlint.checks import CheckContext
    from precisionlint.core.model import Finding
    from precisionlint.project import Project

# Top-level packages (and dotted prefixes) that run on one accelerator only, with the accelerator's name.
_ONLY_ON = {
    "habana_frameworks": "Habana Gaudi (HPU)",
    "optimum.habana": "Habana Gaudi (HPU)",
    "torch_xla": "TPU (XLA)",
}
_IMPORT_WORDS = ("habana_frameworks", "optimum.habana", "torch_xla")
# Lightning's `accelerator` values for hardware that is not an NVIDIA GPU ("gpu", "cuda", "auto" may be one).
LIGHTNING_ELSEWHERE = {"tpu": "TPU (XLA)", "hpu": "Habana Gaudi (HPU)", "mps": "Apple MPS"}
# Projects that exist only for one accelerator: the name they publish under.
_PROJECTS = {"optimum-habana": "Habana Gaudi (HPU)"}
# A mention of NVIDIA's stack anywhere in the file (code, a comment, a config key) keeps its findings.
_CUDA = re.compile("cuda|nvidia|MULTI_GPU", re.IGNORECASE)
# Accelerate's `distributed_type` (what `accelerate config` writes) for hardware that is not an NVIDIA GPU:
# DistributedType.XLA (formerly TPU), MULTI_HPU (Gaudi), MULTI_XPU (Intel), MULTI_NPU (Ascend), MULTI_MLU
# (Cambricon), MULTI_NEURON (AWS Trainium), MULTI_MUSA (Moore Threads), MULTI_SDAA.
_ACCELERATE_ELSEWHERE = re.compile(
    r"""^\s*["']?distributed_type["']?\s*:\s*["']?(XLA|TPU|MULTI_(?:HPU|XPU|NPU|MLU|NEURON|MUSA|SDAA))\b""",
    re.MULTILINE)
# A launch script's assignment of an environment variable that only another accelerator's runtime reads.
_SHELL_ELSEWHERE = re.compile(
    r"^\s*(?:export\s+)?(?:(PYTORCH_NPU_\w+|ASCEND_\w+|HCCL_\w+)=|(PT_HPU_\w+|HABANA_\w+)=|PJRT_DEVICE=[\"']?(TPU))",
    re.MULTILINE)
_SHELL_ACCELERATORS = ("Ascend NPU", "Habana Gaudi (HPU)", "TPU (XLA)")
_PROJECT_NAME = re.compile(r"""\bname\s*=\s*["']([A-Za-z0-9][A-Za-z0-9._-]*)["']""")


def unless_elsewhere(ctx: CheckContext, findings: Iterator[Finding]) -> Iterator[Finding]:
    """A rule's findings, or none where the document is written for another accelerator (the engine applies this
    to every rule that needs target GPUs). The evidence is looked for only once the rule has something to report:
    most files have nothing, and pay nothing."""
    first = next(findings, None)
    if first is None or runs_elsewhere(ctx) is not None or named_for_other_gpus(ctx.document.path, ctx.gpus):
        return
    yield first
    yield from findings


def runs_elsewhere(ctx: CheckContext) -> str | None:
    """The accelerator (not an NVIDIA GPU) the whole document is written for, or None where nothing says so."""
    if _CUDA.search(ctx.document.text) is not None:
        return None  # a CUDA path in the file: it may run on the target GPUs
    if ctx.document.format == "python":
        found = _imported_accelerator(ctx)
        if found is not None:
            return found
    elif ctx.document.format == "shell":
        found_in_shell = shell_runs_elsewhere(ctx.document.text)
        if found_in_shell is not None:
            return found_in_shell
    elif "distributed_type" in ctx.document.text:
        match = _ACCELERATE_ELSEWHERE.search(ctx.document.text)
        if match is not None:
            return f"Accelerate distributed_type {match.group(1)}"
    return project_accelerator(ctx.project)


# A file name's model-like words, a letter run and a number with at most one letter after it: `a100_config` ->
# a100; `ds-h100x8` -> h100x (tried as h100 too); `l40s` -> l40s.
_NAME_WORDS = re.compile(r"([A-Za-z]+[0-9]+)([A-Za-z]?)")


def named_for_other_gpus(path: str, targets: tuple) -> list[str]:
    """The GPU models a file's name names (`a100_config.json`: A100 SXM), when none of them is a target GPU (same
    model name); empty where the name names none, or names a target."""
    import os

    from precisionlint.hardware.names import find_gpu

    stem = os.path.basename(path).rsplit(".", 1)[0]
    named = set()
    for word, suffix in _NAME_WORDS.findall(stem):
        gpu = (find_gpu(word + suffix) if suffix else None) or find_gpu(word)
        if gpu is not None:
            named.add(gpu.name)
    if not named or {_model(name) for name in named} & {_model(gpu.name) for gpu in targets}:
        return []
    return sorted(named)


def _model(name: str) -> str:
    """A GPU's model without its form factor: `A100 SXM` and `A100 PCIe` are one model for a file's name."""
    return " ".join(word for word in name.split() if not word.startswith(("SXM", "PCIe", "NVL")))


def shell_runs_elsewhere(text: str) -> str | None:
    """The accelerator whose runtime environment a launch script sets (`export PYTORCH_NPU_ALLOC_CONF=...`), when
    the script mentions no CUDA or NVIDIA; None otherwise."""
    if _CUDA.search(text) is not None:
        return None
    found = _SHELL_ELSEWHERE.search(text)
    if found is None:
        return None
    return next(name for name, group in zip(_SHELL_ACCELERATORS, found.groups(), strict=True) if group)


def elsewhere_scopes(ctx: CheckContext) -> set[str]:
    """Scopes (one Trainer call, one `trainer:` table) whose Lightning `accelerator` is not an NVIDIA GPU."""
    return {s.scope for s in ctx.settings
            if s.framework == "lightning" and s.name == "accelerator" and isinstance(s.value, str)
            and s.value.lower() in LIGHTNING_ELSEWHERE}


def _imported_accelerator(ctx: CheckContext) -> str | None:
    text = ctx.document.text
    if not any(word in text for word in _IMPORT_WORDS):
        return None
    tree = ctx.document.tree
    if not isinstance(tree, ast.Module):
        return None
    for statement in tree.body:  # the module's own statements only: an import under `if`/`try` is optional
        if isinstance(statement, ast.Import):
            modules = [alias.name for alias in statement.names]
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
            modules = [statement.module]
        else:
            continue
        for module in modules:
            for prefix, accelerator in _ONLY_ON.items():
                if module == prefix or module.startswith(prefix + "."):
                    return accelerator
    return None


def project_accelerator(project: Project) -> str | None:
    """The accelerator a project exists for, by the name its boundary's packaging files give it (None when it
    names none of _PROJECTS). Read once per project; the files are pin files, so a cached result's key names
    them."""
    known = project.model.accelerators  # by the folder the project was built for, as the model keeps projects
    folder = project.chain[0].path if project.chain else project.root
    if folder in known:
        return known[folder]
    found: str | None = None
    if project.chain and project.chain[-1].boundary:
        import os

        from precisionlint.project.pins import normalize, read_text

        boundary = project.chain[-1]
        for name in ("setup.py", "setup.cfg", "pyproject.toml"):
            if name not in boundary.names:
                continue
            text = read_text(os.path.join(boundary.path, name))
            if not text or "habana" not in text:
                continue
            for match in _PROJECT_NAME.finditer(text):
                found = _PROJECTS.get(normalize(match.group(1)))
                if found is not None:
                    break
            if found is not None:
                break
    known[folder] = found
    return found
