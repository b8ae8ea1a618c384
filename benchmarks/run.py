"""Benchmark `precisionlint check` against plain Python, in one run on this machine.

    python benchmarks/run.py                 # build the corpus (once), measure, print a table
    python benchmarks/run.py --strict        # ... and exit 1 if a target is missed
    python benchmarks/run.py --tree PATH     # the same ratios on any local directory (a real repository)
    python benchmarks/run.py --tree A --tree B ... --baseline CHECKOUT
                                             # several trees checked as one run (the real corpus), and the cold
                                             # check of another checkout of precisionlint in the same rounds

Measured, each as a subprocess (what a user or pre-commit runs):

  whole tree   `precisionlint check --no-cache .` on a generated repository (thousands of Python files,
               hundreds of configs), or on PATH, vs a baseline that only reads and ast.parses every Python file
               of it (a small script in its own process, one core)              target: <= 0.5x
  warm cache   `precisionlint check .` again over the unchanged tree, with the cache a first run wrote (kept in
               a temporary folder: PATH is never written to)                    target: <= 0.1x the baseline
  one file     `precisionlint check one.toml` vs `python -c pass`               target: <= 2x
  memory       peak RSS of the whole-tree check (the largest of its processes)  target: < 200 MB

Each whole-tree row also gives the CPU time (user + sys of the process and the workers it waited for, from
wait4) and its ratio to the baseline's CPU: on a loaded or two-core machine the wall times depend on how much of
the second core the pool gets, the CPU less so. With --baseline, the cold check of that checkout (PYTHONPATH) is
run alternately with this tree's in the same rounds, so the two ratios are comparable.

Parsers, measured for the check path (CPU seconds on this 2-core machine, Python 3.11, ruamel.yaml 0.19.1 pure,
PyYAML 6.0.3 with libyaml), over the 1,305 YAML files (9.9 MB) and 244 JSON files (21.2 MB) that pass the
prefilter in 50 public training repositories:

  YAML  ruamel round-trip load (what fixes need)          29.1 s    0.34 MB/s
        ruamel round-trip compose only                    32.6 s    0.31 MB/s
        ruamel safe load (pure Python)                    27.6 s    0.36 MB/s
        PyYAML SafeLoader compose (pure Python)           20.2 s    0.49 MB/s
        PyYAML CSafeLoader compose (libyaml, with marks)   1.0 s    9.6 MB/s   <- check path (sources/yaml_check)
        PyYAML CSafeLoader load (no positions)             1.6 s    6.2 MB/s
  JSON  json.loads (no positions)                          0.34 s   62 MB/s
        json_source.load (json.loads + position scan)      9.4 s    2.3 MB/s   <- the position scan is the cost
        (since: one regex match per member, big containers left unbuilt until read: the scan is 1.2x json.loads
        on benchmarks/big_files.py's 20 MB config, from 11.6x)

yaml_check hands a file to the round-trip loader whenever it could differ from it (aliases, tags, directives,
duplicate keys, timestamps and other rare scalars, carriage returns): on those 1,305 files, 180 take that path,
and the whole set loads in 12.4 s instead of 31.0 s with identical trees, settings and errors.

Real trees (`python benchmarks/run.py --tree /work/eco/<repo> --runs 3 --startup-runs 10`, 2 cores shared with
other work: load average 3 to 4 during these runs, which moves every wall time; the CPU times below move less):

  tree (Python files, links)       baseline   cold check   ratio    warm    ratio   one file   peak
  k2-fsa/icefall (2,826; 1,360)     9.1 s       7.7 s     0.85x    0.49 s  0.05x    1.81x     47 MB
                  (another run)    11.0 s       9.1 s     0.83x    0.65 s  0.06x    2.23x     47 MB
  speechbrain (727; 114)            1.38 s      1.45 s    1.05x    0.33 s  0.24x    1.83x     31 MB
  pytorch-image-models (315; 0)     1.26 s      1.30 s    1.03x    0.23 s  0.19x    1.71x     37 MB
  pytorch-lightning (646; 0)        1.61 s      3.12 s    1.95x    0.25 s  0.16x    1.84x     30 MB

  Before this round, icefall: cold 2.42x (27.1 s vs 11.2 s), warm 0.10x, one file 1.89x, 68 MB.
  icefall at load average 2.65 (`/usr/bin/time precisionlint check --no-cache .` in the tree): 4.43 s wall
  against 7.73 s for the baseline, 0.57x; CPU: baseline 7.2-7.9 s, `check -j 1` 7.6-8.5 s, `-j 2` 8.3-8.9 s
  in all. So on two idle cores the cold check is about 0.55x: the 0.5x target is not met on icefall, and the
  small trees are dominated by start-up, the pool and the per-folder project and configuration lookups.

  Later, on a quiet machine (load average under 1), same command, after the statement-only DeepSpeed walk:
  k2-fsa/icefall        baseline 8.12 s, cold 4.18 s = 0.51x, warm 0.51 s = 0.06x, one file 1.80x, 47 MB
  speechbrain           baseline 1.19 s, cold 0.95 s = 0.79x, warm 0.31 s = 0.26x, one file 1.87x, 31 MB
  pytorch-image-models  baseline 0.97 s, cold 0.52 s = 0.53x, warm 0.14 s = 0.15x, one file 1.86x, 37 MB
  pytorch-lightning     baseline 0.91 s, cold 0.80 s = 0.88x, warm 0.18 s = 0.20x, one file 1.93x, 30 MB
  The cold target (0.5x) is still missed everywhere, narrowly on icefall and timm; the warm target holds
  only on icefall, since on small trees start-up and the per-folder lookups are most of a warm run.

Warm runs after the cache's file index (an unchanged file, by its stat, is neither read, hashed nor prefiltered;
configuration and pins looked up once per folder without pathlib; the objects alive at exit frozen, so that the
interpreter's teardown collections skip them). CPU (user + sys) of the warm run, median of 7, measured with
`python -m precisionlint check --no-progress --exit-zero .` in the tree against the code before (3f264cd) and
after, same interpreter, load average 4 to 6 (both shared cores busy: every figure here is inflated; this
environment's `python -c pass` takes 42-47 ms of CPU):

  tree                   before    after    python -c pass
  pytorch-lightning      196 ms    84 ms    46 ms
  pytorch-image-models   146 ms    65 ms    47 ms
  speechbrain            335 ms    96 ms    47 ms
  k2-fsa/icefall         494 ms   149 ms    43 ms

  The benchmark's warm ratio in the same hour (`--runs 3 --startup-runs 10`, load average 4.7 to 6.4):
  pytorch-lightning 0.08x (162 ms vs a 1.94 s baseline), pytorch-image-models 0.04x (63 ms vs 1.45 s, in a
  quiet minute: `python -c pass` 47 ms), speechbrain 0.13x (166 ms vs 1.28 s; its three warm runs spread from
  0.12 to 0.22 s, and its one-file ratio read 2.52x in the same minute: load bursts), icefall 0.03x (239 ms vs
  8.0 s). A warm run is mostly fixed cost (start-up, imports, the rule registry), which load stretches more
  than the baseline's parsing. What is left of a warm run over speechbrain (in-process CPU, 1,084 files, 348
  folders): discovery 9 ms, configuration per folder 11 ms, the checking loop 23 ms (stat and index lookup
  5 ms, pins per folder 6 ms, results 2 ms), the rule registry 3 ms, imports 10 ms.

Cold runs outside the Python script model (YAML, shell launchers, the prefilter, rules that walked trees again).
CPU (user + sys) of `precisionlint check --no-cache --output-format json -j 1 .` in the tree, median of 3, with
compiled bytecode, main before (7ce4bcb) and after (b9dcb03) these changes (in between, only other engineers'
server and helper clean-ups landed), load average 4 to 6 (both shared cores busy):

  tree                   before    after
  speechbrain            1.31 s    0.96 s    (its 114 YAML files, in process: 0.58 -> 0.21 s)
  pytorch-lightning      1.11 s    1.08 s    (cross-file-precision-conflict 0.13-0.2 -> 0.03 s)
  pytorch-image-models   0.72 s    0.69 s
  k2-fsa/icefall         6.1 s     5.85 s

  Per part, in process: SpeechBrain's YAML spent half its time in ruamel's resolver (a version look-up for every
  scalar) and a third in pattern searches that tried every position; each plain scalar is now read once per
  process through ruamel's 1.2 pattern table, the file-wide tests search for their rare characters first, and
  libyaml composes without PyYAML's own resolver. OLMo's 58 YAML files 2.4 -> 0.6 s (`406_934` no longer sends
  135 kB files to the round-trip loader). InternVL's 147 launch scripts 0.77 -> 0.37 s (only lines that can
  name a launcher are tokenized; a linked script is searched once, not once per launcher). The prefilter
  (SpeechBrain, 8.9 MB of Python and 6.9 MB of notebooks): 0.094 -> 0.083 s (fewer scans, same files). Still
  slow: YAML with anchors or aliases takes the round-trip loader (NeMo: 28 of its 197 YAML files are 85% of
  its YAML time), and notebooks parse each cell and then the joined program.

  The pool (`-j 2` against `-j 1`, in process, pytorch-lightning): parent 0.19 s + workers 1.05 s = 1.24 s of
  CPU against 1.07 s in one process (a 0.18 s fork pool cost: warm-up before forking, workers' start, and
  per-process caches of projects and pins rebuilt in each worker; gc.freeze() before the fork changed nothing
  measurable). The parent starts the pool 0.05 s after start-up and stays ahead of the workers; chunks of 96 kB
  keep both workers busy to within one chunk (50-100 ms) of the end. On these shared cores another process kept
  a core busy through almost every measurement (`top`: one python at 94%), so `-j 2` was no faster than `-j 1`
  in wall time (speechbrain 1.17 vs 1.08 s, pytorch-lightning 0.97-1.13 vs 1.17-1.24 s, `/usr/bin/time`, load
  2.5), and the benchmark's cold ratios then say little about two idle cores: `--runs 3 --startup-runs 10` at
  load 2.1-2.3 gave speechbrain 0.83x (1,005 ms vs 1,216 ms; warm 0.09x, one file 1.82x) and pytorch-lightning
  1.28x (1,162 ms vs 908 ms; warm 0.10x, one file 1.65x); at load 3-4.5 speechbrain 0.99x, pytorch-lightning
  1.70x, pytorch-image-models 0.95x. In a quieter minute (load 1.6) after the first half of this work:
  speechbrain 0.55x (681 ms vs 1,228 ms), warm 0.09x, one file 1.84x. With 0.96 s of CPU at `-j 1`, the pool's
  0.18 s and a start-up that no worker shares, speechbrain needs about 0.65 s on two idle cores: just over the
  0.5x target (0.6 s); pytorch-lightning (1.08 s of CPU against a 0.91 s baseline) stays well over it, its
  Python analysis being most of the time.

Where icefall's cold CPU goes (`-j 1`; 2,957 files, 1,358 of them links to shared recipe files; 1,228 Python
files rejected by the prefilter; 285 Python analyses of 240 distinct files, 8.7 MB): ast.parse 1.3 s, settings
index 0.35 s, script model 2.6 s (scopes 0.4, collect 1.6, flow 0.56), suppressions 0.3 s, rules 0.5 s,
reading and hashing 0.25 s, start-up, discovery, per-folder configuration and pins, output: the rest. What this
round removed: 571 analyses -> 285 (a script in many folders of one project shares one analysis: the context
key names the project's pins, not the folder, unless the script names other files), cyclic garbage collection
0.85 s -> 0.02 s (each tree is freed when its findings are taken), collect 2.2 -> 1.6 s, fix checks that
re-parsed whole files (now the edited statement alone where that decides it). Python still walks each tree
three times (the settings index, the scope table, the collector); merging them is the next step.

Then, one walk per concern at most (in process, `python /work/tools/phases.py .` in the tree, `check -j 1
--no-cache`, load average about 2): the settings index is built only for a file that names a framework call
(Trainer, TrainingArguments, Accelerator, ...: 25 of icefall's 284 Python loads; settings 0.62 -> 0.11 s), and its
node list is what the link passes read (TrainingArguments and DeepSpeedStrategy links, loaded configs, configs a
script reads by path) instead of each walking the tree again; inline directives are looked for with str.find on the
lowered text before any case-insensitive regex (suppressions 0.44 -> 0.09 s); the collector resolves a callee or
attribute only when its own name can be one it compares with (most are `self.encoder(x)`, `x.view(...)`), looks up
BCELoss modules only in files that name BCELoss, keys passed arguments only in files with a scaler, and reuses the
scope walk's version-test answers; flow dumps each tracked test once. icefall now: ast.parse 1.6 s, script model
2.5 s (collector 1.3, scopes 0.6, flow 0.4), settings 0.1 s, suppressions 0.09 s, other rules 0.55 s. The scope
table and the collector stay two walks: the collector resolves names through bindings made anywhere in the file (a
scaler assigned in a method further down), so it needs the whole table first. JSON output byte-identical before and
after on all 71 repositories of /work/eco and /work/eco2.

  CPU (user + sys) of `python -m precisionlint check --no-cache -j 1 --output-format json .`, 3 runs each,
  load average 1.2 to 1.8, before (main with these changes reverted) -> after, against the baseline's CPU:
  k2-fsa/icefall         7.29 7.48 7.59 -> 5.08 5.47 5.53 s   baseline 7.35-7.78 s   0.99x -> 0.72x
  pytorch-image-models   0.89 0.89 0.91 -> 0.75 0.77 0.78 s   baseline 0.98-1.02 s   0.88x -> 0.76x
  pytorch-lightning      1.37 1.39 1.41 -> 1.21 1.21 1.22 s   baseline 0.92-0.94 s   1.51x -> 1.32x
  speechbrain            1.24 1.25 1.30 -> 1.09 1.09 1.10 s   baseline 1.23-1.25 s   1.01x -> 0.88x
  The benchmark right after (`--runs 3 --startup-runs 10`, load average 1.8 to 2.9: one of the two cores
  mostly busy, so the two-process cold run gets little of its second core): icefall cold 0.59x (4.33 s vs
  7.38 s; runs 3.57, 4.33, 5.41), timm 0.69x, pytorch-lightning 1.29x, speechbrain 0.96x; warm 0.02x, 0.07x,
  0.09x, 0.08x; one file 1.52x-1.77x; peak 48 MB. On two idle cores icefall's cold run would be about its -j 1
  CPU over 1.8 (the pool's share), 0.40x; the small trees stay above 0.5x (start-up, the pool, YAML).

The end of that round, on a quiet machine (no other work; load average 0.8 at the start), main at da60a74,
`python benchmarks/run.py --tree /work/eco/<repo> --runs 3 --startup-runs 10`, one tree after the other:

  tree                   baseline   cold check        warm           one file   peak
  k2-fsa/icefall          7.17 s    2.92 s  0.41x     157 ms 0.02x    1.60x     50 MB    all targets met
  pytorch-image-models    0.95 s    0.40 s  0.42x      63 ms 0.07x    1.73x     37 MB    all targets met
  speechbrain             1.17 s    0.63 s  0.53x      97 ms 0.08x    1.69x     31 MB    cold missed
  pytorch-lightning       0.89 s    0.64 s  0.72x      77 ms 0.09x    1.71x     30 MB    cold missed
  (cold runs: icefall 2.85, 2.92, 2.93 s; timm 0.40, 0.41, 0.40; speechbrain 0.62, 0.63, 0.63; lightning
  0.64, 0.64, 0.64. `python -c pass` 41-49 ms.)
  Then the fork pool without the parent's warm-up (the parent had imported and exercised every parser and rule,
  76 ms of a lightning run, before the first fork, while no worker ran): `/usr/bin/time precisionlint check
  --no-cache .`, 3 runs each, after -> before: pytorch-lightning 0.61-0.63 -> 0.68 s, speechbrain 0.61-0.67 ->
  0.66-0.67 s, pytorch-image-models 0.43-0.44 -> 0.47-0.48 s, icefall 2.67-2.76 -> 2.73-2.76 s, the same CPU and
  the same JSON. This benchmark then: speechbrain 0.52x (614 ms vs 1.18 s), pytorch-lightning 0.70x (618 ms).

The next round: fewer files analysed and fewer walks, each checked byte for byte (`check --no-cache --output-format
json` and its exit code identical on all 113 repositories of the ecosystem corpora), on a quiet machine (the
only work running; load average 1.0 to 1.4), `python benchmarks/run.py --tree /work/eco/<repo> --runs 3
--startup-runs 10`, one tree after the other:

  tree                   baseline   cold check        warm           one file   peak
  k2-fsa/icefall          7.81 s    2.79 s  0.36x     152 ms 0.02x    1.63x     55 MB    all targets met
  pytorch-image-models    0.99 s    0.40 s  0.40x      66 ms 0.07x    1.72x     37 MB    all targets met
  speechbrain             1.24 s    0.55 s  0.45x     105 ms 0.08x    1.70x     31 MB    all targets met
  pytorch-lightning       0.92 s    0.59 s  0.64x      84 ms 0.09x    1.67x     28 MB    cold missed
  (cold runs: icefall 2.77, 2.83, 2.79 s; timm 0.39, 0.40, 0.40; speechbrain 0.55, 0.57, 0.55; lightning
  0.57, 0.59, 0.59. `python -c pass` 44-47 ms.)

  What changed, with the share of a cold run each took (CPU, -j 1, in process):
  - the training-step model for a file whose only script word is a half-precision cast, only with a torch.optim
    optimizer or an fp16 Trainer over a float16 from_pretrained model: models built on pytorch-lightning 98 -> 67,
    diffusers 898 -> 589;
  - the framework-settings walk only for a file that passes a precision keyword (`precision=`), and then only
    over the statements and the expressions on those lines (python_index.PythonIndex.on_lines); the keywords
    found with str.find: lightning's settings pass 0.16 -> 0.10 s; whole walks for TrainingArguments(deepspeed=)
    only in a file that names an argument class (37 fewer on lightning);
  - a notebook's cells parsed once as a whole when every top-level statement lies in one cell (was: each cell,
    then the whole);
  - YAML scalar ends, key ends and removal ranges found on demand (SpeechBrain's 114 files 0.21 -> 0.17 s), and
    an `&` inside a block scalar no longer sends a file to the round-trip path (21 files of the corpus);
  - a file whose noqa comments name only other linters' codes is not tokenized (lightning 22 ms, speechbrain 31);
  - the parent's per-file keys for a second path to the same file built only when an inode is met twice;
  - the workers' imports 70 -> 40 ms each (no dataclasses, no ruamel unless a file needs the round-trip path).
  The round's start (d5f7e0f) against its end (2038e80), `python -m precisionlint check --no-cache .` from one
  interpreter, alternated, quiet machine, min of 5 (icefall 3), wall and CPU (user+sys) with 2 workers, CPU with
  -j 1: speechbrain 0.61 -> 0.49 s wall, 1.07 -> 0.85 s CPU, 0.92 -> 0.73 s at -j 1; pytorch-lightning 0.62 ->
  0.54 s, 1.13 -> 0.94 s, 1.00 -> 0.85 s; pytorch-image-models 0.41 -> 0.38 s, 0.69 -> 0.63 s, 0.58 -> 0.54 s;
  icefall 2.83 -> 2.68 s, 5.37 -> 5.06 s. pytorch-lightning stays above 0.5x: 171 of its 697 files pass the
  prefilter and are parsed (0.29 s of CPU for ast.parse alone), 67 need the model (0.21 s) and 93 the settings walk.

This round: the workers and the files no rule reads. `python benchmarks/run.py --tree /work/eco/<repo> --runs 3
--startup-runs 10`, every other Python process paused (SIGSTOP) for the measurement, on a machine that was then
about 10% slower than in the round above (`python -c pass` 50-52 ms, was 44-47):

  tree                   baseline   cold check        warm           one file   peak
  k2-fsa/icefall          7.93 s    2.89 s  0.36x     170 ms 0.02x    1.70x     52 MB    all targets met
  pytorch-image-models    1.06 s    0.40 s  0.38x      80 ms 0.08x    1.74x     35 MB    all targets met
  speechbrain             1.30 s    0.52 s  0.40x     116 ms 0.09x    1.70x     28 MB    all targets met
  pytorch-lightning       0.99 s    0.57 s  0.57x      95 ms 0.10x    1.75x     25 MB    cold missed
  (on the same machine in a faster hour: pytorch-lightning 0.49-0.51 s against a 0.89-0.90 s baseline, 0.55x;
  speechbrain 0.44 s against 1.19 s, 0.37x.)

  The round's start (main) against its end, `python -m precisionlint check --no-cache .`, alternated, min and
  median of 7, wall and CPU (user+sys): pytorch-lightning 0.66 -> 0.57 s wall (median), 1.15 -> 1.03 s CPU;
  speechbrain 0.59 -> 0.50 s, 1.00 -> 0.87 s; pytorch-image-models 0.43 -> 0.38 s, 0.71 -> 0.66 s. What changed:
  - precisionlint.run.fork_pool replaces ProcessPoolExecutor. Its import was 18 ms of the serial start; its threads
    competed with the reading loop for the interpreter lock; each file's bytes were pickled through one pipe. Now
    the tasks are a few hundred bytes on a pipe of each worker, the bytes are in a memfd the workers pread, the
    first worker imports the rules, the YAML loader and the project's pins while the files are read and forks
    the others warm, and the files left when the reading ends go out largest first in shrinking chunks (the
    workers end within a few ms of each other; before, one often waited 30-50 ms for the other).
  - A Python file that no pass reads is not parsed (engine.gate.python_tree_is_read): 31 of lightning's 169.
  - cross-file-precision-conflict walks the calls on the precision-keyword lines only (was a whole-tree walk of
    30 lightning files), and framework-version-mismatch skips its walk where every declared torch has the APIs.
  - The settings walk prunes statements too (only those around a precision-keyword line or an import): lightning's
    settings walks 66 -> 35 ms of CPU; then pytorch-lightning 0.54x (536 ms against 991 ms; warm 0.09x, one
    file 1.69x), the same JSON on all 177 corpus repositories, and with --gpu A100 --gpu V100 on 82. In a faster
    hour (`python -c pass` 43 ms): 0.52x (483 ms against 929 ms; runs 0.475-0.489 s), warm 0.09x.
  - A Python file whose framework calls pass only accelerator= or strategy= is not parsed (16 more lightning
    files): pytorch-lightning 0.53x (512 ms against 965 ms; runs 0.507-0.527 s), the same JSON on all 177
    repositories and the 82 with --gpu; alternated with the commit before it, 0.52 -> 0.49 s median wall.
  The session's start (ac1248c) against 60f651e, alternated, 7 runs each, median wall and CPU:
  pytorch-lightning 0.56 -> 0.49 s, 0.99 -> 0.88 s (-j 1: 0.87 -> 0.80 s CPU); speechbrain 0.51 -> 0.44 s,
  0.90 -> 0.78 s (-j 1: 0.78 -> 0.70 s); pytorch-image-models 0.37 -> 0.34 s, 0.62 -> 0.59 s.
  Tried and not kept: a parent that checks files itself beside one worker (same CPU, worse balance); forking
  the pool before the files are listed (workers started 30 ms earlier but met the parent's reading, and each
  then imported the YAML loader itself: no faster); an iterative generic_visit (slower than the two calls per
  node it saves). pytorch-lightning stays above 0.5x: 140 files are parsed (0.25 s of CPU), 66 need the
  training-step model (0.20 s) and 100 the settings walk (0.09 s); each of those files holds an autocast, a
  GradScaler, a torch.optim optimizer beside a float16 cast, or a Trainer call that passes a precision.


This round: fewer files parsed and modelled, on the evidence of their text, and fewer walks. The same command,
every other Python process paused, `python -c pass` 47 ms:

  tree                   baseline   cold check        warm           one file   peak
  k2-fsa/icefall          7.91 s    2.84 s  0.36x     146 ms 0.02x    1.68x     50 MB    all targets met
  pytorch-image-models    1.07 s    0.27 s  0.25x      67 ms 0.06x    1.72x     24 MB    all targets met
  speechbrain             1.24 s    0.46 s  0.37x     101 ms 0.08x    1.64x     28 MB    all targets met
  pytorch-lightning       0.95 s    0.42 s  0.45x      80 ms 0.08x    1.63x     25 MB    all targets met
  (cold runs: icefall 2.77, 2.86, 2.84 s; timm 0.27, 0.27, 0.28; speechbrain 0.45, 0.46, 0.46; lightning 0.43,
  0.42, 0.42.)

  The round's start (0268c29) against its end, `python -m precisionlint check --no-cache .`, alternated, median
  wall and CPU: pytorch-lightning 0.50 -> 0.43 s, 0.89 -> 0.76 s (7 runs); pytorch-image-models 0.39 -> 0.28 s,
  0.68 -> 0.45 s; speechbrain 0.52 -> 0.47 s, 0.87 -> 0.81 s (5 runs); icefall 2.83 -> 2.87 s, 5.37 -> 5.45 s
  (3 runs; a rule change of the round had cost it 0.5 s of CPU, won back below). What changed:
  - A file that names DeepSpeed is parsed only where cross-file-precision-conflict could follow a link to its
    config (a TrainingArguments class and a .json/.yaml path, or DeepSpeedStrategy with a Trainer precision):
    21 lightning files. A half-precision cast gets the model only beside the name of a torch.optim optimizer
    class, not beside "optim" (every hook of a framework says "optimizer"). Text that is not ASCII is tested
    through its NFKC form (what the parser makes of identifiers) instead of being read whole: 4 lightning
    files hold only a typographic quote or an ellipsis. A name that only says "scaler" (Trainer.scaler, a
    comment) or "unscale_gradients" gets no model: the model knows a GradScaler by its construction,
    `.scale(` or `.unscale_(`. lightning: 124 -> 88 files parsed, 66 -> 45 models (-j 1 in process: 0.23 ->
    0.19 s of parsing, 0.20 -> 0.15 s of model).
  - A setting passed as a name counts the file's assignments only when a module-level statement assigns that
    name (`precision=precision` from a test's parameter: 29 lightning files); assignments are found by walking
    statements, not every node (cross-file-precision-conflict's strategy lookup: 15 ms on two files).
  - deprecated-amp-api walks a whole tree only where an annotation reads a deprecated name (two whole-tree walks
    per file with a deprecated import: icefall 2.89 -> 2.65 s wall).
  - The first worker imports, before forking, what each worker imported for itself (the model's walk, the link
    readers, the YAML readers); a warm run no longer imports the pool, the pin readers or the link readers:
    lightning warm 89 -> 82 ms (median of 20, alternated).
  Every change: JSON output byte for byte against the commit before, on the 177 corpus repositories, the 46 of
  the newest corpus and the 82 run with --gpu A100 --gpu V100; the only differences were intended (a Python
  file no rule reads is not parsed, so lerobot loses a newer-python-syntax note on a motor-bus file that says
  "half-turn"). Measured and not kept: walking the scopes without the expressions of statements that hold no
  lambda, `:=`, exec, globals or vars (the same tables on every lightning file, 9 ms of 180 ms of model time:
  not worth the code); an Aho-Corasick library for the prefilter (20 ms against 26 ms over lightning: not worth
  a dependency); not reading pins before the fork (no change).

The real corpus as one run, with CPU (`python benchmarks/run.py --tree /work/eco/k2-fsa__icefall --tree
/work/eco/speechbrain__speechbrain --tree /work/eco/huggingface__pytorch-image-models --tree
/work/eco/Lightning-AI__pytorch-lightning --baseline <279215d checkout> --runs 3`, 4,514 Python files, load
average 2.5 to 3.4 on the two shared cores the whole time): cold 0.48x the baseline's wall time and 0.89x its CPU
(10.9 s against 12.3 s), the 279215d checkout 0.49x and 0.91x in the same rounds; warm 0.03x. Under that load
the CPU of one run moves by 15% from run to run, more than the round's changes. What the round changed, as
work: `check --no-cache -j 1` over the same four trees under cProfile made 41.6 million function calls at
279215d and 29.6 million after (-29%): the scope walk leaves out the expressions that cannot bind (8.6 -> 6.1 s
profiled), deprecated-amp-api and framework-version-mismatch walk only the statements on the lines that name
what they look for (6.7 -> 3.5 s and 6.0 -> 2.5 s profiled), the flow analysis walks each statement part once
(nodes walked on a 3,000-step script 540,276 -> 150,052, the tree has 159,043), and a call that names none of
the file's defs is not resolved. Without the profiler, `-j 1` over the four trees, alternated in three rounds
(load rising through each round): 279215d 10.6 / 12.3 / 13.8 s CPU, the commit before the round 10.5 / 11.0 /
12.4 s, after it 9.5 / 10.6 / 11.9 s. Where the rest goes (icefall, in process): ast.parse 20-23%, the model's
collector 20%, the scope walk 6%, the flow analysis 7%, the other rules 10%, reading, prefiltering, discovery,
configuration and output the rest.

Single file, in process (`python benchmarks/server_latency.py --changes 20`, the 2,093-line script): analyse()
76 ms median, 72.5 ms CPU (was 141 ms CPU; ast.parse of the same text 47 ms); server change -> diagnostics 82 ms.

JSON: every JSON file under /work/eco that passes the prefilter loads in 0.33 s (was 4.7 s: OLMo's three
Hugging Face tokenizer files, 7 MB, are no longer read as configs; string and number tokens are read without
json.loads: parse_positions 0.83 -> 0.67 s on a 2 MB file). YAML: SpeechBrain's HyperPyYAML files (local tags)
take the libyaml path: 3.5 s -> 0.6 s of CPU for its 114 YAML files that pass the prefilter.

Times are medians of several runs. The corpus is deterministic and lives in benchmarks/corpus/ (gitignored;
it carries its own pyproject.toml, so the enclosing project's settings do not apply). Bytecode is compiled
first and the children run with PYTHONDONTWRITEBYTECODE unset: an installed package has its .pyc files, and
timing a recompilation on every start would measure the wrong thing.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from corpus_gen import build  # noqa: E402

BASELINE = r"""
import ast, os, sys, warnings
warnings.simplefilter("ignore")
count = 0
for tree in sys.argv[1:]:
    for folder, dirs, files in os.walk(tree):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                try:  # a real tree has broken links and files of another Python version
                    with open(os.path.join(folder, name), "rb") as handle:
                        ast.parse(handle.read())
                except (OSError, SyntaxError, ValueError):
                    pass
                count += 1
