"""fp8-unsupported-gpu on the recipes a script builds, against GPUs of every generation: the compute capabilities
Transformer Engine's own support checks accept (transformer_engine/pytorch/quantization.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from precisionlint.checks import find_rule
from precisionlint.core.model import SourceFile
from precisionlint.engine.check import check_source
from precisionlint.engine.options import EngineOptions
from precisionlint.hardware.names import find_gpu

SCRIPT = """\
import transformer_engine.pytorch as te
from transformer_engine.common import recipe

fp8_recipe = recipe.{cls}()
with te.autocast(enabled=True, recipe=fp8_recipe):
    loss = model(x).sum()
loss.backward()
"""


def _findings(tmp_path: Path, cls: str, gpu: str) -> list[str]:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(cls=cls))
    rule = find_rule("fp8-unsupported-gpu")
    assert rule is not None
    options = EngineOptions(rules=[rule], gpus=(find_gpu(gpu),))
    result = check_source(SourceFile(str(path), "train.py", "python"), options)
    return [f.message for f in result.findings]


@pytest.mark.parametrize(("cls", "gpu", "refused"), [
    ("DelayedScaling", "L4", False),  # 8.9
    ("DelayedScaling", "A100", True),
    ("Float8CurrentScaling", "RTX 4090", False),
    ("Float8BlockScaling", "L40S", True),  # 8.9: block scaling needs 9.0
    ("Float8BlockScaling", "H20", False),
    ("MXFP8BlockScaling", "H100", True),  # 9.0: MXFP8 needs 10.x
    ("MXFP8BlockScaling", "B200", False),
    ("MXFP8BlockScaling", "GB300", False),  # 10.3
    ("MXFP8BlockScaling", "RTX 5090", True),  # 12.0: refused on 12.x
    ("MXFP8BlockScaling", "GB10", True),  # 12.1
    ("NVFP4BlockScaling", "H200", True),
    ("NVFP4BlockScaling", "B200", False),
    # 12.0: accepted, but the default recipe's stochastic rounding and Hadamard transform do not train there
    ("NVFP4BlockScaling", "RTX PRO 6000", True),
])
def test_each_recipe_is_judged_by_the_capabilities_that_run_it(tmp_path: Path, cls: str, gpu: str,
                                                               refused: bool) -> None:
    found = _findings(tmp_path, cls, gpu)
    assert bool(found) is refused, found
    if refused:
        assert f"`{cls}`" in found[0]


def test_transformer_engine_jax_runs_mxfp8_on_12x(tmp_path: Path) -> None:
    """The JAX side of Transformer Engine checks MXFP8 against compute capability 9.9 and refuses no 12.x."""
    path = tmp_path / "train.py"
    path.write_text("from transformer_engine.jax import flax as te_flax\n"
                    "from transformer_engine.common.recipe import MXFP8BlockScaling\n\n"
                    "recipe = MXFP8BlockScaling()\n")
    rule = find_rule("fp8-unsupported-gpu")
    assert rule is not None
    for gpu, refused in (("RTX 5090", False), ("H100", True)):
        options = EngineOptions(rules=[rule], gpus=(find_gpu(gpu),))
        result = check_source(SourceFile(str(path), "train.py", "python"), options)
        assert bool(result.findings) is refused, gpu
        if refused:  # the JAX side's own words, which name no 12.x refusal
            assert "9.9 or higher required for MXFP8" in result.findings[0].message
            assert "12.0+" not in result.findings[0].message


@pytest.mark.parametrize(("arguments", "reported"), [
    ("", True),
    ("disable_rht=True, disable_stochastic_rounding=True", False),
    ("disable_rht=True", True),  # stochastic rounding still on
    ("disable_rht=True, disable_stochastic_rounding=args.no_sr", False),  # chosen at run time
    ("**settings", False),
])
def test_nvfp4_on_12x_is_judged_by_the_switches_it_leaves_on(tmp_path: Path, arguments: str, reported: bool) -> None:
    path = tmp_path / "train.py"
    path.write_text(SCRIPT.format(cls="NVFP4BlockScaling").replace("NVFP4BlockScaling()",
                                                                   f"NVFP4BlockScaling({arguments})"))
    rule = find_rule("fp8-unsupported-gpu")
    assert rule is not None
    result = check_source(SourceFile(str(path), "train.py", "python"),
                          EngineOptions(rules=[rule], gpus=(find_gpu("GB10"),)))
    assert bool(result.findings) is reported, [f.message for f in result.findings]


def test_nvfp4_switches_set_in_the_environment_count_as_off(tmp_path: Path) -> None:
    """Transformer Engine reads NVTE_NVFP4_DISABLE_RHT / NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING as the defaults."""
    path = tmp_path / "train.py"
    path.write_text('import os\nos.environ["NVTE_NVFP4_DISABLE_RHT"] = "1"\n'
                    'os.environ["NVTE_NVFP4_DISABLE_STOCHASTIC_ROUNDING"] = "1"\n'
                    + SCRIPT.format(cls="NVFP4BlockScaling"))
    rule = find_rule("fp8-unsupported-gpu")
    assert rule is not None
    result = check_source(SourceFile(str(path), "train.py", "python"),
                          EngineOptions(rules=[rule], gpus=(find_gpu("RTX 5090"),)))
    assert result.findings == []
