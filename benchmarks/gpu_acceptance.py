"""The GPU acceptance run of `advise --probe`: one command that leaves every piece of evidence in one folder.

    python3 benchmarks/gpu_acceptance.py --prepare      # dev machine: the pure-Python wheels into .gpu-wheels/
    python3 benchmarks/gpu_acceptance.py [OUTDIR]       # GPU machine: OUTDIR defaults to $OUT
    python3 benchmarks/gpu_acceptance.py --dry [OUTDIR] # anywhere, CPU only: the same run, checked

(benchmarks/gpu_acceptance.sh runs this with python3.) A machine lent with a GPU has its own python3 and torch
but no network, so nothing is installed there: the dependencies it lacks (click, tomlkit, ruamel.yaml, PyYAML,
and pytest for the GPU tests) are unpacked from the wheels that --prepare downloaded into .gpu-wheels/ (an
ignored folder, carried with the working tree) and put on PYTHONPATH for the commands, never into the system.

The run, each step with its wall time, exit code, stdout and stderr in OUTDIR:

    nvidia-smi                      the table, and name / driver / compute capability / clocks as CSV
    advise --probe --output-format json      probe.json (the default budget, as a user runs it)
    advise --probe --report report.html      probe.txt, report.html
    check --gpu auto examples/project        check.txt
    pytest -m gpu tests/test_probe_on_gpu.py gpu-tests.txt, gpu-tests.xml

then summary.json (every step, what the run expects of a GPU and whether it held) and fixture.json (probe.json
with the device, driver and torch it came from: the file to commit under tests/fixtures/probe/). Last it checks
its own output format and exits 2 if that is wrong, 1 if an expectation failed, 0 otherwise. --dry skips
nvidia-smi, measures the CPU with a short budget and expects what a CPU gives; tests/test_gpu_acceptance.py runs
it. Only the standard library here: this file runs before the dependencies are on the path.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import time
import zipfile
from importlib.util import find_spec
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WHEELS = ROOT / ".gpu-wheels"
# import name -> distribution. pytest's own needs follow it; exceptiongroup and tomli only below Python 3.11.
DEPENDENCIES = {
    "click": "click", "tomlkit": "tomlkit", "ruamel.yaml": "ruamel.yaml", "yaml": "PyYAML",
    "pytest": "pytest", "pluggy": "pluggy", "iniconfig": "iniconfig", "packaging": "packaging",
    "pygments": "Pygments", "exceptiongroup": "exceptiongroup", "tomli": "tomli",
}
GPU_TESTS = ("tests/test_probe_on_gpu.py",)
SUMMARY_VERSION = 1
STEP_TIMEOUT_S = 150  # each step; the whole run stays under five minutes on a GPU
PROBE_WALL_LIMIT_S = 10.0  # `advise --probe` with the default budget, torch's import included
H100_BF16_ACHIEVABLE = (780.0, 800.0)  # what bf16 on an H100 / H200 is judged against (about 790 TFLOP/s)
SMI_FIELDS = "name,driver_version,compute_cap,memory.total,power.limit,clocks.max.sm,pci.bus_id"


# ---------------------------------------------------------------------------------------------------------------
# Dependencies: downloaded on the dev machine, unpacked on the GPU machine where missing
# ---------------------------------------------------------------------------------------------------------------

def prepare(folder: Path = WHEELS) -> int:
    """Download the wheels of DEPENDENCIES into `folder` (needs pip and a package index; run it here, not there)."""
    folder.mkdir(parents=True, exist_ok=True)
    download = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--dest", str(folder)]
    # Pure-Python wheels, whatever Python the GPU machine has (tomli also ships compiled ones for one Python).
    pure = sorted(d for d in set(DEPENDENCIES.values()) if d != "PyYAML")
    done = subprocess.run([*download, "--platform", "any", "--implementation", "py", "--abi", "none",
                           "--python-version", "3.10", *pure], check=False)
    if done.returncode == 0:
        # PyYAML has no pure-Python wheel: this platform's carries the pure package too, and where its C
        # extension does not load (another Python or CPU) yaml falls back to it.
        done = subprocess.run([*download, "PyYAML"], check=False)
    if done.returncode == 0:
        names = sorted(p.name for p in folder.glob("*.whl"))
        (folder / "MANIFEST.txt").write_text("\n".join(names) + "\n", encoding="utf-8")
        size = sum(p.stat().st_size for p in folder.glob("*.whl")) // 1024
        print(f"gpu_acceptance: {len(names)} wheels in {folder} ({size} KiB); carry {folder.name} with the run")
    return done.returncode


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def dependency_path(site: Path) -> tuple[list[str], list[str]]:
    """(unpacked distributions, still missing ones): every DEPENDENCIES entry this Python cannot import is
    unpacked from .gpu-wheels into `site`, which the commands get on PYTHONPATH."""
    wheels = {_normal(p.name.split("-", 1)[0]): p for p in sorted(WHEELS.glob("*.whl"))}
    unpacked, missing = [], []
    for module, dist in DEPENDENCIES.items():
        if module in ("exceptiongroup", "tomli") and sys.version_info >= (3, 11):
            continue
        try:
            if find_spec(module) is not None:
                continue
        except ModuleNotFoundError:  # "ruamel.yaml" without "ruamel"
            pass
        wheel = wheels.get(_normal(dist))
        if wheel is None:
            missing.append(dist)
            continue
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)
        unpacked.append(wheel.name)
    return unpacked, missing


# ---------------------------------------------------------------------------------------------------------------
# Steps
# ---------------------------------------------------------------------------------------------------------------

def run_step(out: Path, name: str, argv: list[str], env: dict[str, str], timeout: float = STEP_TIMEOUT_S,
             stdout_name: str | None = None) -> dict[str, Any]:
    """Run one command; its stdout and stderr go to files in `out`. Never raises for the command's failure."""
    stdout_file = stdout_name or f"{name}.stdout.txt"
    stderr_file = f"{name}.stderr.txt"
    began = time.perf_counter()
    try:
        done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout,
                              check=False)
        rc, stdout, stderr = done.returncode, done.stdout, done.stderr
    except FileNotFoundError as exc:
        rc, stdout, stderr = 127, "", f"{exc}\n"
    except subprocess.TimeoutExpired as exc:
        rc = 124
        stdout = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode("utf-8", "replace")
        stderr = f"timed out after {timeout:g} s\n"
    wall = time.perf_counter() - began
    (out / stdout_file).write_text(stdout, encoding="utf-8")
    (out / stderr_file).write_text(stderr, encoding="utf-8")
    shown = " ".join(argv[2:] if argv[:2] == [sys.executable, "-m"] else argv)
    print(f"gpu_acceptance: {name}: exit {rc} in {wall:.1f} s ({shown})", file=sys.stderr)
    return {"name": name, "argv": argv, "rc": rc, "wall_s": round(wall, 3), "stdout": stdout_file,
            "stderr": stderr_file, "skipped": None}