print(count)
"""

TARGET_TREE = 0.5
TARGET_WARM = 0.1
TARGET_ONE = 2.0
TARGET_MEMORY_MB = 200.0


_PYCACHE: list[str] = []


def _env(cache_dir: Path | None = None, root: Path = ROOT) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PRECISIONLINT_CACHE_DIR", None)
    if cache_dir is not None:
        env["PRECISIONLINT_CACHE_DIR"] = str(cache_dir)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if _PYCACHE:  # both checkouts' bytecode in one scratch folder: nothing is written into a checkout
        env["PYTHONPYCACHEPREFIX"] = _PYCACHE[0]
    env["PYTHONPATH"] = str(root) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["NO_COLOR"] = "1"
    return env


_LAST_CPU: list[float] = []  # CPU seconds of each _run, in order (user + sys of the child and its waited-for children)


def _run(
    cmd: list[str], cwd: Path, ok: tuple[int, ...] = (0, 1), cache_dir: Path | None = None, root: Path = ROOT
) -> tuple[float, float, int]:
    """Wall seconds, peak RSS in MB (the largest of the child and its descendants), exit code; the CPU seconds
    go to _LAST_CPU."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=_env(cache_dir, root), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    _LAST_CPU.append(usage.ru_utime + usage.ru_stime)
    stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    if proc.returncode not in ok:
        raise SystemExit(f"{' '.join(cmd)} failed with exit code {proc.returncode}:\n{stderr}")
    return elapsed, usage.ru_maxrss / 1024.0, proc.returncode


