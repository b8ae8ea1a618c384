"""The decision tree, measured evidence (through DeviceInfo/Timing built by hand), snippets and --config."""

from __future__ import annotations

import ast
import io
import json

import pytest
import tomlkit
from ruamel.yaml import YAML

from precisionlint.advise.advisor import evidence, parse_params, recommend
from precisionlint.advise.config_changes import compare_config
from precisionlint.advise.probe.results import DeviceInfo, LossScaling, NumericCheck, ProbeResult, Skipped, Timing
from precisionlint.advise.recommendation import Recommendation, recommendation_settings
from precisionlint.advise.snippets import snippets
from precisionlint.frameworks.documents import load_document
from precisionlint.hardware.capability import gpu_from_capability
from precisionlint.hardware.gpu import Gpu
from precisionlint.hardware.names import find_gpu


def gpu(name: str) -> Gpu:
    found = find_gpu(name)
    assert found is not None, name
    return found


def answers(rec: Recommendation) -> list[str]:
    return [step.answer for step in rec.path]


# --- the tree on datasheet figures -------------------------------------------------------------------------------

def test_ampere_large_model_gets_bf16_mixed_without_grad_scaler() -> None:
    rec = recommend([gpu("A100")], params=7e9)
    assert (rec.precision, rec.dtype, rec.grad_scaler) == ("bf16-mixed", "bf16", False)
    # Under mixed precision autocast runs the matmuls; the TF32 setting is left unset (not "ignored").
    assert rec.tf32_matmul_precision is None and rec.tf32_available
    assert any("not ignored" in note for note in rec.notes)
    assert rec.path[0].answer.startswith("yes")


def test_ampere_small_model_gets_float32_with_tf32() -> None:
    rec = recommend([gpu("A100")], params=5e6)
    assert (rec.precision, rec.tf32_matmul_precision) == ("32-true", "high")
    assert any("'medium' is the same as 'high' on CUDA" in n for n in rec.notes)
    assert any("'highest' (TF32 off for matmuls since 1.12" in n for n in rec.notes)


def test_geforce_tf32_at_float32_rate_is_not_recommended() -> None:
    rec = recommend([gpu("RTX 3090")], params=5e6)
    assert (rec.precision, rec.tf32_matmul_precision) == ("32-true", "highest")
    step = next(s for s in rec.path if "TF32" in s.question)
    assert step.answer == "no" and "1x" in step.reason


def test_volta_large_model_gets_fp16_with_loss_scaling() -> None:
    rec = recommend([gpu("V100")], params=350e6)
    assert (rec.precision, rec.tf32_matmul_precision, rec.grad_scaler) == ("16-mixed", None, True)
    assert not rec.tf32_available
    assert any("GradScaler" in n and "unscale_" in n for n in rec.notes)
    assert "emulation" in rec.path[0].reason


def test_volta_small_model_gets_float32() -> None:
    assert recommend([gpu("T4")], params=1e6).precision == "32-true"


def test_consumer_pascal_without_fast_fp16_stays_float32_even_for_speed() -> None:
    card = gpu_from_capability("NVIDIA GeForce GTX 1080", (6, 1))
    rec = recommend([card], params=7e9, priority="speed")
    assert rec.precision == "32-true"
    assert any(s.question.startswith("Fast 16-bit math") and s.answer == "no" for s in rec.path)


def test_fleet_takes_the_least_capable_gpu() -> None:
    rec = recommend([gpu("A100"), gpu("V100")], params=1e9)
    assert rec.precision == "16-mixed" and rec.tf32_matmul_precision is None
    assert rec.path[0].question == "Which GPUs?" and "V100 SXM2" in rec.path[0].answer
    assert rec.targets == ("A100 SXM", "V100 SXM2")
    assert any("Some GPUs of the fleet have TF32" in n for n in rec.notes)


def test_priority_overrides_model_size() -> None:
    assert recommend([gpu("H100")], params=70e9, priority="accuracy").precision == "32-true"
    accurate = recommend([gpu("H100")], params=70e9, priority="accuracy")
    assert accurate.tf32_matmul_precision == "highest"
    assert not any("faster" in s.question for s in accurate.path)  # speed questions do not decide here
    assert any("16 bytes per parameter" in n for n in accurate.notes)
    assert recommend([gpu("L4")], params=1e6, priority="speed").precision == "bf16-mixed"


