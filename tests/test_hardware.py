"""The GPU table, name matching, target resolution and local detection (nvidia-smi faked on PATH)."""

from __future__ import annotations

import os
import pickle
import stat
from pathlib import Path

import pytest

from precisionlint.advise.local_gpus import local_gpus
from precisionlint.advise.probe import device as probe_device
from precisionlint.advise.probe.results import DeviceInfo
from precisionlint.hardware import detect
from precisionlint.hardware.capability import capabilities, gpu_from_capability
from precisionlint.hardware.detect import detect_local, device_from_description, parse_nvidia_smi
from precisionlint.hardware.gpu import FORMATS, UnknownGpuError
from precisionlint.hardware.names import find_gpu
from precisionlint.hardware.table import GPUS
from precisionlint.hardware.targets import resolve_targets


@pytest.mark.parametrize(
    "name,expected",
    [
        ("A100", "A100 SXM"),
        ("a100", "A100 SXM"),
        ("NVIDIA A100-SXM4-80GB", "A100 SXM"),
        ("NVIDIA A100-SXM4-40GB", "A100 SXM"),
        ("a100-80gb", "A100 SXM"),
        ("NVIDIA A100-PCIE-40GB", "A100 PCIe"),
        ("NVIDIA A100 80GB PCIe", "A100 PCIe"),
        ("Tesla V100-SXM2-16GB", "V100 SXM2"),
        ("Tesla V100-PCIE-32GB", "V100 PCIe"),
        ("v100 sxm", "V100 SXM2"),
        ("Tesla T4", "T4"),
        ("t4 pcie", "T4"),
        ("Tesla P100-PCIE-16GB", "P100 PCIe"),
        ("NVIDIA GeForce RTX 3090", "RTX 3090"),
        ("RTX3090", "RTX 3090"),
        ("rtx_3090", "RTX 3090"),
        ("NVIDIA GeForce RTX 2080 Ti", "RTX 2080 Ti"),
        ("rtx-2080-ti", "RTX 2080 Ti"),
        ("NVIDIA GeForce RTX 4090", "RTX 4090"),
        ("NVIDIA A10G", "A10G"),
        ("NVIDIA A10", "A10"),
        ("NVIDIA A40", "A40"),
        ("NVIDIA RTX A6000", "RTX A6000"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("H100 SXM5", "H100 SXM"),
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("h100 80 GB pcie", "H100 PCIe"),
        ("NVIDIA H100 NVL", "H100 NVL"),
        ("NVIDIA H200", "H200 SXM"),
        ("NVIDIA B200", "B200"),
        ("AMD Instinct MI250X/MI250", "MI250X"),
        ("mi300x", "MI300X"),
    ],
)
def test_find_gpu_matches_the_names_people_and_drivers_use(name: str, expected: str) -> None:
    gpu = find_gpu(name)
    assert gpu is not None, name
    assert gpu.name == expected


@pytest.mark.parametrize("name", ["", "  ", "GTX 1080", "RTX 3060", "H1OO", "nvidia", "80GB"])
def test_find_gpu_returns_none_for_unknown_names(name: str) -> None:
    assert find_gpu(name) is None


def test_resolve_targets_in_order_without_duplicates_and_with_commas() -> None:
    gpus = resolve_targets(["A100,V100", "NVIDIA A100-SXM4-80GB", "t4"])
    assert [g.name for g in gpus] == ["A100 SXM", "V100 SXM2", "T4"]


def test_unknown_gpu_error_lists_close_matches() -> None:
    with pytest.raises(UnknownGpuError) as info:
        resolve_targets(["A100", "H1OO"])
    assert info.value.name == "H1OO"
    assert "H100 SXM" in info.value.suggestions
    assert "H1OO" in str(info.value) and "H100 SXM" in str(info.value)


def test_table_is_consistent_with_the_capability_rules() -> None:
    names = [g.name for g in GPUS]
    assert len(names) == len(set(names))
    for gpu in GPUS:
        assert gpu.source and "http" in gpu.source, gpu.name
        assert set(gpu.peak_tflops) <= set(FORMATS), gpu.name
        # A figure exists exactly for the formats the hardware runs natively; a card listed for its compute
        # capability alone (no datasheet figures sourced yet) has none at all.
        if gpu.peak_tflops:
            assert "fp32" in gpu.peak_tflops, gpu.name
            assert ("bf16" in gpu.peak_tflops) == gpu.bf16, gpu.name
            assert ("tf32" in gpu.peak_tflops) == gpu.tf32, gpu.name
            assert ("fp8" in gpu.peak_tflops) == gpu.fp8, gpu.name
        if gpu.vendor == "nvidia":
            cc = gpu.compute_capability
            assert cc is not None
            assert gpu.bf16 == (cc >= (8, 0)) == gpu.tf32, gpu.name
            assert gpu.fp8 == (cc >= (8, 9)), gpu.name
        else:
            assert gpu.compute_capability is None and gpu.gfx_arch, gpu.name


@pytest.mark.parametrize(
    "name,figures",
    [  # FACTS.md figures (dense, fp32 accumulate)
        ("A100", {"fp32": 19.5, "tf32": 156.0, "bf16": 312.0, "fp16": 312.0}),
        ("V100", {"fp32": 15.7, "fp16": 125.0}),
        ("T4", {"fp32": 8.1, "fp16": 65.0}),
        ("RTX 3090", {"fp32": 35.6, "tf32": 35.6, "bf16": 71.0}),
        ("RTX 4090", {"fp32": 82.6, "tf32": 82.6, "bf16": 165.2, "fp8": 330.3}),
        ("H100", {"fp32": 67.0, "tf32": 494.7, "bf16": 989.4, "fp8": 1978.9}),
    ],
)
def test_peak_figures_match_facts(name: str, figures: dict[str, float]) -> None:
    gpu = find_gpu(name)
    assert gpu is not None
    for fmt, value in figures.items():
        assert gpu.peak_tflops[fmt] == pytest.approx(value, rel=0.01), (name, fmt)


def test_at_least_the_required_accelerators_are_known() -> None:
    for name in ["P100", "V100", "T4", "RTX 2080 Ti", "A10", "A10G", "A40", "A100", "RTX 3090", "RTX 4090", "L4",
                 "L40S", "H100 SXM", "H100 PCIe", "H200", "B200", "MI250X", "MI300X"]:
        assert find_gpu(name) is not None, name


def test_gpu_is_picklable_and_hashable() -> None:
    gpu = find_gpu("H100")
    assert gpu is not None
    clone = pickle.loads(pickle.dumps(gpu))
    assert clone == gpu and hash(clone) == hash(gpu)
    assert clone.peak_tflops == gpu.peak_tflops
    assert len({gpu, clone, find_gpu("A100")}) == 2


def test_speedups_and_fast_fp16() -> None:
    a100, rtx3090, p100, t4 = (find_gpu(n) for n in ("A100", "RTX 3090", "P100", "T4"))
    assert a100 and rtx3090 and p100 and t4
    assert a100.speedup("tf32") == pytest.approx(8.0)
    assert rtx3090.speedup("tf32") == pytest.approx(1.0)  # GeForce: TF32 at the float32 rate
    assert a100.speedup("fp8") is None
    assert p100.fast_fp16 and t4.fast_fp16
    assert not gpu_from_capability("NVIDIA GeForce GTX 1080", (6, 1)).fast_fp16  # fp16 at 1/64 rate


@pytest.mark.parametrize(
    "cc,gfx,expected",
    [
        ((7, 0), None, (False, False, False)),
        ((7, 5), None, (False, False, False)),
        ((8, 0), None, (True, True, False)),
        ((8, 6), None, (True, True, False)),
        ((8, 9), None, (True, True, True)),
        ((9, 0), None, (True, True, True)),
        ((12, 0), None, (True, True, True)),
        (None, "gfx90a", (True, False, False)),
        (None, "gfx942:sramecc+:xnack-", (True, True, True)),
        (None, "gfx1030", (False, False, False)),
        (None, None, (False, False, False)),
    ],
)
def test_capabilities_from_compute_capability_or_isa(cc, gfx, expected) -> None:  # type: ignore[no-untyped-def]
    assert capabilities(cc, gfx) == expected


def test_device_from_description_uses_the_table_when_the_name_is_known() -> None:
    info = DeviceInfo(kind="cuda", name="NVIDIA A100-SXM4-80GB", compute_capability=(8, 0),
                      memory_bytes=80 * 2**30, bf16=True, tf32=True)
    gpu = device_from_description(info)
    assert gpu.name == "A100 SXM" and gpu.in_table
    assert gpu.peak_tflops["bf16"] == 312.0
    assert gpu.memory_gb == 80.0


def test_device_from_description_builds_unknown_cards_from_their_capability() -> None:
    info = DeviceInfo(kind="cuda", name="NVIDIA GeForce RTX 5060", compute_capability=(12, 0))
    gpu = device_from_description(info)
    assert (gpu.name, gpu.in_table, gpu.bf16, gpu.tf32, gpu.fp8) == ("NVIDIA GeForce RTX 5060", False, True, True,
                                                                     True)
    assert gpu.peak_tflops == {} and gpu.architecture.startswith("Blackwell")
    old = device_from_description(DeviceInfo(kind="cuda", name="Quadro P4000", compute_capability=(6, 1)))
    assert (old.bf16, old.tf32, old.fp8, old.architecture) == (False, False, False, "Pascal")
    amd = device_from_description(DeviceInfo(kind="cuda", name="AMD Instinct MI325X", gcn_arch="gfx942"))
    assert (amd.vendor, amd.bf16, amd.fp8, amd.gfx_arch) == ("amd", True, True, "gfx942")


def test_a_known_name_with_a_different_capability_is_not_trusted() -> None:
    gpu = device_from_description(DeviceInfo(kind="cuda", name="A100", compute_capability=(7, 5)))
    assert not gpu.in_table and not gpu.bf16


def test_parse_nvidia_smi_output() -> None:
    gpus = parse_nvidia_smi("NVIDIA A100-SXM4-80GB, 8.0\nNVIDIA A100-SXM4-80GB, 8.0\nNVIDIA Mystery X, 8.9\n\n")
    assert [g.name for g in gpus] == ["A100 SXM", "A100 SXM", "NVIDIA Mystery X"]
    assert gpus[2].fp8 and not gpus[2].in_table
    assert [g.name for g in parse_nvidia_smi("Tesla T4\n")] == ["T4"]


def _fake_nvidia_smi(directory: Path, script: str) -> None:
    path = directory / "nvidia-smi"
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_detect_local_asks_nvidia_smi(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_nvidia_smi(tmp_path, 'echo "NVIDIA H100 80GB HBM3, 9.0"\necho "NVIDIA H100 80GB HBM3, 9.0"\n')
    monkeypatch.setenv("PATH", str(tmp_path))
    gpus = detect_local()
    assert [g.name for g in gpus] == ["H100 SXM", "H100 SXM"]
    assert [g.name for g in resolve_targets(["auto"])] == ["H100 SXM"]


def test_detect_local_retries_without_compute_cap_on_old_drivers(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_nvidia_smi(tmp_path, 'case "$1" in *compute_cap*) echo "Field \\"compute_cap\\" is not a valid field '
                               'to query." >&2; exit 2;; esac\necho "Tesla V100-SXM2-16GB"\n')
    monkeypatch.setenv("PATH", str(tmp_path))
    assert [g.name for g in detect_local()] == ["V100 SXM2"]


def test_local_gpus_without_nvidia_smi_asks_pytorch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no nvidia-smi: falls back to the probe's torch query
    monkeypatch.setattr(detect, "_nvidia_smi", lambda: None)
    monkeypatch.setattr(probe_device, "query_devices", lambda: (DeviceInfo(kind="cpu", name="CPU"),))
    assert local_gpus() == ()
    monkeypatch.setattr(probe_device, "query_devices",
                        lambda: (DeviceInfo(kind="cuda", name="NVIDIA L4", compute_capability=(8, 9)),))
    assert [g.name for g in local_gpus()] == ["L4"]
    assert [g.name for g in resolve_targets(["auto"], local=local_gpus)] == ["L4"]
    # The hardware layer alone asks nvidia-smi only: PyTorch is reached through the function passed in.
    assert detect_local() == () and resolve_targets(["auto"]) == ()


def test_local_gpus_without_torch_is_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(detect, "_nvidia_smi", lambda: None)

    def unavailable() -> tuple[DeviceInfo, ...]:
        raise probe_device.ProbeUnavailable(probe_device.INSTALL_HINT)

    monkeypatch.setattr(probe_device, "query_devices", unavailable)
    assert local_gpus() == ()


def test_hardware_module_does_not_import_torch() -> None:
    import subprocess
    import sys

    code = ("import sys; import precisionlint.hardware, precisionlint.advise.advisor, "
            "precisionlint.cli.advise_command; "
            "import precisionlint.checks as c; c.all_rules(); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parent.parent, env={**os.environ})
    assert out.stdout.strip() == "False", out.stderr


# --- the hardware rules on a fleet: every target must be satisfied ----------------------------------------------

def _findings(text: str, name: str, gpus: list[str], codes: tuple[str, ...] = ("PL3",)) -> list:  # type: ignore[type-arg]
    from precisionlint.checks import expand_selector
    from precisionlint.engine.check import check_bytes
    from precisionlint.engine.options import EngineOptions
    from precisionlint.sources import format_of

    rules = [r for code in codes for r in expand_selector(code)]
    fmt = format_of(name)
    assert fmt is not None
    options = EngineOptions(rules=rules, gpus=resolve_targets(gpus))
    return check_bytes(name, text.encode(), fmt, options).findings


FP16 = '[trainer_config]\nprecision = "16-mixed"\n'
BF16 = '[trainer_config]\nprecision = "bf16-mixed"\n'


def test_no_target_gpu_no_hardware_finding() -> None:
    assert _findings(FP16, "a.toml", []) == []


def test_fp16_on_a_fleet_with_a_gpu_without_bf16_is_right() -> None:
    assert [f.code for f in _findings(FP16, "a.toml", ["A100", "H100"])] == ["PL301"]
    assert _findings(FP16, "a.toml", ["A100", "V100"]) == []


def test_one_finding_names_every_offending_gpu_of_the_fleet() -> None:
    (finding,) = _findings(BF16, "a.toml", ["A100", "V100", "T4", "NVIDIA A100-SXM4-80GB"])
    assert finding.code == "PL302"
    assert "V100 SXM2 (cc 7.0) and T4 (cc 7.5)" in finding.message and "A100" not in finding.message
    (both,) = _findings(FP16, "a.toml", ["A100", "L4"])
    assert "A100 SXM (cc 8.0) and L4 (cc 8.9), which all have native bf16" in both.message


def test_hf_tf32_is_an_error_and_torch_tf32_only_information() -> None:
    findings = _findings('{"output_dir": "o", "per_device_train_batch_size": 8, "tf32": true}', "args.json", ["V100"])
    assert [(f.code, f.severity.label) for f in findings] == [("PL303", "error")]
    findings = _findings('[trainer_config]\nprecision = "32-true"\ntf32_matmul_precision = "medium"\n', "a.toml",
                         ["T4"])
    assert [(f.code, f.severity.label) for f in findings] == [("PL303", "info")]
    # Transformers checks for a CUDA build: ROCm rejects tf32=True even on an MI300X with XF32.
    found = _findings('{"output_dir": "o", "per_device_train_batch_size": 8, "tf32": true}', "args.json", ["MI300X"])
    assert [f.code for f in found] == ["PL303"]
    assert _findings('{"output_dir": "o", "per_device_train_batch_size": 8, "tf32": true}', "args.json", ["H100"]) == []


def test_fp8_needs_every_gpu_to_have_fp8() -> None:
    te = "trainer:\n  precision: transformer-engine\n  _target_: lightning.pytorch.Trainer\n"
    assert _findings(te, "a.yaml", ["H100", "L4"]) == []
    (finding,) = _findings(te, "a.yaml", ["H100", "A100"])
    assert finding.code == "PL304" and "A100 SXM" in finding.message and "H100" not in finding.message
    assert "'bf16-mixed'" in finding.message
    (older,) = _findings(te, "a.yaml", ["V100"])
    assert "'16-mixed'" in older.message


def test_tf32_not_enabled_stays_quiet_where_tf32_does_not_help() -> None:
    fp32 = '[trainer_config]\nprecision = "32-true"\n'
    assert [f.code for f in _findings(fp32, "a.toml", ["A100"])] == ["PL305"]
    for quiet in (["RTX 3090"], ["A10G"], ["V100"], ["MI300X"]):
        assert _findings(fp32, "a.toml", quiet) == [], quiet
    assert _findings(fp32 + 'tf32_matmul_precision = "highest"\n', "a.toml", ["A100"]) == []
    assert _findings("# TF32 stays off on purpose\n" + fp32, "a.toml", ["A100"]) == []
    (fleet,) = _findings(fp32, "a.toml", ["A100", "RTX 3090"])
    assert "A100 SXM" in fleet.message and "RTX 3090" not in fleet.message


def test_unknown_card_from_auto_detection_gets_capability_based_rules() -> None:
    from precisionlint.checks import expand_selector
    from precisionlint.engine.check import check_bytes
    from precisionlint.engine.options import EngineOptions

    card = gpu_from_capability("NVIDIA GeForce RTX 5090", (12, 0))
    options = EngineOptions(rules=expand_selector("PL3"), gpus=(card,))
    findings = check_bytes("a.toml", FP16.encode(), "toml", options).findings
    assert [f.code for f in findings] == ["PL301"]
    # No datasheet figures: PL305 does not guess that TF32 pays off.
    fp32 = b'[trainer_config]\nprecision = "32-true"\n'
    assert check_bytes("a.toml", fp32, "toml", options).findings == []
