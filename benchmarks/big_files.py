"""Big files: is one large training script or config checked, under the default limits, at the cost of its parser?

    python benchmarks/big_files.py                      # generate the files, measure, print a table
    python benchmarks/big_files.py --strict             # ... and exit 1 if a target is missed
    python benchmarks/big_files.py --baseline CHECKOUT  # the same files checked by another checkout, same rounds
    python benchmarks/big_files.py --only json --runs 3 # one format, more rounds

Three real-shaped files are generated (deterministic, in a temporary folder):

  script.py    5 MB   a training script made of many real-looking units: a dataset class, a model block, a
                      training step under autocast with a GradScaler, evaluation, checkpointing, argparse options
  trainer.yaml 5 MB   a trainer configuration with many sections (model, data, optimizer, scheduler, trainer,
                      callbacks, loggers, per-experiment overrides)
  ds_config.json 20 MB  a DeepSpeed configuration (fp16, ZeRO, optimizer, scheduler) that carries a large
                      tokenizer-shaped payload (a vocabulary mapping and a merges list), as exported run configs do

Each is checked as a subprocess, `precisionlint check --no-cache FILE` with no configuration file (the default
limits) in a project folder of its own, beside a subprocess that only parses it with the parser the check path
uses, or for YAML the tree it stands for (ast.parse; PyYAML's CSafeLoader compose, a tree of the file as
ast.parse gives one, where the check reads libyaml's events and builds its own; json.loads) with the cyclic
collector off, as the check runs (its time with the collector on is printed too), in the same rounds.
Measured per process: CPU seconds (user + system, the process and its children) and peak RSS; memory growth is
the peak RSS above that of the same command on a tiny file of the same format (the interpreter and the
imports). Targets (issue "Fast at any size"):

  cpu      check CPU <= 2.5x the parser's CPU
  memory   check's peak RSS growth <= 20x the file's size
  estimate the engine's memory estimate (engine.check.estimated_memory) within 20% of the measured growth
  scan     JSON only: json_source.load's time beyond json.loads (the position scan) <= 3x json.loads

The check must report no limit-exceeded (PL003) finding: a refused file is a missed target, not a fast one.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TARGET_CPU = 2.5
TARGET_MEMORY_PER_BYTE = 20.0
TARGET_ESTIMATE = 0.20
TARGET_SCAN = 3.0
SIZES = {"python": 5_000_000, "yaml": 5_000_000, "json": 20_000_000}
NAMES = {"python": "script.py", "yaml": "trainer.yaml", "json": "ds_config.json"}

# ---------------------------------------------------------------------------------------------------------------
# Generators: real-shaped, deterministic.

_SCRIPT_HEADER = '''\
"""Training entry point (generated for benchmarks/big_files.py)."""
import argparse
import math
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

'''

_SCRIPT_UNIT = '''\
class ShardDataset{i}(Dataset):
    """Samples of shard {i}: token ids and labels, padded to a fixed length."""

    def __init__(self, root, split="train", max_len={max_len}):
        self.root = os.path.join(root, "shard_{i}", split)
        self.max_len = max_len
        self.items = sorted(os.listdir(self.root)) if os.path.isdir(self.root) else []

    def __len__(self):
        return len(self.items)

    def __getitem__(self, index):
        ids = torch.load(os.path.join(self.root, self.items[index]))
        ids = ids[: self.max_len]
        pad = self.max_len - ids.shape[0]
        return F.pad(ids, (0, pad), value=0), (ids != 0).long()


class Block{i}(nn.Module):
    def __init__(self, dim={dim}, heads={heads}, dropout={dropout}):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, dropout=dropout, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim), nn.Dropout(dropout))

    def forward(self, x, mask=None):
        h = self.norm1(x)
        h, _ = self.attn(h, h, h, key_padding_mask=mask, need_weights=False)
        x = x + h
        return x + self.mlp(self.norm2(x))


def build_optimizer_{i}(model, lr={lr}, weight_decay={wd}):
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        (no_decay if param.ndim < 2 or name.endswith(".bias") else decay).append(param)
    groups = [{{"params": decay, "weight_decay": weight_decay}}, {{"params": no_decay, "weight_decay": 0.0}}]
    return torch.optim.AdamW(groups, lr=lr, betas=(0.9, 0.95), eps=1e-8)


def cosine_lr_{i}(step, warmup={warmup}, total={total}, base={lr}):
    if step < warmup:
        return base * (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return base * 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def train_one_epoch_{i}(model, loader, optimizer, scaler, device, epoch, log_every={log_every}):
    model.train()
    total, seen, start = 0.0, 0, time.time()
    for step, (ids, mask) in enumerate(loader):
        ids, mask = ids.to(device, non_blocking=True), mask.to(device, non_blocking=True)
        for group in optimizer.param_groups:
            group["lr"] = cosine_lr_{i}(epoch * len(loader) + step)
        with torch.autocast("cuda", dtype=torch.float16):
            logits = model(ids, mask == 0)
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), ids.view(-1), ignore_index=0)
        optimizer.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), {clip})
        scaler.step(optimizer)
        scaler.update()
        total += loss.item() * ids.size(0)
        seen += ids.size(0)
        if step % log_every == 0:
            print(f"epoch {{epoch}} step {{step}} loss {{total / max(1, seen):.4f}} {{time.time() - start:.1f}}s")
    return total / max(1, seen)


@torch.no_grad()
def evaluate_{i}(model, loader, device):
    model.eval()
    total, count = 0.0, 0
    for ids, mask in loader:
        ids, mask = ids.to(device), mask.to(device)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(ids, mask == 0)
        total += F.cross_entropy(logits.float().view(-1, logits.size(-1)), ids.view(-1), reduction="sum").item()
        count += int(mask.sum())
    return math.exp(total / max(1, count))


def save_checkpoint_{i}(model, optimizer, scaler, epoch, path="checkpoints/run_{i}"):
    os.makedirs(path, exist_ok=True)
    state = {{"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scaler": scaler.state_dict(),
             "epoch": epoch}}
    torch.save(state, os.path.join(path, f"epoch_{{epoch:03d}}.pt"))


'''

_SCRIPT_MAIN = '''\
def main():
    parser = argparse.ArgumentParser(description="train")
    parser.add_argument("--data", default="data/")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()
    device = torch.device("cuda")
    model = nn.Sequential(Block0(), Block1()).to(device)
    optimizer = build_optimizer_0(model)
    scaler = torch.amp.GradScaler("cuda")
    loader = DataLoader(ShardDataset0(args.data), batch_size=args.batch_size, shuffle=True, num_workers=4)
    for epoch in range(args.epochs):
        train_one_epoch_0(model, loader, optimizer, scaler, device, epoch)
        save_checkpoint_0(model, optimizer, scaler, epoch)


if __name__ == "__main__":
    main()
'''


def training_script(size: int, seed: int = 31) -> str:
    rng = random.Random(seed)
    parts = [_SCRIPT_HEADER]
    length, i = len(_SCRIPT_HEADER) + len(_SCRIPT_MAIN), 0
    while length < size:
        unit = _SCRIPT_UNIT.format(
            i=i, max_len=rng.choice((128, 256, 512, 1024)), dim=rng.choice((256, 384, 512, 768)),
            heads=rng.choice((4, 8, 12)), dropout=rng.choice((0.0, 0.1, 0.2)), lr=rng.choice((1e-4, 3e-4, 6e-4)),
            wd=rng.choice((0.0, 0.01, 0.1)), warmup=rng.choice((500, 1000, 2000)),
            total=rng.choice((50_000, 100_000)), log_every=rng.choice((10, 50, 100)), clip=rng.choice((0.5, 1.0)),
        )
        parts.append(unit)
        length += len(unit)
        i += 1
    parts.append(_SCRIPT_MAIN)
    return "".join(parts)


_YAML_HEAD = """\
# Trainer configuration (generated for benchmarks/big_files.py)
seed_everything: 42
trainer:
  accelerator: gpu
  devices: 8
  num_nodes: 2
  strategy: deepspeed_stage_2
  precision: 16-mixed
  max_epochs: 100
  gradient_clip_val: 1.0
  accumulate_grad_batches: 4
  log_every_n_steps: 50
  callbacks:
    - class_path: lightning.pytorch.callbacks.ModelCheckpoint
      init_args:
        monitor: val/loss
        save_top_k: 3
        mode: min
    - class_path: lightning.pytorch.callbacks.LearningRateMonitor
      init_args:
        logging_interval: step
