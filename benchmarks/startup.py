"""Start-up: `precisionlint check` on one small file against `python -c pass`, in the same run on this machine.

    python benchmarks/startup.py                          # this checkout, 3 rounds of 15 runs each
    python benchmarks/startup.py --baseline /path/to/old  # and an older checkout, alternated with this one
    python benchmarks/startup.py --imports                # and what each file's check imports (-X importtime)

Each run is a subprocess in a temporary folder (a project root of its own) holding the files below, with the
package imported from the checkout (PYTHONPATH) and its bytecode compiled first (a user's install has it;
PYTHONDONTWRITEBYTECODE, which some environments set, would otherwise make every run compile the package again).
Reported per command: the median wall time and the median CPU time (user + system, from the children's rusage:
less moved by other processes on a shared machine than the wall time), and their ratios to `python -c pass`
measured in the same rounds.

The baseline is `python -c pass` run by the same interpreter (sys.executable) with the same site and environment as
the checks (PYTHONPATH, no PYTHONDONTWRITEBYTECODE): what a user's shell starts before precisionlint imports
anything. What that site imports is printed first: an editable install's finder (a `__editable__...finder` .pth
file) imports pathlib, re, urllib.parse and ipaddress in every `python` start, about 40 modules, so the baseline is
heavy there and a module the run imports that site already imported costs the run nothing. `--no-site` runs every
command (the baseline too) with `python -S`: the run as it would start where site imports little (the package
found through PYTHONPATH; the three files need no third-party module).

Files: `plain.py` (a torch script no rule can fire on: the prefilter rejects it unread by any parser),
`train.py` (a deprecated autocast: parsed and checked), `one.toml` (a Lightning-style config with a precision
setting). Target (issue: instant start): each at most 2x `python -c pass`.
"""

from __future__ import annotations

import argparse
import compileall
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
TARGET = 2.0
FILES = {
    "plain.py": "import os\n\nimport torch\n\n\ndef main():\n    model = torch.nn.Linear(4, 4)\n"
                "    print(os.getcwd(), model)\n",
    "train.py": "import torch\n\nwith torch.cuda.amp.autocast():\n    loss = model(x)\nloss.backward()\n",
    "one.toml": '[trainer]\nprecision = "16-mixed"\naccelerator = "gpu"\n',
}


def _once(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of `cmd`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _imports(checkout: Path, cwd: Path, name: str, top: int) -> None:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "precisionlint", "check", "--no-progress", name],
                            cwd=cwd, env=env, capture_output=True, text=True, check=False)
    rows = []
    for line in result.stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            own, cumulative, module = line[len("import time:"):].split("|")
            rows.append((int(own), module.strip()))
    ours = [row for row in rows if row[1].startswith("precisionlint")]
    print(f"  {name}: {len(rows)} modules imported ({len(ours)} of precisionlint), "
          f"{sum(own for own, _ in rows) / 1000:.1f} ms of own import time; the heaviest:")
    print("    " + ", ".join(f"{module} {own / 1000:.1f}" for own, module in sorted(rows, reverse=True)[:top]))


def _environment(checkout: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # a user's install has its bytecode (compiled above)
    return env


def _describe_baseline(python: list[str], env: dict[str, str], cwd: Path) -> None:
    """Which interpreter and site the baseline (and every check) starts, and how much that site imports."""
    probe = ("import sys; "
             "print(sys.version.split()[0], len(sys.modules), ' '.join(sorted(m for m in sys.modules "
             "if m in ('pathlib', 're', 'typing', 'enum', 'urllib.parse', 'ipaddress')))); "
             "print(' '.join(p for p in sys.path if p.endswith('site-packages')) or 'no site-packages')")
    done = subprocess.run([*python, "-c", probe], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    version, site = done.stdout.strip().split("\n")
    number, count, *heavy = version.split()
    print(f"baseline: {' '.join(python)} -c pass (Python {number}); at start-up {count} modules are imported "
          f"(among them: {', '.join(heavy) or 'none of pathlib, re, typing, enum'}); site-packages: {site}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=15, help="runs of each command per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout, measured in the same rounds")
    parser.add_argument("--imports", action="store_true", help="list what each file's check imports")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--no-site", action="store_true", help="run every command, the baseline too, with python -S")
    args = parser.parse_args(argv)
    checkouts = {"this": HERE}
    if args.baseline is not None:
        checkouts = {"baseline": args.baseline.resolve(), **checkouts}
    for checkout in checkouts.values():
        compileall.compile_dir(str(checkout / "precisionlint"), quiet=1)
    folder = Path(tempfile.mkdtemp(prefix="precisionlint-startup-"))
    (folder / ".git").mkdir()  # a project of its own: the run looks no further up (the temporary folder's neighbours)
    for name, text in FILES.items():
        (folder / name).write_text(text)
    python = [sys.executable, "-S"] if args.no_site else [sys.executable]
    base_env = _environment(HERE)
    commands: dict[str, tuple[list[str], dict[str, str]]] = {"python -c pass": ([*python, "-c", "pass"], base_env)}
    _describe_baseline(python, base_env, folder)
    for label, checkout in checkouts.items():
        env = _environment(checkout)
        for name in FILES:
            commands[f"{label}: check {name}"] = (
                [*python, "-m", "precisionlint", "check", "--no-progress", "--no-cache", name], env)
    samples: dict[str, list[tuple[float, float]]] = {what: [] for what in commands}
    for _ in range(args.rounds):
        for _ in range(args.runs):  # interleaved: every command once in turn, so that load moves them together
            for what, (cmd, env) in commands.items():
                samples[what].append(_once(cmd, folder, env))
    print(f"load average {os.getloadavg()[0]:.2f}; {args.rounds} x {args.runs} runs of each")
    base_wall = statistics.median(wall for wall, _ in samples["python -c pass"])
    base_cpu = statistics.median(cpu for _, cpu in samples["python -c pass"])
    worst = 0.0
    print(f"{'command':<34} {'wall ms':>8} {'ratio':>6} {'CPU ms':>8} {'ratio':>6}")
    for what, rows in samples.items():
        wall = statistics.median(w for w, _ in rows)
        cpu = statistics.median(c for _, c in rows)
        if what.startswith("this"):
            worst = max(worst, wall / base_wall)
        print(f"{what:<34} {wall * 1000:8.1f} {wall / base_wall:6.2f} {cpu * 1000:8.1f} {cpu / base_cpu:6.2f}")
    print(f"largest wall ratio of this checkout: {worst:.2f} (target <= {TARGET:.1f}): "
          f"{'met' if worst <= TARGET else 'missed'}")
    if args.imports:
        for label, checkout in checkouts.items():
            print(f"{label} imports:")
            for name in FILES:
                _imports(checkout, folder, name, 12)
    return 1 if args.strict and worst > TARGET else 0


if __name__ == "__main__":
    sys.exit(main())