def skipped_step(name: str, why: str) -> dict[str, Any]:
    return {"name": name, "argv": [], "rc": None, "wall_s": None, "stdout": None, "stderr": None, "skipped": why}


def smi_facts(csv_text: str) -> dict[str, str]:
    """The first GPU's fields of `nvidia-smi --query-gpu=SMI_FIELDS --format=csv,noheader`."""
    line = next((ln for ln in csv_text.splitlines() if ln.strip()), "")
    values = [v.strip() for v in line.split(",")]
    return dict(zip(SMI_FIELDS.split(","), values, strict=False)) if len(values) == len(SMI_FIELDS.split(",")) else {}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------------------------------------------------------
# What the run expects
# ---------------------------------------------------------------------------------------------------------------

def expectations(out: Path, steps: dict[str, dict[str, Any]], dry: bool) -> list[dict[str, Any]]:
    """Each check of the run: name, ok (True / False / None when it does not apply), detail."""
    checks: list[dict[str, Any]] = []

    def expect(name: str, ok: bool | None, detail: str) -> None:
        checks.append({"name": name, "ok": ok, "detail": detail})

    probe_step = steps["probe_json"]
    payload = _read_json(out / "probe.json")
    expect("probe_json_exit", probe_step["rc"] == 0, f"exit {probe_step['rc']}")
    if not isinstance(payload, dict) or not isinstance(payload.get("probe"), dict):
        expect("probe_json_parses", False, "probe.json is not an advise --probe JSON payload")
        return checks
    probe = payload["probe"]
    device = probe.get("device", {})
    gpu = device.get("kind") == "cuda"
    wall = probe_step["wall_s"]
    limit = PROBE_WALL_LIMIT_S if not dry else 3 * PROBE_WALL_LIMIT_S
    expect("probe_wall_time", wall is not None and wall <= limit,
           f"advise --probe took {wall} s of wall time (the probe's own clock: {probe.get('elapsed_s')} s of a "
           f"{probe.get('budget_s')} s budget); limit {limit:g} s")
    expect("device_kind", (not gpu) if dry else gpu,
           f"measured {device.get('kind')} {device.get('name')!r}" + ("" if dry or gpu else ": PyTorch saw no GPU"))
    measured = [t["format"] for t in probe.get("timings", [])]
    unsupported = [s for s in probe.get("skipped", []) if "not supported" in s.get("reason", "")]
    expect("every_format_measured", bool(measured) and not unsupported,
           f"measured {', '.join(measured) or 'nothing'}"
           + (f"; failed: {'; '.join(s['fmt'] + ': ' + s['reason'] for s in unsupported)}" if unsupported else ""))
    cc = device.get("compute_capability")
    hopper = bool(cc) and str(cc).startswith("9.") and re.search(r"H100|H200|H800|GH200", device.get("name", ""))
    verdict = {v["format"]: v for v in probe.get("verdicts", [])}.get("bf16")
    if hopper:
        achievable = verdict.get("achievable_tflops") if verdict else None
        expect("bf16_judged_against_achievable",
               achievable is not None and H100_BF16_ACHIEVABLE[0] <= achievable <= H100_BF16_ACHIEVABLE[1],
               f"bf16 verdict: {verdict.get('sentence') if verdict else 'none'}")
    else:
        expect("bf16_judged_against_achievable", None, "applies to an H100 / H200")
    rec = payload.get("recommendation", {})
    if gpu and cc and tuple(int(x) for x in str(cc).split(".")) >= (8, 0):
        expect("recommends_bf16_mixed", rec.get("precision") == "bf16-mixed", f"precision {rec.get('precision')}")
    else:
        expect("recommends_bf16_mixed", None, f"precision {rec.get('precision')} (applies to a GPU of cc 8.0+)")
    if gpu and cc and tuple(int(x) for x in str(cc).split(".")) >= (8, 9):
        note = next((n for n in rec.get("notes", []) if n.startswith("FP8 is available")), None)
        expect("names_fp8_measurement", note is not None, note or "no FP8 note")
    else:
        expect("names_fp8_measurement", None, "applies to a GPU of cc 8.9+")
    for name, allowed in (("probe_json", ""), ("probe_report", f"precisionlint: wrote {out / 'report.html'}\n")):
        step = steps[name]
        text = (out / step["stderr"]).read_text(encoding="utf-8") if step.get("stderr") else ""
        expect(f"{name}_stderr_clean", text == allowed,
               "nothing but precisionlint's own line" if text == allowed else f"stderr: {text[:500]!r}")
    check = steps["check_gpu_auto"]
    check_err = (out / check["stderr"]).read_text(encoding="utf-8") if check.get("stderr") else ""
    expect("check_gpu_auto", check["rc"] in (0, 1) and (dry or "found no GPU" not in check_err),
           f"exit {check['rc']}; stderr {check_err[:300]!r}")
    tests = steps["gpu_tests"]
    expect("gpu_tests", tests["rc"] == 0 if tests["skipped"] is None else None,
           tests["skipped"] or f"exit {tests['rc']} (see gpu-tests.txt)")
    return checks


