"""Peak memory of a whole-tree check against the size of the tree: 1x, 2x and 4x copies of real repositories.

    python benchmarks/memory_scaling.py /work/eco/Lightning-AI__pytorch-lightning /work/eco/speechbrain__speechbrain \
        /work/eco/huggingface__pytorch-image-models
    python benchmarks/memory_scaling.py --scales 1 4 --runs 3 --strict REPO...

The corpus at scale N holds N copies of the repositories named; in copy k (0-based) every regular file ends in k
more newlines, so that each copy's files are distinct content (no analysis is shared between copies) and the
findings are those of the original. It is built once under --work (default: a folder in the temporary directory).

Each run is `python -m precisionlint check --no-cache --exit-zero --no-progress --output-format json TREE` with
stdout to /dev/null (the findings are still held and written), the package imported from this checkout. While it
runs, its whole process tree is sampled every few milliseconds from /proc: the sum of the processes' RSS, the sum
of their PSS (shared pages of the forked workers counted once), plus the size of the workers' in-memory file of
bytes (an anonymous memfd: real memory that no process maps, so no RSS shows it). The peak of each sum is
reported, the median over --runs, with the parent's own peak RSS and the largest worker's. With --baseline CHECKOUT
the same trees are checked with that checkout's package too, alternated with this one's in every round.

RSS summed counts twice what a worker shares with the process it forked from (the tree's file list the parent holds
when it forks the first worker is in every worker's RSS); PSS summed counts it once.

Targets (issue: memory that does not grow with the tree): the 2x and 4x peaks within 10% of the 1x peak, and
every peak under 120 MB (RSS sum + the in-memory file).

Measured (icefall, speechbrain, pytorch-image-models, pytorch-lightning; `--runs 3 --scales 1 4 --baseline`), RSS
sum + file, parent and largest worker in brackets:

    code                                   1x                     4x                      spread
    before (reports, linked files kept)    89.5 MB (27.6, 37.1)   136.8 MB (59.9, 57.5)   52.8%
    after                                  86.4 MB (21.5, 34.5)   107.9 MB (28.5, 41.5)   24.9%

Then (`--runs 3 --scales 1 2 4 --baseline`, the code above as the baseline in the same rounds): a window of 64k
characters of linked files instead of 256k (a parsed script costs 30 to 55 bytes per character), the findings'
texts shared in the process that reports them, and discovery without a list of every path:

    code      1x                     2x                     4x                     spread
    before    87.9 MB (21.1, 35.1)   99.2 MB (24.1, 39.1)   106.7 MB (28.3, 41.3)  21.3%   (PSS 69.9 -> 88.4)
    after     80.1 MB (21.0, 30.7)   87.9 MB (23.7, 33.5)    93.5 MB (27.3, 35.7)  16.7%   (PSS 62.2 -> 75.1)

What still grows (4x against 1x): the parent 6 MB, for the tree's folders (the folder table, each folder's pins
for the analyses' keys: 2 MB traced), the findings (0.8 MB) and what the allocator keeps around them; each worker
about 4 MB, of which 2 MB is live (the folders it met: listings, projects, pins) and the rest the holes the freed
trees leave in the allocator's arenas. Tried and not kept: a fresh worker forked every 4 to 12 MB of files from
an idle first worker that holds the warm-up (the idle one adds its 20 MB to every scale's RSS sum: 100.6 ->
113.3 MB, and the 4x PSS falls by only 5 MB, since a fresh worker is back near its peak within a few files);
bounding the workers' folder tables to 64 or 256 folders (no change); a collection after every chunk (none).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
LIMIT_MB = 120.0
SPREAD = 0.10
_PAGE = os.sysconf("SC_PAGE_SIZE")


def build(repos: list[Path], scale: int, work: Path) -> Path:
    """The corpus at `scale`: copies 0..scale-1 of every repository (built once; copy 0 is the original)."""
    tree = work / f"{scale}x"
    done = tree / ".built"
    if done.exists():
        return tree
    if tree.exists():
        shutil.rmtree(tree)
    for copy in range(scale):
        for repo in repos:
            target = tree / f"copy{copy}" / repo.name
            shutil.copytree(repo, target, symlinks=True)
            if copy:
                tail = b"\n" * copy
                for folder, _, names in os.walk(target):
                    for name in names:
                        path = os.path.join(folder, name)
                        if os.path.isfile(path) and not os.path.islink(path):
                            with open(path, "ab") as handle:
                                handle.write(tail)
    done.write_text("")
    return tree


def _children(pid: int) -> list[int]:
    found = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found += [int(child) for child in handle.read().split()]
    except OSError:
        pass
    return found


def _tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        current = todo.pop()
        pids.append(current)
        todo += _children(current)
    return pids


def _rss_pss(pid: int) -> tuple[int, int]:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            rss = pss = 0
            for line in handle:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
            return rss, pss
    except (OSError, ValueError):
        return 0, 0


def _memfd_bytes(pid: int) -> dict[tuple[int, int], int]:
    """The in-memory files a process holds open: (device, inode) -> size, so that one shared by the parent and
    its workers counts once."""
    found: dict[tuple[int, int], int] = {}
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            path = f"/proc/{pid}/fd/{fd}"
            try:
                if os.readlink(path).startswith("/memfd:"):
                    info = os.stat(path)
                    found[(info.st_dev, info.st_ino)] = info.st_blocks * 512
            except OSError:
                continue
    except OSError:
        pass
    return found


Sample = tuple[float, float, float, float, float, float]


def measure(tree: Path, checkout: Path = HERE, interval: float = 0.005) -> Sample:
    """Wall seconds, peak RSS sum, peak PSS sum, peak in-memory file, the parent's own peak RSS and the largest
    worker's peak RSS (MB) of one check of `tree` with the package of `checkout`."""
    env = dict(os.environ, PYTHONPATH=str(checkout))
    cmd = [sys.executable, "-m", "precisionlint", "check", "--no-cache", "--exit-zero", "--no-progress",
           "--output-format", "json", str(tree)]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, env=env, cwd=tempfile.gettempdir())
    peak_rss = peak_pss = peak_fd = 0
    own: dict[int, int] = {}  # pid -> its peak RSS
    while proc.poll() is None:
        rss = pss = 0
        files: dict[tuple[int, int], int] = {}
        for pid in _tree(proc.pid):
            one_rss, one_pss = _rss_pss(pid)
            own[pid] = max(own.get(pid, 0), one_rss)
            rss += one_rss
            pss += one_pss
            files.update(_memfd_bytes(pid))
        held = sum(files.values())
        peak_rss = max(peak_rss, rss + held)
        peak_pss = max(peak_pss, pss + held)
        peak_fd = max(peak_fd, held)
        time.sleep(interval)
    elapsed = time.perf_counter() - start
    if proc.returncode:
        raise SystemExit(f"check of {tree} exited {proc.returncode}")
    mb = 1024.0 * 1024.0
    parent = own.pop(proc.pid, 0)
    return elapsed, peak_rss / mb, peak_pss / mb, peak_fd / mb, parent / mb, max(own.values(), default=0) / mb


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--scales", nargs="+", type=int, default=[1, 2, 4])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "precisionlint-memory-scaling")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--baseline", type=Path, help="another checkout (its package folder's parent), measured in the "
                        "same rounds: a change's effect as numbers from the same minutes")
    args = parser.parse_args(argv)
    repos = [repo.resolve() for repo in args.repos]
    key = "+".join(repo.name for repo in repos)
    work = args.work / key[:120]
    trees = {scale: build(repos, scale, work) for scale in args.scales}
    checkouts = {"this": HERE}
    if args.baseline is not None:
        checkouts = {"baseline": args.baseline.resolve(), **checkouts}
    samples: dict[tuple[str, int], list[Sample]] = {(name, scale): [] for name in checkouts for scale in args.scales}
    for _ in range(args.runs):  # alternated: every scale (and checkout) once per round, so load moves them together
        for scale in args.scales:
            for name, checkout in checkouts.items():
                samples[name, scale].append(measure(trees[scale], checkout))
    print(f"load average {os.getloadavg()[0]:.2f}; {', '.join(repo.name for repo in repos)}")
    met = True
    for name, checkout in checkouts.items():
        print(f"{name} ({checkout}):")
        print(f"{'scale':>5}  {'wall s':>7}  {'RSS+file MB':>11}  {'PSS+file MB':>11}  {'file MB':>7}  "
              f"{'parent MB':>9}  {'worker MB':>9}")
        peaks = {}
        for scale in args.scales:
            rows = samples[name, scale]
            wall, rss, pss, held, parent, worker = (statistics.median(row[i] for row in rows) for i in range(6))
            peaks[scale] = rss
            runs = " ".join(f"{row[1]:.0f}" for row in rows)
            print(f"{scale:>4}x  {wall:7.2f}  {rss:11.1f}  {pss:11.1f}  {held:7.1f}  {parent:9.1f}  {worker:9.1f}   "
                  f"(RSS+file runs: {runs})")
        base = peaks[min(args.scales)]
        spread = max(abs(peak - base) / base for peak in peaks.values())
        worst = max(peaks.values())
        met = met and spread <= SPREAD and worst < LIMIT_MB
        print(f"  largest difference from the smallest scale: {spread:.1%} (target <= {SPREAD:.0%}); "
              f"largest peak {worst:.1f} MB (target < {LIMIT_MB:.0f} MB): "
              f"{'met' if spread <= SPREAD and worst < LIMIT_MB else 'missed'}")
    return 1 if args.strict and not met else 0


if __name__ == "__main__":
    sys.exit(main())