def _median(
    cmd: list[str], cwd: Path, runs: int, warmup: int = 1, ok: tuple[int, ...] = (0, 1),
    cache_dir: Path | None = None,
) -> tuple[float, float, list[float]]:
    for _ in range(warmup):
        _run(cmd, cwd, ok, cache_dir)
    times, peaks = [], []
    for _ in range(runs):
        elapsed, peak, _ = _run(cmd, cwd, ok, cache_dir)
        times.append(elapsed)
        peaks.append(peak)
    return statistics.median(times), max(peaks), times


def _print_imports(cmd: list[str], cwd: Path, top: int = 25) -> None:
    """The costliest imports of one run after the interpreter's own start-up (site), by cumulative time, at
    most two levels deep (python -X importtime)."""
    result = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, check=False)
    lines = [line for line in result.stderr.splitlines() if line.startswith("import time:") and "|" in line]
    after_site = next((i + 1 for i, line in enumerate(lines) if line.rsplit("|", 1)[1] == " site"), 0)
    rows = []
    for line in lines[after_site:]:
        self_us, cumulative_us, name_part = line.split(":", 1)[1].split("|")
        name = name_part.strip()
        depth = (len(name_part) - len(name_part.lstrip()) - 1) // 2
        if depth <= 1:
            rows.append((int(cumulative_us), int(self_us), depth, name))
    total = sum(cumulative for cumulative, _, depth, _ in rows if depth == 0)
    print(f"\nimports of `check one.toml` after the interpreter's start-up: {total / 1000:.1f} ms "
          "(python -X importtime, which inflates them; modules loaded through importlib, like the rule modules "
          "themselves, are not listed)")
    for cumulative, own, depth, name in sorted(rows, reverse=True)[:top]:
        print(f"  {cumulative / 1000:7.1f} ms  (self {own / 1000:5.1f})  {'  ' * depth}{name}")