def test_missing_params_assumes_the_large_model_branch_and_says_so() -> None:
    rec = recommend([gpu("A10")])
    assert rec.params_assumed and rec.precision == "bf16-mixed"
    assert any(s.answer.startswith("assumed yes") for s in rec.path)


def test_fp8_is_mentioned_but_not_recommended_on_hopper() -> None:
    rec = recommend([gpu("H100")], params=70e9)
    assert rec.precision == "bf16-mixed"
    assert any("Transformer Engine" in n for n in rec.notes)
    assert not any("Transformer Engine" in n for n in recommend([gpu("A100")], params=70e9).notes)


def test_amd_mi250x() -> None:
    rec = recommend([gpu("MI250X")], params=1e9)
    assert rec.precision == "bf16-mixed" and rec.tf32_matmul_precision is None and not rec.tf32_available


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        recommend([], params=1e6)
    with pytest.raises(ValueError):
        recommend([gpu("A100")], priority="fast")


# --- measurements --------------------------------------------------------------------------------------------------

A100_INFO = DeviceInfo(kind="cuda", name="NVIDIA A100-SXM4-80GB", compute_capability=(8, 0), memory_bytes=80 * 2**30,
                       torch_version="2.5.1", cuda_version="12.4", bf16=True, tf32=True, fp8=False, fp8_kernel=True)


def timing(fmt: str, tflops: float, size: int = 8192, peak: float | None = None) -> Timing:
    return Timing(fmt, size, 2.0 * size**3 / (tflops * 1e12), repeats=9, inner=4, peak_tflops=peak)


def probe_result(info: DeviceInfo, *timings: Timing, skipped: tuple[Skipped, ...] = ()) -> ProbeResult:
    return ProbeResult(
        device=info, size=8192, budget_s=10.0, elapsed_s=4.2, timings=timings, skipped=skipped,
        numerics=(NumericCheck("fp32", 2048, 3e-7), NumericCheck("bf16", 2048, 3e-3)),
        loss_scaling=LossScaling(1000, 1e-10, 0.1, 65536.0, 0.275, 0.0, 0.0),
    )


def test_timing_math() -> None:
    t = timing("bf16", 250.0, peak=312.0)
    assert t.tflops == pytest.approx(250.0)
    assert t.fraction_of_peak == pytest.approx(250 / 312)
    assert timing("fp32", 10.0).fraction_of_peak is None


def test_measured_speeds_confirm_the_datasheet() -> None:
    result = probe_result(A100_INFO, timing("fp32", 18.0, peak=19.5), timing("tf32", 120.0, peak=156.0),
                          timing("bf16", 250.0, peak=312.0), timing("fp16", 260.0, peak=312.0))
    rec = recommend(params=7e9, probe=result)
    assert rec.measured and rec.targets == ("A100 SXM",)
    assert rec.precision == "bf16-mixed"
    assert any("(measured figures)" in s.reason for s in rec.path)
    assert any("80% of the 312 TFLOP/s datasheet peak" in e for e in rec.evidence)


def test_a_format_measured_slow_is_not_recommended_and_the_output_says_why() -> None:
    # bf16 throttled to TF32 speed (power cap, another job): the datasheet's 2x is not there.
    result = probe_result(A100_INFO, timing("fp32", 18.0), timing("tf32", 120.0), timing("bf16", 125.0),
                          timing("fp16", 126.0))
    rec = recommend(params=7e9, probe=result)
    assert rec.precision == "32-true" and rec.tf32_matmul_precision == "high"
    step = next(s for s in rec.path if s.question.startswith("Is bf16 clearly faster"))
    assert step.answer == "no"
    assert "measured" in step.reason and "datasheet says otherwise" in step.reason


def test_measured_tf32_without_gain_keeps_highest() -> None:
    result = probe_result(A100_INFO, timing("fp32", 18.0), timing("tf32", 19.0), timing("bf16", 250.0))
    rec = recommend(params=1e6, probe=result)
    assert (rec.precision, rec.tf32_matmul_precision) == ("32-true", "highest")


def test_hopper_description_with_fp8_timing() -> None:
    info = DeviceInfo(kind="cuda", name="NVIDIA H100 80GB HBM3", compute_capability=(9, 0), bf16=True, tf32=True,
                      fp8=True, fp8_kernel=True)
    result = probe_result(info, timing("fp32", 50.0, peak=67.0), timing("tf32", 400.0), timing("bf16", 700.0),
                          timing("fp8", 1300.0, peak=1978.9))
    rec = recommend(params=7e9, probe=result)
    assert rec.precision == "bf16-mixed"
    assert any(e.startswith("fp8 matmul") and "66% of the 1978.9" in e for e in rec.evidence)


