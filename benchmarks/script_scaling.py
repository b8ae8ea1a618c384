"""Does the script analysis grow linearly with the file? Measured in one run on this machine.

    python benchmarks/script_scaling.py            # sizes 1,500 and 3,000; print a table
    python benchmarks/script_scaling.py --strict   # ... and exit 1 if a ratio misses its target

For each shape of large Python file the training-step model must handle, a generated file of N units and one of
2N units are checked by the script rules in this process (CPU time, best of several runs), and the ratio
time(2N) / time(N) is printed beside the same ratio for a baseline that only `ast.parse`s the two files:

  elif       one function whose body is an `if` / 3,000-branch `elif` chain (nested 3,000 deep in the AST)
  functions  3,000 small functions, each a full scaled training step
  module     3,000 module-level training steps (autocast, scaled backward, step, update)
  rebound    3,000 module-level steps, each after rebinding model, optimizer and scaler to other names and back

Linear growth doubles the time (ratio about 2, like the parse baseline); quadratic growth quadruples it.
Target: ratio <= 2.6 for every shape, and the 3,000-unit files well under the 10 s per-file limit.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HEADER = (
    "import torch\n"
    "model = torch.nn.Linear(2, 2)\n"
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    'scaler = torch.amp.GradScaler("cuda")\n'
)
TARGET_RATIO = 2.6
LIMIT_SECONDS = 10.0


def elif_chain(n: int) -> str:
    lines = [HEADER, "def step(x, kind):\n", "    if kind == 0:\n        y = 0\n"]
    lines += [f"    elif kind == {i}:\n        y = {i}\n" for i in range(1, n)]
    lines += [
        '    with torch.autocast("cuda", dtype=torch.float16):\n',
        "        loss = model(x).mean()\n",
        "    scaler.scale(loss).backward()\n",
        "    scaler.step(optimizer)\n",
        "    scaler.update()\n",
    ]
    return "".join(lines)


def functions(n: int) -> str:
    return HEADER + "".join(
        f"def f{i}(x):\n"
        '    with torch.autocast("cuda", dtype=torch.float16):\n'
        "        loss = model(x).mean()\n"
        "    scaler.scale(loss).backward()\n"
        "    scaler.unscale_(optimizer)\n"
        "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
        "    scaler.step(optimizer)\n"
        "    scaler.update()\n"
        f"    return f{max(i - 1, 0)}\n"
        for i in range(n)
    )


def module_steps(n: int) -> str:
    return HEADER + "".join(
        'with torch.autocast("cuda", dtype=torch.float16):\n'
        f"    loss{i} = model(torch.zeros(2)).mean()\n"
        f"scaler.scale(loss{i}).backward()\n"
        "scaler.step(optimizer)\n"
        "scaler.update()\n"
        for i in range(n)
    )


def rebound(n: int) -> str:
    """Module-level names rebound to each other before every step: the optimizer's parameters are followed
    through every value of `model` (this once grew as the cube of the file)."""
    return HEADER + "".join(
        "m2 = model\nmodel = m2\nopt2 = optimizer\noptimizer = opt2\ns2 = scaler\nscaler = s2\n"
        'with torch.autocast("cuda", dtype=torch.float16):\n'
        "    loss = model(x).sum()\n"
        "scaler.scale(loss).backward()\n"
        "scaler.step(optimizer)\n"
        "scaler.update()\n"
        for _ in range(n)
    )


SHAPES: dict[str, Callable[[int], str]] = {"elif": elif_chain, "functions": functions, "module": module_steps,
                                           "rebound": rebound}


def best_of(runs: int, action: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        action()
        best = min(best, time.process_time() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1500, help="N: the small file's units (the large has 2N)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()

    from precisionlint.checks import all_rules
    from precisionlint.engine.check import check_bytes
    from precisionlint.engine.options import EngineOptions

    rules = [r for r in all_rules() if r.target == "script"]
    options = EngineOptions(rules=rules, prefilter=False)
    sys.setrecursionlimit(8000)  # what the engine's guard sets for one file's analysis

    class NotAnalysed(Exception):
        pass

    def check(text: str) -> None:
        result = check_bytes("big.py", text.encode(), "python", options)
        limits = [f for f in result.findings if f.code in ("PL003", "PL002")]
        if limits:
            raise NotAnalysed(limits[0].message)

    print(f"{'shape':<10} {'N':>6} {'check N':>9} {'check 2N':>9} {'ratio':>6} {'parse ratio':>11}")
    missed = False
    for name, make in SHAPES.items():
        small, large = make(args.size), make(2 * args.size)
        try:
            t_small = best_of(args.runs, lambda text=small: check(text))  # type: ignore[misc]
            t_large = best_of(args.runs, lambda text=large: check(text))  # type: ignore[misc]
        except NotAnalysed as exc:
            print(f"{name:<10} {args.size:>6} not analysed: {exc}")
            missed = True
            continue
        p_small = best_of(args.runs, lambda text=small: ast.parse(text))  # type: ignore[misc]
        p_large = best_of(args.runs, lambda text=large: ast.parse(text))  # type: ignore[misc]
        ratio = t_large / t_small
        print(f"{name:<10} {args.size:>6} {t_small:>8.2f}s {t_large:>8.2f}s {ratio:>6.2f} {p_large / p_small:>11.2f}")
        missed |= ratio > TARGET_RATIO or t_large > LIMIT_SECONDS
    print(f"target: ratio <= {TARGET_RATIO} (2.0 is linear, 4.0 quadratic) and 2N checked in < {LIMIT_SECONDS:g} s CPU")
    return 1 if missed and args.strict else 0


if __name__ == "__main__":
    raise SystemExit(main())