# ---------------------------------------------------------------------------------------------------------------
# The output's own format
# ---------------------------------------------------------------------------------------------------------------

_STEP_KEYS = {"name": str, "argv": list, "rc": (int, type(None)), "wall_s": (float, int, type(None)),
              "stdout": (str, type(None)), "stderr": (str, type(None)), "skipped": (str, type(None))}
_SUMMARY_KEYS = {"version": int, "dry": bool, "started": str, "wall_s": (float, int), "python": str,
                 "platform": str, "dependencies": dict, "nvidia_smi": dict, "steps": list, "expectations": list,
                 "fixture": str}
STEP_NAMES = ("nvidia_smi", "nvidia_smi_query", "probe_json", "probe_report", "check_gpu_auto", "gpu_tests")
RECORDED_WITH = ("device_name", "device_kind", "compute_capability", "driver", "torch", "cuda", "recorded",
                 "command", "stand_in")


def format_errors(out: Path) -> list[str]:
    """What is wrong with the folder a run wrote (nothing, when the run and this script agree)."""
    errors: list[str] = []
    summary = _read_json(out / "summary.json")
    if not isinstance(summary, dict):
        return ["summary.json is missing or not JSON"]
    for key, kind in _SUMMARY_KEYS.items():
        if not isinstance(summary.get(key), kind):
            errors.append(f"summary.json: {key} missing or not {kind}")
    steps = summary.get("steps") if isinstance(summary.get("steps"), list) else []
    if [s.get("name") for s in steps if isinstance(s, dict)] != list(STEP_NAMES):
        errors.append(f"summary.json: steps are not {', '.join(STEP_NAMES)}")
    for step in steps:
        for key, kind in _STEP_KEYS.items():
            if not isinstance(step.get(key), kind):
                errors.append(f"summary.json: step {step.get('name')}: {key} missing or not {kind}")
        for key in ("stdout", "stderr"):
            if isinstance(step.get(key), str) and not (out / step[key]).is_file():
                errors.append(f"step {step.get('name')}: {step[key]} was not written")
        if (step.get("skipped") is None) == (step.get("rc") is None):
            errors.append(f"step {step.get('name')}: either skipped or run, with an exit code")
    for check in summary.get("expectations") or []:
        if set(check) != {"name", "ok", "detail"} or not isinstance(check["ok"], (bool, type(None))):
            errors.append(f"summary.json: malformed expectation {check!r}")
    payload = _read_json(out / "probe.json")
    if not isinstance(payload, dict) or not {"recommendation", "probe", "targets"} <= set(payload):
        errors.append("probe.json: not an advise --probe JSON payload")
    else:
        for timing in payload["probe"].get("timings", []):
            if not {"format", "tflops", "spread", "reliable", "samples_ms"} <= set(timing):
                errors.append(f"probe.json: timing {timing.get('format')} lacks its figures")
    report = out / "report.html"
    html = report.read_text(encoding="utf-8") if report.is_file() else ""
    if not html.startswith("<!DOCTYPE html>") or 'class="bar"' not in html:
        errors.append("report.html: missing, or without the throughput bars")
    fixture = _read_json(out / "fixture.json")
    if not isinstance(fixture, dict) or not isinstance(fixture.get("recorded_with"), dict):
        errors.append("fixture.json: missing or without recorded_with")
    else:
        lacking = [k for k in RECORDED_WITH if k not in fixture["recorded_with"]]
        if lacking:
            errors.append(f"fixture.json: recorded_with lacks {', '.join(lacking)}")
        if fixture.get("payload") != payload:
            errors.append("fixture.json: payload differs from probe.json")
    return errors


