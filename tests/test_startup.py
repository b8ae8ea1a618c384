"""What `check` loads and prints besides findings: each format's parser only when a file of that format is
parsed, never torch, and a progress bar only on a terminal.

Imports are observed in a fresh interpreter (sys.modules at exit), with a decoy `torch` package first on the
path, so that an attempt to import torch is seen even where torch is not installed. No timing is asserted here:
benchmarks/run.py measures start-up.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from precisionlint.cli.commands import main
from precisionlint.run import progress
from precisionlint.run.progress import NoProgress, Progress, progress_for

ROOT = Path(__file__).resolve().parent.parent

PROBE = r"""
import atexit, json, sys
def dump():
    with open(sys.argv[1], "w") as handle:
        json.dump(sorted(sys.modules), handle)
atexit.register(dump)
from precisionlint.cli.commands import main
main(sys.argv[2:], prog_name="precisionlint")
"""

FILES = {
    "train.toml": '[trainer_config]\nprecision = "16"\n',
    "lightning.yaml": "trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n",
    "ds.json": '{"fp16": {"enabled": true}}\n',
    "train.py": "import torch\nwith torch.autocast('cuda'):\n    loss = model(x)\nloss.backward()\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    decoy = tmp_path / "decoy" / "torch"
    decoy.mkdir(parents=True)
    (decoy / "__init__.py").write_text("raise SystemExit('precisionlint imported torch during check')\n")
    return tmp_path


def modules_after(project: Path, *args: str) -> set[str]:
    out = project / "modules.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project / "decoy"), str(ROOT)])}
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(out), *args], cwd=project, env=env, capture_output=True, text=True,
        timeout=120,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    assert "imported torch" not in result.stdout + result.stderr
    return set(json.loads(out.read_text()))


def starts(modules: set[str], prefix: str) -> set[str]:
    return {m for m in modules if m == prefix or m.startswith(prefix + ".")}


def test_checking_toml_imports_no_yaml_parser(project: Path) -> None:
    modules = modules_after(project, "check", "--no-progress", "train.toml")
    assert "precisionlint.sources.toml_source" in modules  # it was parsed
    assert not starts(modules, "ruamel")
    assert not starts(modules, "torch")
    assert "precisionlint.cli.advise_command" not in modules  # other commands are imported when named
    assert "multiprocessing" not in modules  # no pool for one file


def test_checking_yaml_imports_no_toml_parser(project: Path) -> None:
    modules = modules_after(project, "check", "--no-progress", "lightning.yaml")
    assert "precisionlint.sources.yaml_check" in modules
    assert not starts(modules, "tomlkit")
    assert not starts(modules, "torch")


def test_checking_json_and_python_import_neither(project: Path) -> None:
    modules = modules_after(project, "check", "--no-progress", "ds.json", "train.py")
    assert not starts(modules, "ruamel") and not starts(modules, "tomlkit")
    assert not starts(modules, "torch")


def test_check_never_imports_torch(project: Path) -> None:
    # Every format, every rule, hardware rules with a named GPU, every output format.
    for args in (["."], ["--gpu", "A100", "."], ["--output-format", "sarif", "."], ["--diff", "."]):
        modules = modules_after(project, "check", "--no-progress", *args)
        assert not starts(modules, "torch"), args


# The console script's own entry point (the fast path that runs without click), as `precisionlint` runs it.
ENTRY_PROBE = r"""
import atexit, json, sys
out = sys.argv[1]
def dump():
    with open(out, "w") as handle:
        json.dump(sorted(sys.modules), handle)
