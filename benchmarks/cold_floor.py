"""How far a cold check can fall: the CPU of the work no implementation of the rules on Python's `ast` can skip.

    python benchmarks/cold_floor.py --runs 3 TREE...

Measured as subprocesses, alternated in every round, each CPU time the user + sys of the process and the workers it
waited for (wait4):

  baseline  reads and `ast.parse`s every .py file of the trees, one process (benchmarks/run.py's baseline)
  floor     one process that does only what a check cannot leave out: start the interpreter, find the files
            (precisionlint's own discovery), read each, run the prefilter, and parse each file that a rule reads
            (a config with its format's loader; a Python file with `ast.parse` when a pass reads its tree,
            engine.gate); no rule, no script model, no project model, no output
  check     `precisionlint check --no-cache --exit-zero` on the trees (two workers on two cores)

The floor is not a target: it is what the cold ratio cannot go below while the rules read Python through `ast`
(every such file's tree is built once) and configs through their parsers. What the check costs above it is the
analysis: the rules, the script model, the project model, the pool and the output.

Measured on two idle cores (`python benchmarks/cold_floor.py --runs 3 /work/eco/*`: snapshots of k2-fsa/icefall,
speechbrain/speechbrain, huggingface/pytorch-image-models and Lightning-AI/pytorch-lightning, 5,065 files of which
4,514 Python; 944 pass the prefilter, 594 are parsed):

    baseline (read + ast.parse every .py)                    6.61 s   1.00x
    floor (discover, read, prefilter, parse what is read)    2.33 s   0.35x
    check --no-cache                                         5.15 s   0.78x

Where the floor goes (the same steps in one process, timed each): `ast.parse` of the 453 Python files a pass
reads (16.8 MB) 1.24 s, the prefilter's word scans over all 78.9 MB 0.35 s, the engine's gate (which of the 803
Python files that pass the prefilter a pass reads) 0.32 s, configs' parsers 0.14 s, reading 0.07 s, discovery
0.02 s. So a cold check at 0.35x the baseline would have to do every rule, the script and project models, the
pool and the output in no time at all: what the check costs above the floor (about 0.4x) is that analysis.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from run import BASELINE  # noqa: E402  (the same baseline as the main benchmark)

FLOOR = r"""
import ast, gc, os, sys, warnings
warnings.simplefilter("ignore")
gc.disable()  # as the check parses: a tree holds no cycles, and is freed when the next replaces it
from pathlib import Path
from precisionlint.engine.gate import python_tree_is_read
from precisionlint.engine.prefilter import might_hold_findings
from precisionlint.engine.reading import read_source
from precisionlint.run.discover import discover
from precisionlint.sources import DEFAULT_LIMITS, parse_document
from precisionlint.sources.decoding import decode_source
from precisionlint.sources.not_config import not_a_config
counts = {"files": 0, "read": 0, "parsed": 0}
for source in discover(sys.argv[1:], Path.cwd()).files:
    counts["files"] += 1
    data = read_source(source, DEFAULT_LIMITS)
    if not isinstance(data, bytes) or not might_hold_findings(data, source.format):
        continue
    counts["read"] += 1
    if not_a_config(source.display, data, source.format):
        continue
    try:
        text = decode_source(data, source.display, source.format)
        if source.format == "python":
            if python_tree_is_read(text):
                ast.parse(text)
                counts["parsed"] += 1
        else:
            parse_document(source.display, text, source.format)
            counts["parsed"] += 1
    except Exception:
        pass
print(counts)
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode: time that, not compiling
    env.pop("PRECISIONLINT_CACHE_DIR", None)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _cpu(cmd: list[str], cwd: Path) -> tuple[float, str]:
    """CPU seconds (user + sys of the process and the children it waited for) and its standard output."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=_env(), stdout=out, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status) not in (0, 1):
            raise SystemExit(f"{' '.join(cmd)} failed with exit code {os.waitstatus_to_exitcode(status)}")
        out.seek(0)
        return usage.ru_utime + usage.ru_stime, out.read().decode(errors="replace")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", type=Path, help="local directories (real repositories)")
    parser.add_argument("--runs", type=int, default=3, help="rounds (median of each measurement)")
    args = parser.parse_args(argv)
    trees = [str(tree.resolve()) for tree in args.trees]
    python = sys.executable
    subprocess.run([python, "-m", "compileall", "-q", str(ROOT / "precisionlint")], env=_env(), check=True)
    commands = {
        "baseline (read + ast.parse every .py)": [python, "-c", BASELINE, *trees],
        "floor (discover, read, prefilter, parse what is read)": [python, "-c", FLOOR, *trees],
        "check --no-cache": [python, "-m", "precisionlint", "check", "--no-cache", "--exit-zero", "--no-progress",
                             "--output-format", "json", *trees],
    }
    cpus: dict[str, list[float]] = {name: [] for name in commands}
    shown: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for round_number in range(args.runs + 1):  # round 0 warms the page cache
            for name, cmd in commands.items():
                cpu, out = _cpu(cmd, Path(scratch))
                if round_number:
                    cpus[name].append(cpu)
                    if name.startswith("floor"):
                        shown[name] = out.strip()
    base = statistics.median(cpus[next(iter(commands))])
    print(f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, median of {args.runs} rounds (CPU seconds)")
    for name, values in cpus.items():
        median = statistics.median(values)
        print(f"  {name:55s} {median:6.2f} s  {median / base:5.2f}x  ({', '.join(f'{v:.2f}' for v in values)})")
    print(f"  floor's files: {shown.get(next(n for n in commands if n.startswith('floor')), '?')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
