"""The probe on a real GPU: CUDA timing, every format of the card, the verdicts and the recommendation.

Marked `gpu` and skipped without CUDA. benchmarks/gpu_acceptance.sh runs them (pytest -m gpu) on a machine lent
with a GPU; everywhere else tests/simulated_gpu.py stands in for the card.
"""

from __future__ import annotations

import shutil
import time

import pytest

torch = pytest.importorskip("torch")

from precisionlint.advise import advisor  # noqa: E402
from precisionlint.advise.probe import device, judge, kernels, measure  # noqa: E402
from precisionlint.advise.probe.results import ProbeResult  # noqa: E402

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

HOPPER_BF16_ACHIEVABLE = (780.0, 800.0)  # H100 / H200 bf16 is judged against about 790 TFLOP/s


@pytest.fixture(scope="module")
def default_run() -> ProbeResult:
    """One probe with the command's defaults (8192-cubed matmuls, a 10 s budget) on GPU 0 alone."""
    return measure.run_probe(device_index=0)


def test_every_format_of_the_card_within_the_default_budget(default_run: ProbeResult) -> None:
    result = default_run
    assert result.device.is_gpu and result.device.compute_capability is not None
    assert [t.fmt for t in result.timings] == kernels.formats_for(result.device)
    assert not [s for s in result.skipped if "not supported" in s.reason], result.skipped
    # torch is already imported here: the probe alone keeps to its budget (a short grace for the last batch)
    assert result.elapsed_s <= measure.DEFAULT_BUDGET_S + 0.5
    for t in result.timings:
        assert t.tflops > 0 and t.repeats >= 3, t
    errors = {n.fmt: n.relative_error for n in result.numerics}
    assert errors["fp32"] < errors["fp16"] < errors["bf16"]
    if "tf32" in errors:
        assert errors["fp32"] < errors["tf32"]
    if "fp8" in errors:
        assert errors["bf16"] < errors["fp8"]


def test_the_tensor_core_formats_are_faster_than_float32(default_run: ProbeResult) -> None:
    fp32 = default_run.timing("fp32")
    half = default_run.timing("bf16") if default_run.device.bf16 else default_run.timing("fp16")
    assert fp32 is not None and half is not None
    assert half.tflops > 2 * fp32.tflops, (half, fp32)


def test_cuda_events_agree_with_the_wall_clock() -> None:
    # One event pair around a batch measures the kernels; for 4096-cubed bf16 matmuls the launches are a
    # negligible part, so the events and a synchronised wall clock agree.
    (info,) = [d for d in device.query_devices() if d.index == 0]
    backend = device.CudaBackend(torch, info, device.CudaApi.of(torch))
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    out = torch.empty(4096, 4096, device="cuda", dtype=torch.float16)
    call = lambda: torch.mm(a, b, out=out)  # noqa: E731
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    inner = 50
    began = time.perf_counter()
    event_s = backend.time_batch(call, inner)
    torch.cuda.synchronize()
    wall_s = (time.perf_counter() - began) / inner
    assert 0.7 * wall_s <= event_s <= 1.02 * wall_s, (event_s, wall_s)


def test_the_recommendation_from_the_card(default_run: ProbeResult) -> None:
    rec = advisor.recommend(probe=default_run)  # no --params: the large-model branch
    assert rec.measured and rec.device == "gpu"
    if default_run.device.bf16:
        assert rec.precision == "bf16-mixed" and not rec.grad_scaler
    if default_run.device.fp8 and default_run.device.fp8_kernel:
        assert any(n.startswith("FP8 is available on this GPU: fp8 (e4m3, per-tensor scales) matmuls measured")
                   for n in rec.notes), rec.notes


def test_hopper_bf16_is_judged_against_the_achievable_figure(default_run: ProbeResult) -> None:
    if not any(name in default_run.device.name for name in ("H100", "H200", "H800", "GH200")):
        pytest.skip(f"not a Hopper card: {default_run.device.name}")
    bf16 = default_run.timing("bf16")
    assert bf16 is not None and bf16.achievable_tflops is not None
    assert HOPPER_BF16_ACHIEVABLE[0] <= bf16.achievable_tflops <= HOPPER_BF16_ACHIEVABLE[1]
    verdict = next(v for v in judge.verdicts(default_run) if v.fmt == "bf16")
    assert verdict.status in ("ok", "low") and "best published measurement" in verdict.sentence


@pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="no nvidia-smi")
def test_the_driver_is_read_during_the_run(default_run: ProbeResult) -> None:
    telemetry = default_run.telemetry
    assert telemetry is not None and telemetry.samples >= 1
    assert telemetry.sm_clock_mhz is not None and telemetry.sm_clock_mhz > 0