model:
  class_path: models.TransformerLM
  init_args:
    vocab_size: 50304
    dim: 1024
    depth: 24
    heads: 16
    dropout: 0.1
optimizer:
  class_path: torch.optim.AdamW
  init_args:
    lr: 3.0e-4
    betas: [0.9, 0.95]
    eps: 1.0e-8
    weight_decay: 0.1
experiments:
"""

_YAML_SECTION = """\
  run_{i:05d}:
    description: "ablation {i}: {desc}"
    model:
      dim: {dim}
      depth: {depth}
      heads: {heads}
      dropout: {dropout}
      activation: {act}
      tie_embeddings: {tie}
    data:
      train_files:
        - /datasets/corpus/shard-{i:05d}-of-10000.parquet
        - /datasets/corpus/shard-{j:05d}-of-10000.parquet
      val_files: [/datasets/corpus/val-{i:03d}.parquet]
      batch_size: {batch}
      num_workers: 8
      max_length: {max_len}
      shuffle: true
    optimizer:
      lr: {lr}
      weight_decay: {wd}
      warmup_steps: {warmup}
    scheduler:
      name: cosine
      min_lr_ratio: 0.1
    trainer:
      max_steps: {steps}
      val_check_interval: 1000
      limit_val_batches: 50
    tags: [{act}, d{dim}, l{depth}]
