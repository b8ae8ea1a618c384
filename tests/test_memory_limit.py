"""max-memory: a file whose analysis would need more memory than the limit is skipped with limit-exceeded, before
anything is parsed, instead of taking the machine's memory (a few MB of dense Python take gigabytes as a tree)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from precisionlint.checks import all_rules
from precisionlint.engine.check import check_bytes, estimated_memory
from precisionlint.engine.options import EngineOptions
from precisionlint.sources import Limits

# A half cast and an optimizer over it: a file the script rules read (half-params-without-master-weights).
DENSE = ("import torch\nmodel = Net().half()\nopt = torch.optim.SGD(model.parameters())\n"
         "DATA = [" + ",".join(["7"] * 150_000) + "]\n").encode()


def test_the_estimate_covers_what_a_parse_takes() -> None:
    """Measured in a fresh process (tracemalloc's peak): the tree of a dense literal takes no more than the
    estimate, and not less than a tenth of it (the estimate is not wildly pessimistic either)."""
    code = (
        "import ast, sys, tracemalloc\n"
        "data = sys.stdin.buffer.read()\n"
        "tracemalloc.start()\n"
        "tree = ast.parse(data)\n"
        "print(tracemalloc.get_traced_memory()[1])\n"
    )
    used = int(subprocess.run([sys.executable, "-c", code], input=DENSE, capture_output=True, check=True).stdout)
    assert estimated_memory(DENSE, "python") / 10 < used <= estimated_memory(DENSE, "python")  # 148 of 195 MB


def test_a_file_over_the_limit_is_skipped_before_parsing() -> None:
    options = EngineOptions(rules=all_rules(), limits=Limits(max_memory=50_000_000))
    result = check_bytes("dense.py", DENSE, "python", options)
    [finding] = result.findings
    assert finding.code == "PL003" and "max-memory" in finding.message and "not checked" in finding.message
    assert result.document is None


def test_the_default_limit_lets_real_sized_files_through() -> None:
    # 300 kB of ordinary statements with comments, as real modules have
    script = b"import torch\n" + b"y = model(x).half()  # a comment, as real code has plenty of them\n" * 4_500
    result = check_bytes("big.py", script, "python", EngineOptions(rules=all_rules()))
    assert not any(f.code == "PL003" for f in result.findings)
    assert estimated_memory(b"x = 1\n" * 10, "python") == 0  # small files are not even counted


def test_max_memory_setting(tmp_path: Path) -> None:
    (tmp_path / "dense.py").write_bytes(DENSE)
    (tmp_path / "pyproject.toml").write_text("[tool.precisionlint]\nmax-memory = 50_000_000\n")
    command = [sys.executable, "-m", "precisionlint", "check", "--no-progress", "--no-cache", "dense.py"]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert result.returncode == 1 and "PL003" in result.stdout and "max-memory" in result.stdout
    (tmp_path / "pyproject.toml").write_text("[tool.precisionlint]\nmax-memory = -1\n")
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert result.returncode == 2 and "max-memory" in result.stderr


def test_a_data_file_is_skipped_as_data_not_reported_over_the_limit() -> None:
    """VQA/COCO-style annotations (`{"annotations": [{...}, ...]}`) are data: recognised from their first
    kilobytes and skipped quietly, even when they are too large to analyse, instead of a limit-exceeded error."""
    record = '{"question_id": %d, "answers": [{"answer": "half", "answer_id": 1}, {"answer": "fp16", "answer_id": 2}]}'
    data = ('{"annotations": [' + ", ".join(record % i for i in range(40_000)) + "]}").encode()
    options = EngineOptions(rules=all_rules(), limits=Limits(max_memory=50_000_000))
    result = check_bytes("val_annotations.json", data, "json", options)
    assert result.findings == [] and result.skipped
    # A config of the same size with a few nested objects is still a config: over the limit, it is reported.
    config = ('{"fp16": {"enabled": true}, "notes": "' + "x" * 6_000_000 + '"}').encode()
    [finding] = check_bytes("ds_config.json", config, "json", options).findings
    assert finding.code == "PL003"


def test_a_python_file_no_pass_would_parse_is_not_reported_over_the_limit() -> None:
    """A generated table of GPU registers (tinygrad's autogen/am/regs.py, 1.4 MB) passes the prefilter for a
    field named `fp16_ovfl`, but no rule reads a tree without a word of the training step: it is skipped as a
    smaller file would be, not reported as too large to check. The same size with a half cast and an optimizer
    is still over the limit."""
    table = ("REGS = {\n" + "".join(
        f"  'reg{i}': ({i}, 0, {{'fp16_ovfl': (26, 26), 'wgp_mode': (29, 29)}}),\n" for i in range(40_000)
    ) + "}\n").encode()
    options = EngineOptions(rules=all_rules(), limits=Limits(max_memory=50_000_000))
    assert estimated_memory(table, "python") > 50_000_000
    result = check_bytes("regs.py", table, "python", options)
    assert result.findings == []
    [finding] = check_bytes("dense.py", DENSE, "python", options).findings
    assert finding.code == "PL003"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS as Linux enforces it")
def test_a_system_error_under_an_address_space_limit_is_running_out_of_memory() -> None:
    """CPython's "error return without exception set" is what a shared library that cannot be mapped under
    `ulimit -v` may leave, far below the limit once the mapping is undone: it is reported as the limit's doing,
    while without a limit it is a bug like any other."""
    code = (
        "import resource, sys\n"
        "from precisionlint.core.memory import ran_out_of_memory\n"
        "error = SystemError('error return without exception set')\n"
        "hard = resource.getrlimit(resource.RLIMIT_AS)[1]\n"
        "resource.setrlimit(resource.RLIMIT_AS, (hard, hard))\n"
        "before = ran_out_of_memory(error) if hard == resource.RLIM_INFINITY else False\n"
        "resource.setrlimit(resource.RLIMIT_AS, (64 << 30 if hard == resource.RLIM_INFINITY else hard, hard))\n"
        "print(before, ran_out_of_memory(error), ran_out_of_memory(ValueError('a bug')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "False"]


OUT_OF_MEMORY_PROBE = r"""
import atexit, os, sys
atexit.register(lambda: os.write(1, b"the interpreter's normal exit ran"))
from precisionlint.cli import check_command
def runs_out(values):
    check_command.out_of_memory()
    return check_command.EXIT_ERROR
check_command.execute = runs_out
sys.argv = ["precisionlint", "check", "--no-progress", "."]
from precisionlint.cli.entry import main
main()
"""


def test_a_run_that_said_it_ran_out_of_memory_ends_at_once(tmp_path: Path) -> None:
    """Once a run has said it ran out of memory, the process ends without the interpreter's normal exit, whose
    teardown under the same limit printed a `MemoryError` line for each object it failed to free (seen under
    `ulimit -v` on the example project): stderr holds the one line, and the code is 2."""
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run([sys.executable, "-c", OUT_OF_MEMORY_PROBE], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, env={"PYTHONPATH": str(root), "PATH": ""})
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("precisionlint: error: out of memory: ") and len(done.stderr.splitlines()) == 1
    assert "normal exit ran" not in done.stdout