def _entry_point() -> list[str] | None:
    """The installed console script (what users and pre-commit run), if this interpreter has one."""
    candidate = Path(sys.executable).parent / "precisionlint"
    if candidate.exists():
        return [str(candidate)]
    found = shutil.which("precisionlint")
    return [found] if found else None


def _tree_description(tree: Path) -> str:
    """Counts of what a check of `tree` reads (the files git or the walk would list are close to these)."""
    counts = {"python": 0, "links": 0, "configs": 0, "bytes": 0}
    for folder, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d not in (".git", ".precisionlint_cache", "__pycache__")]
        for name in files:
            path = os.path.join(folder, name)
            suffix = os.path.splitext(name)[1].lower()
            if suffix in (".py", ".pyi"):
                counts["python"] += 1
            elif suffix in (".yaml", ".yml", ".toml", ".json"):
                counts["configs"] += 1
            else:
                continue
            if os.path.islink(path):
                counts["links"] += 1
            try:
                counts["bytes"] += os.path.getsize(path)
            except OSError:
                pass
    return (f"{counts['python']} Python files and {counts['configs']} configs, {counts['links']} of them symbolic "
            f"links; {counts['bytes'] / 1e6:.1f} MB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", type=Path, action="append", default=None,
                        help="measure on this directory (read only) instead of the generated corpus; repeat it to "
                             "check several trees in one run")
    parser.add_argument("--baseline", type=Path, default=None,
                        help="another checkout of precisionlint: its cold check runs in the same rounds")
    parser.add_argument("--corpus", type=Path, default=HERE / "corpus", help="where to build the corpus")
    parser.add_argument("--python-files", type=int, default=3000)
    parser.add_argument("--config-files", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=None,
                        help="runs of the whole-tree measurements (default: 5 on the corpus, 3 with --tree)")
    parser.add_argument("--startup-runs", type=int, default=15, help="runs of the single-file measurements")
    parser.add_argument("--jobs", type=int, default=None, help="pass --jobs to check (default: all cores)")
    parser.add_argument("--strict", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--imports", action="store_true",
                        help="also list what `check one.toml` spends its start-up on (python -X importtime)")
    args = parser.parse_args(argv)
    runs = args.runs if args.runs is not None else (3 if args.tree else 5)

    python = sys.executable
    scratch = Path(tempfile.mkdtemp(prefix="precisionlint-bench-"))
    _PYCACHE[:] = [str(scratch / "pycache")]
    for root in (ROOT, args.baseline):
        if root is not None:
            subprocess.run([python, "-m", "compileall", "-q", str(root / "precisionlint")], check=True,
                           env=_env(root=root))
    try:
        one_dir = scratch / "one"
        one_dir.mkdir()
        (one_dir / "one.toml").write_text('[trainer]\nprecision = "bf16-mixed"\n')
        if args.tree is not None:
            trees = [t.resolve() for t in args.tree]
            for given, tree in zip(args.tree, trees, strict=True):
                if not tree.is_dir():
                    parser.error(f"--tree: {given} is not a directory")
            what = "\n".join(f"tree: {tree} ({_tree_description(tree)})" for tree in trees)
        else:
            started = time.perf_counter()
            description = build(args.corpus.resolve(), args.python_files, args.config_files, args.seed)
            built = time.perf_counter() - started
            trees = [args.corpus.resolve()]
            counts = description["counts"]
            what = (f"corpus: {trees[0]} ({counts['python']} Python files, of which {counts['training']} training "
                    f"scripts and {counts['incidental']} with an incidental keyword; {counts['yaml']} YAML, "
                    f"{counts['toml']} TOML, {counts['json']} JSON configs, {counts['with_precision']} with "
                    f"precision settings; {description['bytes'] / 1e6:.1f} MB; "
                    f"{'built' if built > 0.5 else 'reused'} in {built:.1f} s)")
        return _measure(args, runs, trees, one_dir, scratch, what)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _rounds(
    commands: list[tuple[list[str], Path]], cwd: Path, runs: int
) -> list[tuple[list[float], list[float], float]]:
    """Each command (with the checkout it runs) once per round, alternated, after one warm-up round: the wall
    and CPU seconds of every run and the largest peak RSS in MB, per command."""
    found: list[tuple[list[float], list[float], float]] = [([], [], 0.0) for _ in commands]
    for round_number in range(runs + 1):
        for index, (cmd, root) in enumerate(commands):
            ok = (0,) if cmd[1] == "-c" else (0, 1)
            elapsed, peak, _ = _run(cmd, cwd, ok, root=root)
            if round_number:
                walls, cpus, most = found[index]
                walls.append(elapsed)
                cpus.append(_LAST_CPU[-1])
                found[index] = (walls, cpus, max(most, peak))
    return found