atexit.register(dump)
sys.argv = ["precisionlint", *sys.argv[2:]]
from precisionlint.cli.entry import main
main()
"""

NOTEBOOK = json.dumps({
    "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
               "source": ["import torch\n", "scaler = torch.cuda.amp.GradScaler()\n"]}],
    "metadata": {}, "nbformat": 4, "nbformat_minor": 5,
})


@pytest.mark.parametrize("gpus", [(), ("--gpu", "A100")])
def test_check_imports_no_dataclasses(project: Path, gpus: tuple[str, ...]) -> None:
    # dataclasses (and the inspect, dis and tokenize it imports) cost every worker of a check several milliseconds:
    # the records of the script model, the YAML reader, notebooks and the GPU table are plain classes.
    (project / "train.ipynb").write_text(NOTEBOOK)
    out = project / "modules.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project / "decoy"), str(ROOT)])}
    result = subprocess.run(
        [sys.executable, "-c", ENTRY_PROBE, str(out), "check", "--no-cache", "--no-progress", *gpus,
         "train.py", "lightning.yaml", "train.ipynb"],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 1, result.stdout + result.stderr  # findings in each file
    assert "train.py:" in result.stdout and "lightning.yaml:" in result.stdout and "train.ipynb:" in result.stdout
    modules = set(json.loads(out.read_text()))
    # The script model, the YAML reader and the notebook reader ran (and with a GPU named, the GPU table) ...
    assert {"precisionlint.script.model", "precisionlint.sources.yaml_check", "precisionlint.sources.notebook_edits"} \
        <= modules
    assert ("precisionlint.hardware" in modules) == bool(gpus)
    # ... without importing dataclasses or inspect.
    assert "dataclasses" not in modules and "inspect" not in modules


def test_ruamel_is_imported_for_the_round_trip_only(project: Path) -> None:
    modules_after(project, "check", "--no-progress", "lightning.yaml")  # keeps ruamel's scalar table, if need be
    assert not starts(modules_after(project, "check", "--no-progress", "lightning.yaml"), "ruamel")
    (project / "anchors.yaml").write_text("base: &b\n  precision: 16\ntrainer:\n  <<: *b\n")
    assert "ruamel.yaml" in modules_after(project, "check", "--no-progress", "anchors.yaml")
    diff = modules_after(project, "check", "--no-progress", "--diff", "--unsafe-fixes", "lightning.yaml")
    assert "ruamel.yaml" in diff  # a fix is written through the round-trip tree


def test_a_file_the_prefilter_rejects_is_never_parsed(project: Path) -> None:
    (project / "data.yaml").write_text("paths:\n  train: /data/train\n")
    modules = modules_after(project, "check", "--no-progress", "data.yaml")
    assert not starts(modules, "ruamel")


# ---------------------------------------------------------------------------------------------------------------
# Progress bar: silent unless stderr is a terminal
# ---------------------------------------------------------------------------------------------------------------


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_bar_renders_on_a_terminal_after_the_delay_and_erases_itself() -> None:
    stream, clock = FakeTerminal(), FakeClock()
    bar = Progress(200, stream, delay=1.0, interval=0.1, width=60, clock=clock)
    bar.advance(10)
    assert stream.getvalue() == ""  # a short run never shows a bar
    clock.now += 1.5
    bar.advance(40)
    assert stream.getvalue() == "\r[##########..............................]  50/200 files"
    clock.now += 0.01
    bar.advance(10)  # too soon to redraw
    assert stream.getvalue().count("\r[") == 1
    clock.now += 0.2
    bar.advance(150)
    assert stream.getvalue().endswith("\r[########################################] 200/200 files")
    bar.close()
    assert stream.getvalue().endswith("\r\x1b[2K")
    bar.close()  # idempotent
    assert stream.getvalue().count("\x1b[2K") == 1


def test_bar_fits_a_narrow_terminal() -> None:
    stream, clock = FakeTerminal(), FakeClock()
    bar = Progress(5000, stream, delay=0, width=24, clock=clock)
    bar.advance(2500)
    line = stream.getvalue().rsplit("\r", 1)[-1]
    assert len(line) <= 23 and line.startswith("[")


def test_silent_when_not_a_terminal_or_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(progress_for(100, stream=io.StringIO()), NoProgress)  # a pipe, a CI log
    assert isinstance(progress_for(100, enabled=False, stream=FakeTerminal()), NoProgress)  # --no-progress
    assert isinstance(progress_for(0, stream=FakeTerminal()), NoProgress)
    monkeypatch.setenv("TERM", "dumb")
    assert isinstance(progress_for(100, stream=FakeTerminal()), NoProgress)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert isinstance(progress_for(100, stream=FakeTerminal()), Progress)


def _many_files(folder: Path, count: int = 30) -> None:
    for index in range(count):
        (folder / f"c{index:02}.yaml").write_text("trainer:\n  precision: 16\n  _target_: lightning.pytorch.Trainer\n")


@pytest.mark.parametrize("no_progress", [False, True])
def test_check_draws_on_a_terminal_unless_no_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_progress: bool
) -> None:
    from precisionlint.checks import all_rules
    from precisionlint.run.config import load_config
    from precisionlint.run.runner import RunRequest, run_check

    _many_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    monkeypatch.setenv("TERM", "xterm")
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    request = RunRequest(paths=["."], config=load_config(None), rules=all_rules(), progress=not no_progress)
    outcome = run_check(request)
    assert len(outcome.findings) == 30
    if no_progress:
        assert terminal.getvalue() == ""
    else:
        assert "\r[" in terminal.getvalue() and "30/30 files" in terminal.getvalue()
        assert terminal.getvalue().endswith("\r\x1b[2K")  # erased before the findings are printed


def test_check_is_silent_on_stderr_in_a_pipe(tmp_path: Path) -> None:
    _many_files(tmp_path, 60)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-m", "precisionlint", "check", "."], cwd=tmp_path, env=env, capture_output=True,
        text=True, timeout=120,
    )
    assert result.returncode == 1
    assert result.stderr == ""


def test_cli_runner_output_has_no_bar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _many_files(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    result = CliRunner().invoke(main, ["check", "."])
    assert result.exit_code == 1
    assert "\r" not in result.output and "files" not in result.output.splitlines()[0]


# Modules only configs and precision values need: the registry asks each framework in turn whether a config is its
# own. A Python file that calls no framework needs none of them.
CONFIG_ONLY_FRAMEWORKS = {f"precisionlint.frameworks.{name}" for name in (
    "registry", "lightning", "accelerate", "trainer_config", "axolotl", "composer", "detectron2", "fairseq", "nemo",
    "neox", "speechbrain", "torchtune")}


def imported_with_importtime(project: Path, *args: str) -> dict[str, int]:
    """The modules a `check` run imports, with each one's own import time in microseconds, as `python -X
    importtime` reports them (the standard library's site start-up excluded with -S)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project / "decoy"), str(ROOT)])}
    result = subprocess.run([sys.executable, "-S", "-X", "importtime", "-m", "precisionlint", *args], cwd=project,
                            env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode in (0, 1), result.stdout + result.stderr
    found = {}
    for line in result.stderr.splitlines():
        if line.startswith("import time:"):
            own, _, name = line[len("import time:"):].split("|")
            if own.strip().isdigit():
                found[name.strip()] = int(own)
    return found


def test_one_python_file_imports_no_framework_it_does_not_name(project: Path) -> None:
    """-X importtime on one plain torch script (no framework's words) and on a file the prefilter rejects: no
    framework registry, no config-only framework module; a rejected file is not even parsed. The heaviest own
    import times are in the failure message."""
    (project / "plain.py").write_text("import os\n\ndef main():\n    print(os.getcwd())\n")
    for name, parsed in (("train.py", True), ("plain.py", False)):
        modules = imported_with_importtime(project, "check", "--no-progress", "--no-cache", name)
        heaviest = sorted(modules.items(), key=lambda item: -item[1])[:12]
        assert "precisionlint.engine" in modules, heaviest
        assert not CONFIG_ONLY_FRAMEWORKS & set(modules), (name, sorted(CONFIG_ONLY_FRAMEWORKS & set(modules)))
        assert ("ast" in modules) == parsed, (name, heaviest)
        assert not starts(set(modules), "torch") and "dataclasses" not in modules, heaviest
    config = imported_with_importtime(project, "check", "--no-progress", "--no-cache", "train.toml")
    assert "precisionlint.frameworks.registry" in config  # a config is attributed: the registry is what does it


# The modules of the frameworks whose calls a Python file can pass settings to, and of the attribution rows they
# build on: a script none of whose words (frameworks.call_words) are in its text needs none of them to be checked.
CALL_FRAMEWORKS = {f"precisionlint.frameworks.{name}" for name in ("hf", "mmengine", "deepspeed")}


def test_a_script_that_names_no_framework_is_checked_without_their_modules(project: Path) -> None:
    """-X importtime on a training script that is parsed and checked (an autocast without a scaler) but names no
    framework: the engine's gate and the settings reader test its text for the frameworks' words without importing
    the frameworks' modules; a file the prefilter rejects imports no framework module, no script model and no
    parser. Fails when one of them creeps back into the one-file path."""
    (project / "plain.py").write_text("import os\n\ndef main():\n    print(os.getcwd())\n")
    parsed = imported_with_importtime(project, "check", "--no-progress", "--no-cache", "train.py")
    heaviest = sorted(parsed.items(), key=lambda item: -item[1])[:12]
    assert "precisionlint.frameworks.python_calls" in parsed and "ast" in parsed, heaviest  # checked, words tested
    assert not CALL_FRAMEWORKS & set(parsed), sorted(CALL_FRAMEWORKS & set(parsed))
    rejected = set(imported_with_importtime(project, "check", "--no-progress", "--no-cache", "plain.py"))
    assert not {m for m in rejected if m.startswith("precisionlint.frameworks.") and m != "precisionlint.frameworks"
                and m != "precisionlint.frameworks.documents"}, sorted(rejected)
    assert not starts(rejected, "precisionlint.script") and not starts(rejected, "precisionlint.checks._attribution")
    assert not rejected & {"ast", "tomllib", "yaml", "ruamel"}, sorted(rejected)


# ---------------------------------------------------------------------------------------------------------------
# One small file, as benchmarks/startup.py checks it: what each of its three paths must not import
# ---------------------------------------------------------------------------------------------------------------


def _benchmark_files() -> dict[str, str]:
    """The files benchmarks/startup.py times (a torch script the prefilter rejects, a parsed training script, a
    TOML trainer config), read from it so that the test and the benchmark check the same three paths."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("startup_benchmark", ROOT / "benchmarks" / "startup.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return dict(module.FILES)


# The console script's entry point under `python -S -X importtime` (no site: nothing imported that the run does not
# import itself), writing sys.modules at exit with no module of its own: -X importtime reports what import
# statements load, and sys.modules also holds what importlib.import_module loads (the rules, the frameworks),
# which -X importtime does not report.
ONE_FILE_PROBE = r"""
import atexit, sys
out = sys.argv[1]
def dump():
    with open(out, "w") as handle:
        handle.write("\n".join(sorted(sys.modules)))
atexit.register(dump)
sys.argv = ["precisionlint", *sys.argv[2:]]
from precisionlint.cli.entry import main
main()
"""

# Never on a one-file check: a pool, a cache, click, the other commands and output formats, other formats' parsers.
ONE_FILE_NEVER = {
    "multiprocessing", "concurrent", "tempfile", "hashlib", "json", "dataclasses", "inspect", "threading",
    "subprocess", "click", "yaml", "ruamel", "torch", "precisionlint.cli.commands", "precisionlint.run.fork_pool",
    "precisionlint.run.cache", "precisionlint.run.context_key", "precisionlint.output.json",
    "precisionlint.output.sarif", "precisionlint.fix", "precisionlint.advise", "precisionlint.hardware",
    "precisionlint.server",
    "signal",  # its enums: the interpreter's _signal has the functions (core/signals.py)
    "typing",  # about 5 ms: the modules of a check import their annotations' names only for type checkers
}
_RULES = "precisionlint.checks."
# Per file: what it needs (proof that it was checked as it should be), and what it must not import: the modules of
# the rules none of whose words it holds (and the helpers only they use), of frameworks it does not name, of the
# passes that do not read it.
ONE_FILE_PATHS = {
    "plain.py": (
        {"precisionlint.engine.prefilter"},
        {"ast", "tomllib", "precisionlint.script", "precisionlint.values", "precisionlint.project.pins",
         "precisionlint.engine.suppress", "precisionlint.sources.not_config", "precisionlint.sources.python_source",
         "precisionlint.frameworks.base", "precisionlint.frameworks.python_calls"},
    ),
    "train.py": (
        {"ast", "precisionlint.script.build", f"{_RULES}missing_grad_scaler", f"{_RULES}deprecated_amp_api"},
        # A folder with no pin file: the pin files' readers (project.pins) are not needed.
        {"tomllib", "precisionlint.project.pins", *CONFIG_ONLY_FRAMEWORKS, *CALL_FRAMEWORKS,
         *(_RULES + name for name in (
             "legacy_precision_value", "unknown_precision_value", "conflicting_precision", "static_loss_scale",
             "rl_actor_rollout_dtype_mismatch", "known_precision_bug", "fp16_on_bf16_checkpoint",
             "cross_file_precision_conflict", "unnecessary_grad_scaler", "missing_scaler_update",
             "scaler_with_half_params", "true_half_precision_training", "_rl_dtypes", "_checkpoints",
             "_known_bugs"))},
    ),
    "one.toml": (
        {"precisionlint.sources.toml_source", "precisionlint.frameworks.registry", f"{_RULES}legacy_precision_value"},
        # A plain config is read without tomllib (sources.toml_plain), nor the datetime module it imports; and
        # without ast (its node classes are a tenth of a config's check), which the folder's scripts need only
        # when one of them may load a config (project.config_readers.LOAD_WORDS).
        {"tomllib", "tomlkit", "datetime", "ast", "_ast", "precisionlint.sources.python_index",
         "precisionlint.sources.literal", "precisionlint.script", "precisionlint.values",
         *(_RULES + name for name in (
             "conflicting_precision", "static_loss_scale", "rl_actor_rollout_dtype_mismatch",
             "fp16_on_bf16_checkpoint", "autocast_around_deepspeed_engine", "scaler_with_half_params",
             "torch_autocast_beside_deepspeed_precision", "low_precision_grad_accumulation", "_rl_dtypes",
             "_checkpoints"))},
    ),
}


@pytest.mark.parametrize("name", sorted(ONE_FILE_PATHS))
def test_one_small_file_imports_only_what_it_needs(tmp_path: Path, name: str) -> None:
    """`check` of one small file, as benchmarks/startup.py times it, under `python -S -X importtime`: what it must
    import to check the file is there, and no module of ONE_FILE_NEVER or of the file's own list (a rule none of
    whose words the file holds is not imported: engine.prefilter.rules_that_may_report). The failure message
    names the modules that crept back and the heaviest own import times."""
    for file_name, text in _benchmark_files().items():
        (tmp_path / file_name).write_text(text)
    (tmp_path / ".git").mkdir()  # a project of its own, as in the benchmark
    out = tmp_path / "modules.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-S", "-X", "importtime", "-c", ONE_FILE_PROBE, str(out), "check", "--no-progress",
         "--no-cache", name], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    own: dict[str, int] = {}
    for line in result.stderr.splitlines():
        if line.startswith("import time:"):
            microseconds, _, module = line[len("import time:"):].split("|")
            if microseconds.strip().isdigit():
                own[module.strip()] = int(microseconds)
    assert "precisionlint.cli.entry" in own  # -X importtime reported the run's imports
    modules = set(out.read_text().split())
    heaviest = ", ".join(f"{m} {us / 1000:.1f} ms" for m, us in sorted(own.items(), key=lambda kv: -kv[1])[:10])
    needed, avoided = ONE_FILE_PATHS[name]
    assert needed <= modules, (name, sorted(needed - modules))
    crept = sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in ONE_FILE_NEVER | avoided))
    assert not crept, f"{name}: imported {crept}; heaviest own import times: {heaviest}"


# One small file of each other kind `check` reads, as users name them: no typing on any of their paths either.
OTHER_ONE_FILES = {
    "config.yaml": "trainer:\n  precision: 16\n  max_epochs: 3\n",
    "ds_config.json": '{"fp16": {"enabled": true}, "zero_optimization": {"stage": 2}}\n',
    "run.sh": "#!/bin/bash\ntorchrun --nproc_per_node 8 train.py --fp16\n",
    "hf_train.py": ("from transformers import TrainingArguments\n"
                    "args = TrainingArguments(output_dir='out', fp16=True, bf16=True)\n"),
    "explore.ipynb": json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                            "source": ["import torch\n", "with torch.cuda.amp.autocast():\n",
                                                       "    loss = model(x)\n", "loss.backward()\n"]}],
                                 "metadata": {}, "nbformat": 4, "nbformat_minor": 5}),
}


@pytest.mark.parametrize("name", sorted(OTHER_ONE_FILES))
def test_a_one_file_check_of_any_format_imports_no_typing(tmp_path: Path, name: str) -> None:
    """typing costs a one-file check about 5 ms; the modules of every format's path take its names for type
    checkers only (core/light_typing.py). Without site (whose .pth files may import anything), the installed
    packages (PyYAML, ruamel.yaml) on the path."""
    import sysconfig

    (tmp_path / name).write_text(OTHER_ONE_FILES[name])
    (tmp_path / ".git").mkdir()
    out = tmp_path / "modules.txt"
    packages = sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *packages])}
    result = subprocess.run(
        [sys.executable, "-S", "-c", ONE_FILE_PROBE, str(out), "check", "--no-progress", "--no-cache", name],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == (0 if name in ("ds_config.json", "run.sh") else 1), result.stdout + result.stderr
    modules = set(out.read_text().split())
    assert "precisionlint.engine.check" in modules
    assert "typing" not in modules, sorted(m for m in modules if m.startswith("precisionlint"))


def test_a_lazy_pattern_is_compiled_on_first_use_then_is_the_compiled_pattern() -> None:
    """The modules of a one-file check compile their regular expressions when they are first used
    (core.patterns): the first use puts the compiled pattern in the module's namespace, a module that imported
    the name keeps an object that forwards every call, and either matches as re.compile's pattern would."""
    import re

    from precisionlint.core.patterns import LazyPattern, lazy_pattern

    namespace: dict[str, object] = {}
    word = namespace["WORD"] = lazy_pattern(namespace, "WORD", r"\bnoqa\s*:\s*(?P<codes>\w+)", re.IGNORECASE)
    assert isinstance(word, LazyPattern) and word._compiled is None  # nothing compiled until it is used
    assert word.search("x = 1  # NOQA: PL201").group("codes") == "PL201"  # type: ignore[union-attr]
    compiled = namespace["WORD"]
    assert isinstance(compiled, re.Pattern) and compiled is word.compiled
    assert compiled.flags & re.IGNORECASE and word.pattern == compiled.pattern
    # The forwarding object, as a module that imported the name holds it, behaves as the compiled pattern.
    text = "a: noqa: PL1, b # noqa:PL2"
    assert [m.span() for m in word.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert word.findall(text) == compiled.findall(text) and word.sub("-", text) == compiled.sub("-", text)
    assert word.match(text) is None and word.fullmatch("noqa: x") is not None
    assert word.split(text) == compiled.split(text)


def test_the_modules_of_a_one_file_check_compile_no_pattern_when_imported() -> None:
    """Importing every module that a one-file check of a training script and of a TOML config imports compiles no
    regular expression of precisionlint's (they compile on first use: core.patterns)."""
    probe = r"""
import re, sys
compiled = []
original = re._compile
def counting(pattern, flags):
    caller = sys._getframe(2)
    if caller.f_code.co_name == "<module>" and caller.f_globals.get("__name__", "").startswith("precisionlint"):
        compiled.append((caller.f_globals["__name__"], pattern))
    return original(pattern, flags)
re._compile = counting
for name in sys.argv[1:]:
    __import__(name)
print(compiled)
"""
    modules = [
        "precisionlint.cli.entry", "precisionlint.cli.check_command", "precisionlint.engine.check",
        "precisionlint.engine.suppress", "precisionlint.engine.gate", "precisionlint.sources.not_config",
        "precisionlint.sources.python_source", "precisionlint.sources.toml_source", "precisionlint.frameworks.registry",
        "precisionlint.frameworks.python_calls", "precisionlint.project.pins", "precisionlint.project.config_readers",
        "precisionlint.script.build", "precisionlint.checks.missing_grad_scaler",
        "precisionlint.checks.deprecated_amp_api", "precisionlint.checks.legacy_precision_value",
        "precisionlint.checks.framework_version_mismatch", "precisionlint.checks.true_half_precision_training",
        "precisionlint.checks.rl_actor_rollout_dtype_mismatch", "precisionlint.checks.fp16_on_bf16_checkpoint",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-S", "-c", probe, *modules], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", result.stdout


GC_PROBE = r"""
import atexit, gc, os, sys
told = int(sys.argv[1])
atexit.register(lambda: os.write(told, b"collector on" if gc.isenabled() else b"collector off"))
sys.argv = ["precisionlint", *sys.argv[2:]]
from precisionlint.cli.entry import main
main()
"""


def _probe_run(probe: str, folder: Path, *args: str) -> tuple[str, subprocess.CompletedProcess[str]]:
    """Run a probe script (`python -c PROBE FD ARGS...`) in `folder`: what it wrote to the pipe FD, and the run."""
    read, write = os.pipe()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with os.fdopen(read) as said:
        result = subprocess.run([sys.executable, "-c", probe, str(write), *args], cwd=folder, env=env,
                                text=True, capture_output=True, timeout=120, pass_fds=(write,))
        os.close(write)
        return said.read(), result


def test_the_collector_stays_off_for_one_file_and_on_for_a_folder(tmp_path: Path) -> None:
    """Start-up is mostly imports, which the cyclic garbage collector walks over and over while they are made:
    a one-file check runs with it off (the same findings), while a check of a folder, whose files' analyses need
    it between files, turns it back on before anything else."""
    for file_name, text in _benchmark_files().items():
        (tmp_path / file_name).write_text(text)
    (tmp_path / ".git").mkdir()

    one, one_result = _probe_run(GC_PROBE, tmp_path, "check", "--no-progress", "--no-cache", "train.py")
    folder, folder_result = _probe_run(GC_PROBE, tmp_path, "check", "--no-progress", "--no-cache", ".")
    one_output, folder_output = one_result.stdout, folder_result.stdout
    assert one == "collector off" and folder == "collector on"
    assert "train.py:5:1: PL201" in one_output and "train.py:5:1: PL201" in folder_output


NAMED_TUPLE_PROBE = r"""
import atexit, sys, typing
out = sys.argv[1]
def dump():
    found = []
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("precisionlint"):
            continue
        for value in list(vars(module).values()):
            if isinstance(value, type) and issubclass(value, tuple) and value.__module__ == name \
                    and hasattr(value, "_fields"):
                found.append(f"record {name}.{value.__name__}")
                for field, annotation in getattr(value, "__annotations__", {}).items():
                    if isinstance(annotation, typing.ForwardRef):
                        found.append(f"string {name}.{value.__name__}.{field}")
    with open(out, "w") as handle:
        handle.write("\n".join(sorted(set(found))))
atexit.register(dump)
sys.argv = ["precisionlint", *sys.argv[2:]]
from precisionlint.cli.entry import main
main()
"""

def test_the_records_a_one_file_check_makes_compile_no_string_annotations(tmp_path: Path) -> None:
    """Every NamedTuple of the modules a one-file check imports (of a script and of a TOML config, as the
    benchmark's files) is made at every start, and a string annotation of its fields (`from __future__ import
    annotations`) is compiled into a ForwardRef then: about a third of making the class, and the first compile()
    of a run makes the 120 classes of Python's syntax tree, which a config's check needs for nothing else. The
    modules that define them evaluate their annotations (or give the field types as objects)."""
    for file_name, text in _benchmark_files().items():
        (tmp_path / file_name).write_text(text)
    (tmp_path / ".git").mkdir()
    found: set[str] = set()  # "record module.Class", "string module.Class.field"
    for name in ("train.py", "one.toml"):
        out = tmp_path / f"{name}.fields"
        result = subprocess.run(
            [sys.executable, "-c", NAMED_TUPLE_PROBE, str(out), "check", "--no-progress", "--no-cache", name],
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120,
        )
        assert result.returncode in (0, 1), result.stdout + result.stderr
        found |= set(out.read_text().split("\n"))
    records = {line.split()[1] for line in found if line.startswith("record ")}
    assert {"precisionlint.core.model.Setting", "precisionlint.frameworks.base.Vocabulary"} <= records
    strings = {line.split()[1] for line in found if line.startswith("string ")}
    assert not strings, sorted(strings)


COMPILE_PROBE = r"""
import builtins, sys
out = sys.argv[1]
compile_ = builtins.compile
calls = []
def counting(*args, **kwargs):
    # a module compiled from its source on import (no .pyc: a fresh checkout with PYTHONDONTWRITEBYTECODE) is
    # the import system's compile(), not the check's
    if not sys._getframe(1).f_code.co_filename.startswith("<frozen importlib"):
        calls.append(repr(args[0])[:80])
    return compile_(*args, **kwargs)
builtins.compile = counting
sys.argv = ["precisionlint", *sys.argv[2:]]
from precisionlint.cli.entry import main
try:
    main()
finally:
    with open(out, "w") as handle:
        handle.write("\n".join(calls))
"""


def test_a_config_s_check_compiles_nothing(tmp_path: Path) -> None:
    """The first compile() of a process (a string annotation made a ForwardRef, a pattern of code, ast.parse) makes
    the 120 classes of Python's syntax tree: a tenth of a check of a config, which parses no Python (its folder's
    scripts are parsed only when one of them may load a config). A check of one.toml calls compile() never; a
    check of train.py does (it parses the script), which shows that the probe sees the calls."""
    for file_name, text in _benchmark_files().items():
        (tmp_path / file_name).write_text(text)
    (tmp_path / ".git").mkdir()
    calls = {}
    for name in ("one.toml", "train.py"):
        out = tmp_path / f"{name}.compiled"
        result = subprocess.run(
            [sys.executable, "-c", COMPILE_PROBE, str(out), "check", "--no-progress", "--no-cache", name],
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120,
        )
        assert result.returncode in (0, 1), result.stdout + result.stderr
        calls[name] = [line for line in out.read_text().split("\n") if line]
    assert calls["train.py"], "the probe saw no compile() in a check that parses a script"
    assert calls["one.toml"] == [], calls["one.toml"]


PATTERN_PROBE = r"""
import re, sys
out = sys.argv[1]
compiler = getattr(re, "_compiler", None) or __import__("sre_compile")  # what re.compile calls on a cache miss
compile_ = compiler.compile
compiled = []
def counting(pattern, flags=0):
    compiled.append(repr(pattern))
    return compile_(pattern, flags)
compiler.compile = counting
sys.argv = ["precisionlint", *sys.argv[2:]]
from precisionlint.cli.entry import main
try:
    main()
finally:
    with open(out, "w") as handle:
        handle.write("\n".join(compiled))
"""

# The patterns a check of the benchmark's one.toml compiles: the TOML position scanner's and the tree's, cheap ones.
CONFIG_CHECK_PATTERNS = {r"'[ \\t]*'", r"'[A-Za-z0-9_-]+'", r"'\\S'"}


def test_a_one_file_check_compiles_no_costly_pattern(tmp_path: Path) -> None:
    """Compiling a regular expression costs 0.05 to 0.6 ms, and a one-file check is mostly start-up: a check of
    the benchmark's plain.py and train.py compiles none (a cheap string test goes first where a pattern's words
    can be told from the text), one of one.toml only the position scanner's three small ones."""
    for file_name, text in _benchmark_files().items():
        (tmp_path / file_name).write_text(text)
    (tmp_path / ".git").mkdir()
    for name in ("plain.py", "train.py", "one.toml"):
        out = tmp_path / f"{name}.patterns"
        result = subprocess.run(
            [sys.executable, "-c", PATTERN_PROBE, str(out), "check", "--no-progress", "--no-cache", name],
            cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120,
        )
        assert result.returncode in (0, 1), result.stdout + result.stderr
        compiled = {line for line in out.read_text().split("\n") if line}
        allowed = CONFIG_CHECK_PATTERNS if name == "one.toml" else set()
        assert compiled <= allowed, (name, sorted(compiled - allowed))


def test_the_string_tests_before_a_pattern_answer_as_the_pattern() -> None:
    """Where a cheap string test now decides before (or instead of) a pattern, so that a one-file check compiles
    none, its answers are the pattern's, for ASCII and other names (re's case-insensitive matching takes the
    Kelvin sign for k and a dotless i for i; str.lower() does not, so those go to the pattern)."""
    import re

    from precisionlint.checks.true_half_precision_training import _mentions_loss_scaling
    from precisionlint.project.pins import normalize
    from precisionlint.script.receivers import _names_framework
    from precisionlint.sources.not_config import NAMES, reason

    names = ["torch", "Torch", "pytorch-lightning", "py--torch", "a.b_c", "A__B", "-", "_", ".", "", "accelerator",
             "model_Engine", "FABRIC", "deepspeed_engine", "deepſpeed", "\u212aaccelerator", "ENG\u0130NE", "engıne",
             "optimizer", "loss_scale", "LossScaling", "loss scaler", "loss-Scale", "lo\u017f\u017f_scale", "scal",
             "tokenizer_v2.json", "x-lock.yaml", "vocab.txt", "my.vocab.json", "config.template.yaml", "plain.toml",
             "locked.json", "tokenizer.json", "a_template.toml", "templates.json"]
    framework = re.compile(r"accelerator|fabric|engine|deepspeed", re.IGNORECASE)
    loss_scaling = re.compile(r"loss[_ -]?scal|lossScaling", re.IGNORECASE)
    file_names = re.compile(r"(-lock|\.lock|_lock)\.(json|ya?ml)$|(^|[._-])vocab[^/]*\.json$|^tokenizer[^/]*\.json$"
                            r"|(^|[._-])template([._-][^/]*)?\.(json|ya?ml|toml)$")
    for name in names:
        assert normalize(name) == re.sub(r"[-_.]+", "-", name).lower(), name
        assert _names_framework(name) == bool(framework.search(name)), name
        assert _mentions_loss_scaling(name) == bool(loss_scaling.search(name)), name
        lowered = name.lower()
        assert (reason(name, b"", "yaml") is not None) == (
            lowered in NAMES or bool(file_names.search(lowered))), name


def test_a_text_is_searched_for_loss_scaling_at_the_speed_of_a_literal_search() -> None:
    """true-half-precision-training searches an ASCII text for loss scaling lowered, for a pattern that starts with
    its literal: the case-folded pattern was tried at every position (3 times slower over real Python files, 20
    times a literal search on this text). The answers stay the pattern's (the test above)."""
    import time
    from collections.abc import Callable

    from precisionlint.checks.true_half_precision_training import _mentions_loss_scaling

    text = "scale = loss * 2  # Lossy scaling\n" * 60_000  # 2 MB: "scal" in it, loss scaling not
    assert not _mentions_loss_scaling(text) and _mentions_loss_scaling(text + "LOSS-Scale\n")

    def took(scan: Callable[[], object]) -> float:
        start = time.perf_counter()
        scan()
        return time.perf_counter() - start

    literal = min(took(lambda: text.find("loss_scal")) for _ in range(3))
    found = min(took(lambda: _mentions_loss_scaling(text)) for _ in range(3))  # with its lower(): about 4x
    assert found < 10 * literal + 0.002, (found, literal)


TEARDOWN_PROBE = r"""
import atexit, os, sys
told = int(sys.argv[1])
atexit.register(lambda: os.write(told, b"exit functions ran"))
end_now = os._exit
parent = os.getpid()
def ending(code):  # the process ends here, without the teardown that sys.exit's normal exit runs
    if os.getpid() == parent:  # not a folder's forked worker ending
        os.write(told, b"; ended at once with %d" % code)
    end_now(code)
os._exit = ending
sys.argv = ["precisionlint", *sys.argv[2:]]
from precisionlint.cli.entry import program
program()
"""


def test_the_program_ends_a_one_file_check_without_the_interpreters_teardown(tmp_path: Path) -> None:
    """The teardown frees every object of the hundred modules a run imported, one by one: more than checking a
    small file takes. The program (console script, `python -m precisionlint`) ends a one-file check without it,
    after the exit functions have run and the output is flushed: the report is whole and the exit code the
    check's. A check of a folder ends as usual, and so does main() for a caller in the same process."""
    for file_name, text in _benchmark_files().items():
        (tmp_path / file_name).write_text(text)
    (tmp_path / ".git").mkdir()

    one, one_result = _probe_run(TEARDOWN_PROBE, tmp_path, "check", "--no-progress", "--no-cache", "train.py")
    assert one == "exit functions ran; ended at once with 1", one
    assert one_result.returncode == 1 and "train.py:" in one_result.stdout and "in 1 file checked." in one_result.stdout
    folder, folder_result = _probe_run(TEARDOWN_PROBE, tmp_path, "check", "--no-progress", "--no-cache", ".")
    assert folder == "exit functions ran" and folder_result.returncode == 1
    in_process = subprocess.run(
        [sys.executable, "-c", "import sys\nsys.argv = ['precisionlint', 'check', '--no-progress', 'train.py']\n"
         "from precisionlint.cli.entry import main\ntry:\n    main()\nexcept SystemExit as done:\n"
         "    print('SystemExit', done.code)\n"], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)},
        text=True, capture_output=True, timeout=120)
    assert in_process.stdout.strip().endswith("SystemExit 1"), in_process.stdout


KEPT_PROBE = r"""
import atexit, os, sys
told = int(sys.argv[1])
def report():  # at exit: the parsed documents the run kept rather than freed
    from precisionlint.engine import results
    os.write(told, b"kept " + repr(None if results._KEPT is None else len(results._KEPT)).encode())
atexit.register(report)
caller, sys.argv = sys.argv[2], ["precisionlint", *sys.argv[3:]]
from precisionlint.cli import entry
entry.program() if caller == "program" else entry.main()
"""


@pytest.mark.parametrize("caller,paths,kept", [
    ("program", ["train.py"], "kept 1"),  # ends without the teardown: its tree is freed with the process
    ("program", ["."], "kept None"),  # a folder: each file's tree is freed once its findings are taken
    ("main", ["train.py"], "kept None"),  # a caller in the same process goes on: nothing is kept for it
    ("program", ["--diff", "train.py"], "kept None"),  # checked again after its fixes: each tree freed as before
])
def test_a_one_file_check_that_ends_the_process_does_not_free_its_tree(tmp_path: Path, caller: str,
                                                                        paths: list[str], kept: str) -> None:
    """Freeing a parsed tree object by object is work for nothing in a process that ends without its teardown
    (a 5 MB script's tree: 0.3 s). The program keeps a one-file check's document to the end; a folder's run
    and main() in a caller's process free each one as before. The findings are the same."""
    for file_name, text in _benchmark_files().items():
        (tmp_path / file_name).write_text(text)
    (tmp_path / ".git").mkdir()
    said, result = _probe_run(KEPT_PROBE, tmp_path, caller, "check", "--no-progress", "--no-cache", *paths)
    assert said == kept, (said, result.stderr)
    if "--diff" in paths:
        assert result.returncode == 0 and "1 more fix available" in result.stderr  # the unsafe fix, not shown
    else:
        assert result.returncode == 1 and "train.py:" in result.stdout


@pytest.mark.parametrize("prelude,ends_at_once", [
    ("import threading\n", True),  # a site .pth may import it at every start: no thread to wait for
    ("import threading, time\nthreading.Thread(target=time.sleep, args=(0.3,)).start()\n", False),
])
def test_the_teardown_is_skipped_only_when_no_thread_is_waited_for(tmp_path: Path, prelude: str,
                                                                   ends_at_once: bool) -> None:
    """A normal exit waits for the other threads (and runs threading's exit functions) before atexit's: with a
    thread alive the program exits normally; with threading merely imported it still ends at once."""
    for file_name, text in _benchmark_files().items():
        (tmp_path / file_name).write_text(text)
    (tmp_path / ".git").mkdir()
    said, result = _probe_run(prelude + TEARDOWN_PROBE, tmp_path, "check", "--no-progress", "--no-cache", "train.py")
    assert result.returncode == 1 and "in 1 file checked." in result.stdout
    assert said == ("exit functions ran; ended at once with 1" if ends_at_once else "exit functions ran"), said
