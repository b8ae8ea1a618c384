"""The probe, for real on this machine's CPU with small sizes and budgets, and its GPU-only parts through DeviceInfo."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from precisionlint.advise.probe import device, kernels, measure, numerics, timing  # noqa: E402
from precisionlint.advise.probe.results import DeviceInfo, LossScaling, ProbeResult, Timing  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NO_GPU = not torch.cuda.is_available()

# Makes `import torch` fail in a child interpreter, as on a machine without it (nothing is uninstalled).
BLOCK_TORCH = (
    "import sys\n"
    "class _NoTorch:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name == 'torch' or name.startswith('torch.'):\n"
    "            raise ModuleNotFoundError(\"No module named 'torch'\", name=name)\n"
    "        return None\n"
    "sys.meta_path.insert(0, _NoTorch())\n"
    "for name in [m for m in sys.modules if m == 'torch' or m.startswith('torch.')]:\n"
    "    del sys.modules[name]\n"
)


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU")
def test_query_devices_describes_the_cpu_without_a_gpu() -> None:
    (info,) = device.query_devices()
    assert info.kind == "cpu" and not info.is_gpu
    assert info.name and info.torch_version == str(torch.__version__)
    assert (info.tf32, info.fp8, info.compute_capability) == (False, False, None)


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU")
def test_run_probe_measures_the_cpu_for_real() -> None:
    messages: list[str] = []
    began = time.perf_counter()
    result = measure.run_probe(budget_s=1.5, size=128, progress=messages.append)
    took = time.perf_counter() - began
    assert took < 5.0
    assert result.size == 128 and result.device.kind == "cpu"
    assert [t.fmt for t in result.timings] == ["fp32", "bf16"]
    for t in result.timings:
        assert t.median_s > 0 and t.repeats >= 1 and t.inner >= 1 and t.tflops > 0
        assert t.peak_tflops is None and t.fraction_of_peak is None  # no datasheet peak for a CPU
    errors = {n.fmt: n.relative_error for n in result.numerics}
    assert errors["fp32"] < 1e-5
    assert errors["bf16"] > 1e-4 and errors["bf16"] > errors["fp32"]
    if "fp16" in errors:  # 3 more significand bits than bf16
        assert errors["fp32"] < errors["fp16"] < errors["bf16"]
    assert result.loss_scaling is not None
    assert result.loss_scaling.underflow_unscaled > 0.2 and result.loss_scaling.underflow_scaled == 0.0
    assert any(m.startswith("timing fp32") for m in messages) and any("bf16" in m for m in messages)
    json.dumps(result.to_json())


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU")
def test_run_probe_rounds_the_size_for_fp8_kernels() -> None:
    result = measure.run_probe(budget_s=0.5, size=100)
    assert result.size == 112
    assert all(t.size == 112 for t in result.timings)


def _cpu_backend() -> device.Backend:
    return device.Backend(torch, device.describe_cpu(str(torch.__version__)))


def test_measure_takes_the_median_within_the_share() -> None:
    calls = []

    def work() -> None:
        calls.append(1)
        time.sleep(0.005)

    began = time.perf_counter()
    result = timing.measure(_cpu_backend(), work, share_s=0.4)
    assert time.perf_counter() - began < 1.5
    assert 0.004 < result.median_s < 0.05
    assert timing.MIN_REPEATS <= len(result.samples_s) <= timing.MAX_REPEATS
    # one untimed call, the timed estimate (one call, then four when it is short), the warm-up batches, the repeats
    assert len(calls) == 1 + 1 + 4 + result.warmup_batches * result.inner + len(result.samples_s) * result.inner


class _WarmingDevice(device.Backend):
    """A device whose timer reports a cold clock for the first batches: 2 ms per call falling to 1 ms by the
    sixth batch, then steady (a GPU's clock ramping up). Wall time passes as reported, so the planning is real."""

    def __init__(self) -> None:
        super().__init__(torch, DeviceInfo(kind="cuda", name="warming"))
        self.batches = 0

    def time_batch(self, fn: object, inner: int) -> float:
        self.batches += 1
        per_call = 1e-3 * (1.0 + max(0.0, (6 - self.batches) / 5))
        time.sleep(per_call * inner)
        return per_call


def test_measure_warms_up_until_the_clock_settles() -> None:
    device_ = _WarmingDevice()
    result = timing.measure(device_, lambda: None, share_s=1.0)
    assert result.settled and result.warmup_batches >= 3
    assert result.median_s == pytest.approx(1e-3)  # none of the cold batches is in the median
    assert all(s == pytest.approx(1e-3) for s in result.samples_s)


def test_measure_gives_up_warming_within_its_share() -> None:
    class NeverSettles(_WarmingDevice):
        def time_batch(self, fn: object, inner: int) -> float:
            self.batches += 1
            time.sleep(1e-3 * inner)
            return 1e-3 * (1.1 if self.batches % 2 else 1.0)

    began = time.perf_counter()
    result = timing.measure(NeverSettles(), lambda: None, share_s=0.6)
    assert not result.settled and time.perf_counter() - began < 1.2
    assert len(result.samples_s) >= timing.MIN_REPEATS


def test_measure_a_slow_call_still_measures_once() -> None:
    result = timing.measure(_cpu_backend(), lambda: time.sleep(0.05), share_s=0.05)
    assert len(result.samples_s) >= 1 and result.inner == 1 and result.median_s >= 0.04


def test_fp8_path_through_the_scaled_matmul() -> None:
    # The fp8 code runs on the CPU too (both torch._scaled_mm and torch.nn.functional.scaled_mm have CPU kernels
    # in torch 2.13), so the GPU path's arithmetic is tested here; its speed is tested on a simulated GPU.
    if device.scaled_mm_api(torch) is None:
        pytest.skip("this torch has no fp8 matmul")
    info = DeviceInfo(kind="cuda", name="NVIDIA H100 80GB HBM3", compute_capability=(9, 0), bf16=True, tf32=True,
                      fp8=True, fp8_kernel=True)
    a, b = torch.randn(64, 64), torch.randn(64, 64)
    reference = a.double() @ b.double()
    for fmt in ("fp8", "fp8-fast"):
        out = kernels.matmul_fn(torch, fmt, a, b, info)()
        assert out.dtype == torch.bfloat16
        error = float((out.double() - reference).abs().max() / reference.abs().mean())
        assert 1e-3 < error < 0.5  # e4m3: 3 mantissa bits
    backend = device.Backend(torch, info)
    checks = numerics.check_formats(backend, ["fp32", "bf16", "fp8"], 64)
    assert [c.fmt for c in checks][:3] == ["fp32", "bf16", "fp8"]
    assert checks[2].relative_error > checks[1].relative_error > checks[0].relative_error


def test_private_scaled_mm_is_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    # A torch without the public API (before torch.nn.functional.scaled_mm existed) goes through torch._scaled_mm.
    if not hasattr(torch, "_scaled_mm"):
        pytest.skip("this torch has no torch._scaled_mm")
    monkeypatch.delattr(torch.nn.functional, "scaled_mm", raising=False)
    assert device.scaled_mm_api(torch) == "torch._scaled_mm"
    info = DeviceInfo(kind="cuda", name="x", compute_capability=(9, 0), fp8=True, fp8_kernel=True)
    a, b = torch.randn(32, 48), torch.randn(48, 16)
    out = kernels.matmul_fn(torch, "fp8", a, b, info)()
    assert out.shape == (32, 16)
    assert kernels.api_for(torch, "fp8") == "torch._scaled_mm"


def test_tf32_note_error_measure() -> None:
    # relative_error = max |product - float64 product| / mean |float64 product|, as in PyTorch's TF32 note.
    (check,) = numerics.check_formats(_cpu_backend(), ["fp32"], 64)[:1]
    generator = torch.Generator().manual_seed(1234)
    a = torch.randn(64, 64, dtype=torch.float64, generator=generator)
    b = torch.randn(64, 64, dtype=torch.float64, generator=generator)
    full = a @ b
    error = float((a.float() @ b.float()).double().sub(full).abs().max())
    assert check.max_abs_error == pytest.approx(error)
    assert check.relative_error == pytest.approx(error / float(full.abs().mean()))


def test_no_fp8_kernel_is_reported_not_crashed() -> None:
    info = DeviceInfo(kind="cuda", name="x", compute_capability=(9, 0), fp8=True, fp8_kernel=False)
    with pytest.raises(RuntimeError, match="scaled_mm"):
        kernels.matmul_fn(torch, "fp8", torch.randn(16, 16), torch.randn(16, 16), info)


@pytest.mark.parametrize(
    "info,formats",
    [
        (DeviceInfo(kind="cpu", name="cpu"), ["fp32", "bf16"]),
        (DeviceInfo(kind="cuda", name="V100", compute_capability=(7, 0)), ["fp32", "fp16", "bf16"]),
        (DeviceInfo(kind="cuda", name="A100", compute_capability=(8, 0), bf16=True, tf32=True),
         ["fp32", "tf32", "bf16", "fp16"]),
        (DeviceInfo(kind="cuda", name="H100", compute_capability=(9, 0), bf16=True, tf32=True, fp8=True),
         ["fp32", "tf32", "bf16", "fp16", "fp8", "fp8-fast"]),
        (DeviceInfo(kind="cuda", name="MI300X", gcn_arch="gfx942", bf16=True, tf32=True, fp8=True),
         ["fp32", "tf32", "bf16", "fp16", "fp8"]),
    ],
)
def test_formats_measured_per_device(info: DeviceInfo, formats: list[str]) -> None:
    assert kernels.formats_for(info) == formats


def test_matmul_precision_is_restored() -> None:
    before = torch.get_float32_matmul_precision()
    with kernels.matmul_precision(torch, "high"):
        assert torch.get_float32_matmul_precision() == "high"
    assert torch.get_float32_matmul_precision() == before


def test_loss_scaling_check_matches_the_fp16_threshold() -> None:
    result = numerics.loss_scaling_check(torch, samples=1 << 14)
    # Log-uniform over [1e-10, 1e-1]: the share below 2**-25 is (log10(2**-25) + 10) / 9.
    expected = (math.log10(2.0**-25) + 10) / 9
    assert result.underflow_unscaled == pytest.approx(expected, abs=0.02)
    assert result.underflow_scaled == 0.0 and result.overflow_scaled == 0.0
    assert result.flush_threshold == 2.0**-25


def test_result_types_serialise() -> None:
    info = DeviceInfo(kind="cuda", name="NVIDIA L4", compute_capability=(8, 9), bf16=True, tf32=True, fp8=True)
    result = ProbeResult(info, 4096, 10.0, 3.0, timings=(Timing("bf16", 4096, 0.002, 5, 3, 121.0),),
                         loss_scaling=LossScaling(10, 1e-10, 0.1, 65536.0, 0.3, 0.0, 0.0))
    data = json.loads(json.dumps(result.to_json()))
    assert data["device"]["compute_capability"] == "8.9"
    assert data["timings"][0]["tflops"] == pytest.approx(2 * 4096**3 / 0.002 / 1e12, rel=1e-3)
    assert data["timings"][0]["fraction_of_peak"] == pytest.approx(0.568, abs=0.001)
    assert result.timing("bf16") is not None and result.timing("fp8") is None
    again = ProbeResult.from_json(data)
    assert again.to_json() == data  # exact here: these figures survive the rounding


def test_without_torch_the_probe_says_how_to_install_it() -> None:
    code = BLOCK_TORCH + (
        "from precisionlint.advise.probe import device, measure\n"
        "try:\n"
        "    measure.run_probe(budget_s=1)\n"
        "except device.ProbeUnavailable as exc:\n"
        "    print('unavailable:', exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("unavailable:") and "pip install '.[probe]'" in out.stdout