def test_unknown_card_from_its_description() -> None:
    info = DeviceInfo(kind="cuda", name="NVIDIA Future GPU", compute_capability=(12, 1), bf16=True, tf32=True, fp8=True)
    rec = recommend(params=1e9, probe=probe_result(info, timing("fp32", 30.0), timing("tf32", 90.0),
                                                   timing("bf16", 200.0)))
    assert rec.precision == "bf16-mixed" and rec.targets == ("NVIDIA Future GPU",)


def test_cpu_measurements_decide_cpu_training() -> None:
    cpu = DeviceInfo(kind="cpu", name="Intel Xeon", bf16=True, torch_version="2.13.0")
    fast = recommend(params=1e9, probe=probe_result(cpu, timing("fp32", 1.0, 1024), timing("bf16", 3.0, 1024)))
    assert (fast.device, fast.precision, fast.tf32_matmul_precision) == ("cpu", "bf16-mixed", None)
    slow = recommend(params=1e9, probe=probe_result(cpu, timing("fp32", 1.0, 1024), timing("bf16", 0.3, 1024)))
    assert slow.precision == "32-true"
    assert "0.3x" in slow.path[1].reason
    assert recommend(params=1e9, priority="accuracy", probe=probe_result(
        cpu, timing("fp32", 1.0, 1024), timing("bf16", 3.0, 1024))).precision == "32-true"


def test_evidence_sentences() -> None:
    result = probe_result(A100_INFO, timing("fp32", 18.0, peak=19.5),
                          skipped=(Skipped("fp8", "no FP8 tensor cores (needs compute capability 8.9 or newer)"),))
    sentences = evidence(result)
    assert sentences[0] == ("fp32 (TF32 off) matmul 8192x8192: 18 TFLOP/s (median of 9 x 4 calls), 92% of the "
                            "19.5 TFLOP/s datasheet peak.")
    assert any(s.startswith("fp8: not measured, no FP8 tensor cores") for s in sentences)
    assert any("fp32 3.0e-07, bf16 3.0e-03" in s for s in sentences)
    assert any("27.5% become 0 unscaled, 0.0% after scaling by 2**16" in s for s in sentences)


# --- spelling the recommendation -----------------------------------------------------------------------------------

@pytest.mark.parametrize("target,params", [("A100", 7e9), ("A100", 1e6), ("V100", 7e9), ("RTX 3090", 1e6)])
def test_snippets_parse_and_agree_with_the_recommendation(target: str, params: float) -> None:
    rec = recommend([gpu(target)], params=params)
    out = snippets(rec)
    toml = tomlkit.parse(out["trainer_config"]).unwrap()["trainer_config"]
    assert toml["precision"] == rec.precision
    assert toml.get("tf32_matmul_precision") == rec.tf32_matmul_precision
    yaml = YAML(typ="safe").load(io.StringIO(out["lightning_yaml"]))
    assert yaml["trainer"]["precision"] == rec.precision
    accelerate = YAML(typ="safe").load(io.StringIO(out["accelerate"]))
    assert accelerate["mixed_precision"] == recommendation_settings(rec)["mixed_precision"]
    deepspeed = json.loads(out["deepspeed"])
    assert deepspeed["bf16"]["enabled"] == (rec.dtype == "bf16")
    assert deepspeed["fp16"]["enabled"] == (rec.dtype == "fp16")
    for key in ("lightning_python", "transformers", "pytorch"):
        ast.parse(out[key])
    assert ("GradScaler(" in out["pytorch"]) == rec.grad_scaler
    assert ('precision="' + rec.precision + '"') in out["lightning_python"]
    assert ("tf32=True" in out["transformers"]) == (rec.tf32_matmul_precision == "high")


def test_recommendation_settings() -> None:
    assert recommendation_settings(recommend([gpu("A100")], params=7e9)) == {
        "precision": "bf16-mixed", "tf32_matmul_precision": None, "fp16": False, "bf16": True, "tf32": None,
        "mixed_precision": "bf16"}
    assert recommendation_settings(recommend([gpu("A100")], params=1e6)) == {
        "precision": "32-true", "tf32_matmul_precision": "high", "fp16": False, "bf16": False, "tf32": True,
        "mixed_precision": "no"}
    assert recommendation_settings(recommend([gpu("T4")], params=7e9))["fp16"] is True