def _measure(args: argparse.Namespace, runs: int, trees: list[Path], one_dir: Path, scratch: Path,
             what: str) -> int:
    python = sys.executable
    cache_dir = scratch / "cache"
    module_cmd = [python, "-m", "precisionlint"]
    script_cmd = _entry_point() if args.baseline is None else None  # with a baseline, both through python -m
    user_cmd = script_cmd or module_cmd
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    # One tree is checked as `.` in it; several from a neutral folder, named by their absolute paths.
    cwd, named = (trees[0], ["."]) if len(trees) == 1 else (scratch, [str(t) for t in trees])
    check_tree = [*user_cmd, "check", "--no-progress", "--exit-zero", *jobs, *named]
    cold_tree = [*user_cmd, "check", "--no-progress", "--exit-zero", *jobs, "--no-cache", *named]
    check_one = [*user_cmd, "check", "--no-progress", "--no-cache", "one.toml"]

    print(f"precisionlint benchmark — Python {platform.python_version()} on {platform.machine()}, "
          f"{os.cpu_count()} cores ({len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else '?'} "
          f"usable)")
    print(what)
    shown = ' '.join(Path(c).name if i == 0 else c for i, c in enumerate(cold_tree[:len(cold_tree) - len(named)]))
    print(f"check command: {shown} {' '.join(named)}")
    print()

    commands: list[tuple[list[str], Path]] = [([python, "-c", BASELINE, *named], ROOT), (cold_tree, ROOT)]
    if args.baseline is not None:  # the other checkout through `python -m`, on its own PYTHONPATH
        commands.append(([*module_cmd, *cold_tree[len(user_cmd):]], args.baseline.resolve()))
    measured = _rounds(commands, cwd, runs)
    (base_walls, base_cpus, baseline_mem), (tree_runs, tree_cpus, tree_mem) = measured[:2]
    baseline_t, baseline_cpu = statistics.median(base_walls), statistics.median(base_cpus)
    tree_t, tree_cpu = statistics.median(tree_runs), statistics.median(tree_cpus)
    first_t, _, _ = _run(check_tree, cwd, cache_dir=cache_dir)  # writes the cache
    warm_t, warm_mem, warm_runs = _median(check_tree, cwd, runs, warmup=0, cache_dir=cache_dir)
    warm_cpu = statistics.median(_LAST_CPU[-runs:])
    pass_t, _, _ = _median([python, "-c", "pass"], one_dir, args.startup_runs, warmup=2, ok=(0,))
    one_t, one_mem, _ = _median(check_one, one_dir, args.startup_runs, 2)
    if script_cmd:
        module_t, _, _ = _median([*module_cmd, *check_one[len(user_cmd):]], one_dir, args.startup_runs, 2)
    else:
        module_t = one_t

    tree_ratio = tree_t / baseline_t
    warm_ratio = warm_t / baseline_t
    one_ratio = one_t / pass_t
    rows = [
        ("read + ast.parse every .py (baseline)", f"{baseline_t * 1000:8.0f} ms", f"{baseline_cpu * 1000:8.0f} ms",
         f"{baseline_mem:6.0f} MB", "", "", ""),
        ("check --no-cache (whole tree, cold)", f"{tree_t * 1000:8.0f} ms", f"{tree_cpu * 1000:8.0f} ms",
         f"{tree_mem:6.0f} MB", f"{tree_ratio:5.2f}x / {tree_cpu / baseline_cpu:4.2f}x",
         f"<= {TARGET_TREE}x", "PASS" if tree_ratio <= TARGET_TREE else "FAIL"),
    ]
    if args.baseline is not None:
        other_walls, other_cpus, other_mem = measured[2]
        other_t, other_cpu = statistics.median(other_walls), statistics.median(other_cpus)
        rows.append((f"  the same with {args.baseline} (python -m)", f"{other_t * 1000:8.0f} ms",
                     f"{other_cpu * 1000:8.0f} ms", f"{other_mem:6.0f} MB",
                     f"{other_t / baseline_t:5.2f}x / {other_cpu / baseline_cpu:4.2f}x", "(info)", ""))
    rows += [
        ("check (first run, writes the cache)", f"{first_t * 1000:8.0f} ms", "", "",
         f"{first_t / baseline_t:5.2f}x", "(info)", ""),
        ("check again (warm cache, no change)", f"{warm_t * 1000:8.0f} ms", f"{warm_cpu * 1000:8.0f} ms",
         f"{warm_mem:6.0f} MB", f"{warm_ratio:5.2f}x / {warm_cpu / baseline_cpu:4.2f}x", f"<= {TARGET_WARM}x",
         "PASS" if warm_ratio <= TARGET_WARM else "FAIL"),
        ("python -c pass", f"{pass_t * 1000:8.1f} ms", "", "", "", "", ""),
        (f"check one.toml ({'console script' if script_cmd else 'python -m'})", f"{one_t * 1000:8.1f} ms", "",
         f"{one_mem:6.0f} MB", f"{one_ratio:5.2f}x python", f"<= {TARGET_ONE}x",
         "PASS" if one_ratio <= TARGET_ONE else "FAIL"),
    ]
    if script_cmd:
        rows.append(("check one.toml (python -m precisionlint)", f"{module_t * 1000:8.1f} ms", "", "",
                     f"{module_t / pass_t:5.2f}x python", "(info)", ""))
    rows.append(("peak memory, whole tree (largest process)", "", "", f"{tree_mem:6.0f} MB", "",
                 f"< {TARGET_MEMORY_MB:.0f} MB", "PASS" if tree_mem < TARGET_MEMORY_MB else "FAIL"))
    results = {
        "whole tree": tree_ratio <= TARGET_TREE,
        "warm cache": warm_ratio <= TARGET_WARM,
        "one file": one_ratio <= TARGET_ONE,
        "memory": tree_mem < TARGET_MEMORY_MB,
    }

    header = ("measurement", "wall", "CPU", "peak RSS", "ratio wall / CPU", "target", "result")
    widths = [max(len(str(r[i])) for r in [*rows, header]) for i in range(7)]
    print("  ".join(str(h).ljust(w) for h, w in zip(header, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    print()
    print(f"whole-tree runs (wall s): cold {', '.join(f'{t:.3f}' for t in tree_runs)} "
          f"(CPU {', '.join(f'{t:.3f}' for t in tree_cpus)}); "
          f"warm {', '.join(f'{t:.3f}' for t in warm_runs)}")
    if args.imports:
        _print_imports([python, "-X", "importtime", "-m", "precisionlint", "check", "--no-progress", "one.toml"],
                       one_dir)
    failed = [name for name, ok in results.items() if not ok]
    print("all targets met" if not failed else f"targets missed: {', '.join(failed)}")
    return 1 if failed and args.strict else 0


if __name__ == "__main__":
    sys.exit(main())