# ---------------------------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------------------------

def acceptance(out: Path, dry: bool, budget: float | None) -> int:
    out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    site = WHEELS / "site"
    site.mkdir(parents=True, exist_ok=True) if WHEELS.is_dir() else None
    unpacked, missing = dependency_path(site) if WHEELS.is_dir() else ([], [])
    if not WHEELS.is_dir():
        missing = [d for m, d in DEPENDENCIES.items() if not _importable(m)
                   and not (m in ("exceptiongroup", "tomli") and sys.version_info >= (3, 11))]
    path = [str(ROOT)] + ([str(site)] if unpacked else []) + [p for p in os.environ.get("PYTHONPATH", "").split(
        os.pathsep) if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "PYTHONDONTWRITEBYTECODE": "1"}
    if dry:
        env["CUDA_VISIBLE_DEVICES"] = ""  # the CPU even on a machine with a GPU
    if not _importable("torch"):
        print(f"gpu_acceptance: {sys.executable} cannot import torch: the probe steps will fail (run with the "
              "Python that has it: PYTHON=/path/to/python3)", file=sys.stderr)
    if missing:
        print(f"gpu_acceptance: not importable and no wheel in .gpu-wheels: {', '.join(missing)} (run "
              "benchmarks/gpu_acceptance.sh --prepare here and carry .gpu-wheels)", file=sys.stderr)

    steps: list[dict[str, Any]] = []
    smi: dict[str, str] = {}
    if dry:
        steps.append(skipped_step("nvidia_smi", "dry run: CPU only"))
        steps.append(skipped_step("nvidia_smi_query", "dry run: CPU only"))
    else:
        steps.append(run_step(out, "nvidia_smi", ["nvidia-smi"], env, 60, "nvidia-smi.txt"))
        steps.append(run_step(out, "nvidia_smi_query", ["nvidia-smi", f"--query-gpu={SMI_FIELDS}",
                                                        "--format=csv,noheader"], env, 60, "nvidia-smi.csv"))
        smi = smi_facts((out / "nvidia-smi.csv").read_text(encoding="utf-8"))
    probe_args = ["--budget", f"{budget:g}"] if budget is not None else []
    advise = [sys.executable, "-m", "precisionlint", "advise", "--probe", *probe_args]
    steps.append(run_step(out, "probe_json", [*advise, "--output-format", "json"], env, stdout_name="probe.json"))
    steps.append(run_step(out, "probe_report", [*advise, "--report", str(out / "report.html")], env,
                          stdout_name="probe.txt"))
    steps.append(run_step(out, "check_gpu_auto", [sys.executable, "-m", "precisionlint", "check", "--gpu", "auto",
                                                  "examples/project"], env, 60, "check.txt"))
    if _importable("pytest") or any("pytest" in w for w in unpacked):
        steps.append(run_step(out, "gpu_tests", [sys.executable, "-m", "pytest", "-m", "gpu", "-q", "-rs",
                                                 "-p", "no:cacheprovider", "--junitxml", str(out / "gpu-tests.xml"),
                                                 *GPU_TESTS], env, stdout_name="gpu-tests.txt"))
    else:
        steps.append(skipped_step("gpu_tests", "pytest is not importable and not in .gpu-wheels"))

    by_name = {s["name"]: s for s in steps}
    payload = _read_json(out / "probe.json")
    device = (payload or {}).get("probe", {}).get("device", {}) if isinstance(payload, dict) else {}
    fixture = {
        "recorded_with": {
            "device_name": device.get("name"), "device_kind": device.get("kind"),
            "compute_capability": device.get("compute_capability"), "driver": smi.get("driver_version"),
            "torch": device.get("torch_version"), "cuda": device.get("cuda_version"), "recorded": started,
            "command": "advise --probe --output-format json" + (" " + " ".join(probe_args) if probe_args else ""),
            # A run without a GPU stands in for one until a real GPU run is committed; it says so.
            "stand_in": device.get("kind") != "cuda",
        },
        "payload": payload,
    }
    (out / "fixture.json").write_text(json.dumps(fixture, indent=2) + "\n", encoding="utf-8")
    checks = expectations(out, by_name, dry)
    summary = {
        "version": SUMMARY_VERSION, "dry": dry, "started": started, "wall_s": round(time.perf_counter() - began, 3),
        "python": sys.version.split()[0], "platform": platform.platform(),
        "dependencies": {"unpacked": unpacked, "missing": missing}, "nvidia_smi": smi, "steps": steps,
        "expectations": checks, "fixture": "fixture.json",
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    problems = format_errors(out)
    for check in checks:
        mark = {True: "ok  ", False: "FAIL", None: "n/a "}[check["ok"]]
        print(f"gpu_acceptance: {mark} {check['name']}: {check['detail']}", file=sys.stderr)
    for problem in problems:
        print(f"gpu_acceptance: format: {problem}", file=sys.stderr)
    print(f"gpu_acceptance: wrote {out} in {summary['wall_s']:.1f} s", file=sys.stderr)
    if problems:
        return 2
    return 1 if any(c["ok"] is False for c in checks) else 0


def _importable(module: str) -> bool:
    try:
        return find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", nargs="?", help="where everything goes (default: $OUT, else gpu-acceptance-out)")
    parser.add_argument("--dry", action="store_true", help="CPU only, no nvidia-smi, a short probe budget")
    parser.add_argument("--prepare", action="store_true", help="download the dependency wheels into .gpu-wheels")
    parser.add_argument("--budget", type=float, default=None, help="the probe's budget (default: the command's "
                        "own, 10 s; --dry: 3 s)")
    args = parser.parse_args(argv)
    if args.prepare:
        return prepare()
    out = Path(args.outdir or os.environ.get("OUT") or ROOT / "gpu-acceptance-out").resolve()
    budget = args.budget if args.budget is not None else (3.0 if args.dry else None)
    return acceptance(out, args.dry, budget)


if __name__ == "__main__":
    sys.exit(main())