@pytest.mark.parametrize("text,value", [("350M", 350e6), ("7B", 7e9), ("1.5b", 1.5e9), ("125k", 125e3),
                                        ("7e9", 7e9), ("7_000_000", 7e6), (" 70 B", 70e9), ("2T", 2e12)])
def test_parse_params(text: str, value: float) -> None:
    assert parse_params(text) == pytest.approx(value)


@pytest.mark.parametrize("text", ["", "B", "seven", "-1B", "0", "nan", "1Q"])
def test_parse_params_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_params(text)


# --- comparing with the user's file --------------------------------------------------------------------------------

def _compare(name: str, text: str, fmt: str, target: str = "A100", params: float = 7e9):  # type: ignore[no-untyped-def]
    return compare_config(load_document(name, text, fmt), recommend([gpu(target)], params=params))  # type: ignore[arg-type]


def test_compare_trainer_config() -> None:
    result = _compare("c.toml", '[trainer_config]\nprecision = "16-mixed"\ntf32_matmul_precision = "high"\n', "toml")
    by_key = {c.key: c for c in result.changes}
    change = by_key["trainer_config.precision"]
    assert (change.action, change.current, change.recommended, change.line, change.column) == (
        "change", "16-mixed", "bf16-mixed", 2, 13)
    assert by_key["trainer_config.tf32_matmul_precision"].action == "remove"  # PL104's advice, same reason
    assert result.needs_changes


def test_compare_equivalent_spellings_are_kept() -> None:
    result = _compare("c.yaml", "trainer:\n  precision: bf16\n  devices: 1\n", "yaml")
    assert [c.action for c in result.changes] == ["keep"]
    assert not result.needs_changes


def test_compare_hf_and_float32_with_tf32() -> None:
    result = _compare("a.json", '{"output_dir": "o", "per_device_train_batch_size": 8, "fp16": true, "bf16": false}',
                      "json", params=1e6)
    actions = {c.key: (c.action, c.recommended) for c in result.changes}
    assert actions["fp16"] == ("change", False)
    assert actions["bf16"] == ("keep", False)
    assert actions["tf32"] == ("add", True)


def test_compare_medium_is_high_on_cuda() -> None:
    result = _compare("c.toml", '[trainer_config]\nprecision = "32-true"\ntf32_matmul_precision = "medium"\n', "toml",
                      params=1e6)
    tf32 = next(c for c in result.changes if c.key.endswith("tf32_matmul_precision"))
    assert tf32.action == "keep" and "same as 'high'" in tf32.reason


def test_compare_file_without_precision_says_add() -> None:
    result = _compare("c.yaml", "trainer:\n  max_epochs: 3\n", "yaml")
    assert [(c.action, c.key, c.recommended) for c in result.changes] == [("add", "precision", "bf16-mixed")]


def test_compare_tf32_on_a_gpu_without_it() -> None:
    result = _compare("c.json", '{"output_dir": "o", "per_device_train_batch_size": 8, "fp16": true, "tf32": true}',
                      "json", target="V100")
    tf32 = next(c for c in result.changes if c.key == "tf32")
    assert tf32.action == "remove" and "ValueError" in tf32.reason


def test_compare_script_autocast_regions() -> None:
    script = (
        "import torch\n"
        "with torch.autocast('cuda', dtype=torch.float16):\n"
        "    pass\n"
        "with torch.autocast('cuda'):\n"
        "    pass\n"
        "with torch.autocast('cpu', dtype=torch.bfloat16):\n"
        "    pass\n"
    )
    result = _compare("train.py", script, "python")
    regions = [c for c in result.changes if c.framework == "torch"]
    assert [(c.action, c.line, c.current, c.recommended) for c in regions] == [
        ("change", 2, "float16", "bfloat16"), ("change", 4, "float16", "bfloat16")]
    assert "add dtype=torch.bfloat16" in regions[1].reason
    assert not any(c.action == "add" and c.key == "precision" for c in result.changes)
    small = _compare("train.py", script, "python", params=1e6)
    assert {c.action for c in small.changes if c.framework == "torch"} == {"remove"}