"""


def trainer_yaml(size: int, seed: int = 31) -> str:
    rng = random.Random(seed)
    parts = [_YAML_HEAD]
    length, i = len(_YAML_HEAD), 0
    while length < size:
        section = _YAML_SECTION.format(
            i=i, j=(i * 7919) % 10000, desc=rng.choice(("wider mlp", "deeper", "no dropout", "longer warmup")),
            dim=rng.choice((512, 768, 1024)), depth=rng.choice((12, 24, 36)), heads=rng.choice((8, 12, 16)),
            dropout=rng.choice((0.0, 0.1)), act=rng.choice(("gelu", "swiglu", "relu")),
            tie=rng.choice(("true", "false")), batch=rng.choice((16, 32, 64)), max_len=rng.choice((1024, 2048)),
            lr=rng.choice(("1.0e-4", "3.0e-4", "6.0e-4")), wd=rng.choice((0.0, 0.1)),
            warmup=rng.choice((1000, 2000)), steps=rng.choice((100000, 200000)),
        )
        parts.append(section)
        length += len(section)
        i += 1
    return "".join(parts)


_DS_HEAD = """\
{
  "train_batch_size": 512,
  "train_micro_batch_size_per_gpu": 8,
  "gradient_accumulation_steps": 8,
  "gradient_clipping": 1.0,
  "steps_per_print": 100,
  "wall_clock_breakdown": false,
  "fp16": {
    "enabled": true,
    "loss_scale": 0,
    "loss_scale_window": 1000,
    "initial_scale_power": 16,
    "hysteresis": 2,
    "min_loss_scale": 1
  },
  "bf16": {
    "enabled": false
  },
  "zero_optimization": {
    "stage": 2,
    "allgather_partitions": true,
    "allgather_bucket_size": 500000000,
    "overlap_comm": true,
    "reduce_scatter": true,
    "reduce_bucket_size": 500000000,
    "contiguous_gradients": true
  },
  "optimizer": {
    "type": "AdamW",
    "params": {
      "lr": 0.0003,
      "betas": [0.9, 0.95],
      "eps": 1e-08,
      "weight_decay": 0.1
    }
  },
  "scheduler": {
    "type": "WarmupDecayLR",
    "params": {
      "warmup_min_lr": 0,
      "warmup_max_lr": 0.0003,
      "warmup_num_steps": 2000,
      "total_num_steps": 100000
    }
  },
  "tokenizer": {
    "type": "BPE",
    "unk_token": "<unk>",
    "vocab": {
"""

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _token(rng: random.Random, index: int) -> str:
    body = "".join(rng.choice(_LETTERS) for _ in range(rng.randint(2, 9)))
    return ("\u0120" if index % 3 == 0 else "") + body + (str(index % 97) if index % 5 == 0 else "")


def deepspeed_json(size: int, seed: int = 31) -> str:
    """A DeepSpeed config with a tokenizer payload: the vocabulary (about 60% of the bytes, one entry a line,
    as `json.dump(indent=2)` writes it) then the merges list."""
    rng = random.Random(seed)
    parts = [_DS_HEAD]
    length, index = len(_DS_HEAD), 0
    vocab_bytes = size * 6 // 10
    seen: set[str] = set()
    first = True
    while length < vocab_bytes:
        token = _token(rng, index)
        if token in seen:
            token += f"_{index}"
        seen.add(token)
        line = ("" if first else ",\n") + f'      "{token}": {index}'
        first = False
        parts.append(line)
        length += len(line.encode())
        index += 1
    middle = '\n    },\n    "merges": [\n'
    parts.append(middle)
    length += len(middle)
    first = True
    tail = "\n    ]\n  }\n}\n"
    while length < size - len(tail):
        merge = f"{_token(rng, index)} {_token(rng, index + 1)}"
        line = ("" if first else ",\n") + f'      "{merge}"'
        first = False
        parts.append(line)
        length += len(line.encode())
        index += 1
    parts.append(tail)
    return "".join(parts)


TINY = {
    "python": "import torch\nmodel = torch.nn.Linear(2, 2)\n",
    "yaml": "trainer:\n  precision: 16-mixed\n",
    "json": '{"fp16": {"enabled": true}}\n',
}
GENERATORS = {"python": training_script, "yaml": trainer_yaml, "json": deepspeed_json}

# ---------------------------------------------------------------------------------------------------------------
# The parser baselines, each a whole process like the check.

PARSERS = {
    "python": "import ast, sys\nast.parse(open(sys.argv[1], 'rb').read().decode())\n",
    "yaml": (
        "import sys, yaml\ntext = open(sys.argv[1], encoding='utf-8').read()\n"
        "list(yaml.compose_all(text, Loader=yaml.CSafeLoader))\n"
    ),
    "json": "import json, sys\njson.loads(open(sys.argv[1], encoding='utf-8').read())\n",
}

# In-process probes (run in a subprocess with the checkout on the path): the engine's estimate, and for JSON
# json.loads against json_source.load.
_ESTIMATE_PROBE = """\
import sys
from precisionlint.engine.check import estimated_memory
data = open(sys.argv[1], 'rb').read()
print(estimated_memory(data, sys.argv[2]))
"""
_SCAN_PROBE = """\
import gc, json, sys, time
from precisionlint.sources import Limits, json_source
text = open(sys.argv[1], encoding='utf-8').read()
limits = Limits(max_file_size=1 << 40, max_nodes=1 << 40, max_parse_time=0, max_memory=0)
gc.disable()
loads, full = [], []
for _ in range(int(sys.argv[2])):
    start = time.process_time(); json.loads(text); loads.append(time.process_time() - start)
    start = time.process_time(); json_source.load('x.json', text, limits); full.append(time.process_time() - start)
    gc.collect()
print(min(loads), min(full))
"""


def _env(checkout: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PRECISIONLINT_CACHE_DIR", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(checkout)
    env["NO_COLOR"] = "1"
    return env


def _measure(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int, str]:
    """CPU seconds (user + system of the process and its descendants), peak RSS in MB (the largest of them),
    exit code, and its output."""
    with tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0, proc.returncode, text


def _check_cmd(path: Path) -> list[str]:
    return [sys.executable, "-m", "precisionlint", "check", "--no-cache", "--no-progress", "--output-format",
            "concise", str(path)]


def _parse_cmd(fmt: str, path: Path, collector: bool = False) -> list[str]:
    """The parser alone. Without the cyclic collector by default, as the check parses (engine.guard turns it
    off for one file's analysis): with it, its passes over the growing tree are most of a plain script's time
    (ast.parse of the 5 MB script about 1.5x, CSafeLoader's compose about 1.8x), and the ratios would flatter."""
    code = PARSERS[fmt] if collector else "import gc\ngc.disable()\n" + PARSERS[fmt]
    return [sys.executable, "-c", code, str(path)]


def _compile(checkout: Path) -> None:
    """Bytecode first (this environment may set PYTHONDONTWRITEBYTECODE): otherwise every run compiles."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(checkout / "precisionlint")],
                   check=False, stdout=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="rounds (medians of CPU, largest peak); default 1")
    parser.add_argument("--only", choices=sorted(SIZES), action="append", help="measure only these formats")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the file sizes (default 1)")
    parser.add_argument("--baseline", type=Path, help="another checkout, measured in the same rounds")
    parser.add_argument("--keep", type=Path, help="write the generated files here (kept) instead of a temp folder")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)
    formats = args.only or ["python", "yaml", "json"]
    checkouts = {"this": ROOT}
    if args.baseline is not None:
        checkouts = {"baseline": args.baseline.resolve(), **checkouts}
    for checkout in checkouts.values():
        _compile(checkout)
    with tempfile.TemporaryDirectory(prefix="big_files_") as temp:
        folder = args.keep.resolve() if args.keep else Path(temp)
        folder.mkdir(parents=True, exist_ok=True)
        missed = 0
        for fmt in formats:
            missed += _one_format(fmt, folder, checkouts, args)
    print(f"\n{'all targets met' if not missed else f'{missed} target(s) missed'}")
    return 1 if missed and args.strict else 0


def _generate(fmt: str, size: int, folder: Path) -> None:
    """Write the big and the tiny file of `fmt`. Run in a child process: a process's peak RSS starts at its
    parent's when it is forked (Linux keeps the high-water mark across fork and exec), so the measuring process
    must never hold a big file itself."""
    path = folder / NAMES[fmt]
    path.write_text(GENERATORS[fmt](size), encoding="utf-8")
    (folder / f"tiny_{NAMES[fmt]}").write_text(TINY[fmt], encoding="utf-8")


def _one_format(fmt: str, folder: Path, checkouts: dict[str, Path], args: argparse.Namespace) -> int:
    size = int(SIZES[fmt] * args.scale)
    # A project of its own (a pyproject.toml without precisionlint settings marks its root): a config's check
    # reads the project's scripts for their loads, and nothing around the temporary folder belongs to it.
    folder = folder / fmt
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pyproject.toml").write_text('[project]\nname = "big-files"\nversion = "0"\n', encoding="utf-8")
    subprocess.run([sys.executable, __file__, "--generate", fmt, str(size), str(folder)], check=True)
    path = folder / NAMES[fmt]
    tiny = folder / f"tiny_{NAMES[fmt]}"
    nbytes = path.stat().st_size
    print(f"\n{NAMES[fmt]}: {nbytes / 1e6:.2f} MB")
    cwd = folder  # no configuration file here or above (a temporary folder): the default limits
    parse_env = _env(ROOT)
    rows: dict[str, dict[str, list[float]]] = {name: {"cpu": [], "peak": [], "tiny": []} for name in checkouts}
    base: dict[str, list[float]] = {"cpu": [], "peak": [], "tiny": [], "collected": []}
    outputs: dict[str, str] = {}
    for _ in range(args.runs):
        cpu, peak, _, _ = _measure(_parse_cmd(fmt, path), parse_env, cwd)
        _, tiny_peak, _, _ = _measure(_parse_cmd(fmt, tiny), parse_env, cwd)
        collected, _, _, _ = _measure(_parse_cmd(fmt, path, collector=True), parse_env, cwd)
        base["collected"].append(collected)
        base["cpu"].append(cpu)
        base["peak"].append(peak)
        base["tiny"].append(tiny_peak)
        for name, checkout in checkouts.items():
            env = _env(checkout)
            cpu, peak, code, output = _measure(_check_cmd(path), env, cwd)
            _, tiny_peak, _, _ = _measure(_check_cmd(tiny), env, cwd)
            rows[name]["cpu"].append(cpu)
            rows[name]["peak"].append(peak)
            rows[name]["tiny"].append(tiny_peak)
            outputs[name] = output
    base_cpu = statistics.median(base["cpu"])
    base_growth = max(base["peak"]) - min(base["tiny"])
    print(f"  parser ({_PARSER_NAMES[fmt]}, collector off): {base_cpu:.2f} s CPU "
          f"({statistics.median(base['collected']):.2f} s with it on), peak RSS growth {base_growth:.0f} MB "
          f"({base_growth * 1e6 / nbytes:.1f}x the size)")
    missed = 0
    for name, checkout in checkouts.items():
        cpu = statistics.median(rows[name]["cpu"])
        growth = max(rows[name]["peak"]) - min(rows[name]["tiny"])
        refused = "limit-exceeded" in outputs[name] or "PL003" in outputs[name]
        estimate = _estimate(checkout, path, fmt)
        cpu_ratio = cpu / base_cpu
        per_byte = growth * 1e6 / nbytes
        estimate_error = (estimate / 1e6 - growth) / growth if estimate is not None and growth > 0 else None
        line = (f"  {name:8} check: {cpu:.2f} s CPU = {cpu_ratio:.2f}x the parser (target <= {TARGET_CPU}x), "
                f"peak RSS growth {growth:.0f} MB = {per_byte:.1f}x the size (target <= {TARGET_MEMORY_PER_BYTE:g}x)")
        print(line)
        if estimate is not None:
            shown = f"{estimate_error:+.0%}" if estimate_error is not None else "n/a"
            print(f"  {'':8} memory estimate {estimate / 1e6:.0f} MB, {shown} of the measured growth "
                  f"(target within {TARGET_ESTIMATE:.0%})")
        if refused:
            first = next((ln for ln in outputs[name].splitlines() if "limit" in ln or "PL003" in ln), "")
            print(f"  {'':8} REFUSED: {first.strip()}")
        if fmt == "json":
            scan = _scan(checkout, path, args.runs)
            if scan is not None:
                loads, full = scan
                print(f"  {'':8} json.loads {loads:.2f} s, json_source.load {full:.2f} s: position scan "
                      f"{full - loads:.2f} s = {(full - loads) / loads:.2f}x json.loads (target <= {TARGET_SCAN}x)")
                if name == "this" and (full - loads) / loads > TARGET_SCAN:
                    missed += 1
        if name == "this":
            missed += int(refused) + int(cpu_ratio > TARGET_CPU) + int(per_byte > TARGET_MEMORY_PER_BYTE)
            missed += int(estimate_error is not None and abs(estimate_error) > TARGET_ESTIMATE)
    return missed


_PARSER_NAMES = {"python": "ast.parse", "yaml": "yaml.compose_all with CSafeLoader", "json": "json.loads"}


def _estimate(checkout: Path, path: Path, fmt: str) -> int | None:
    result = subprocess.run([sys.executable, "-c", _ESTIMATE_PROBE, str(path), fmt], env=_env(checkout),
                            capture_output=True, text=True, check=False, cwd=path.parent)
    try:
        return int(result.stdout.strip())
    except ValueError:
        return None


def _scan(checkout: Path, path: Path, runs: int) -> tuple[float, float] | None:
    result = subprocess.run([sys.executable, "-c", _SCAN_PROBE, str(path), str(max(1, runs))],
                            env=_env(checkout), capture_output=True, text=True, check=False, cwd=path.parent)
    try:
        loads, full = (float(word) for word in result.stdout.split())
    except ValueError:
        print(textwrap.indent(result.stderr.strip()[-600:], "    "))
        return None
    return loads, full


if __name__ == "__main__":
    if sys.argv[1:2] == ["--generate"]:
        _generate(sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]))
        sys.exit(0)
    sys.exit(main())
