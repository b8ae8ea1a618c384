"""Builds a deterministic, realistic repository to benchmark `precisionlint check` on.

The mix follows what an ML repository looks like: mostly generic library code (data loading, utilities,
models, tests) that no precision rule can fire on, a few percent of training scripts with autocast and
GradScaler (some of them wrong), generic files that mention a prefilter keyword by accident ("precision" in a
metrics module, `half = n // 2`), and a few hundred YAML / TOML / JSON configs, some with precision settings.

The same (seed, counts) always give byte-identical files. `build(dest, ...)` skips the work when the corpus
in `dest` was built with the same parameters.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

VERSION = 4  # bump when the templates change, so that old corpora are rebuilt

PACKAGES = ["data", "models", "utils", "losses", "metrics", "optim", "io", "viz", "callbacks", "tests", "scripts",
            "layers", "tokenizers", "augment", "eval"]
WORDS = ["batch", "sample", "token", "frame", "image", "label", "weight", "record", "shard", "window", "feature",
         "vector", "cache", "bucket", "entry", "chunk", "stream", "index", "mask", "score"]


def _name(rng: random.Random, parts: int = 2) -> str:
    return "_".join(rng.choice(WORDS) for _ in range(parts))


def _camel(rng: random.Random) -> str:
    return "".join(w.capitalize() for w in _name(rng, 2).split("_"))


def _function(rng: random.Random, indent: str = "") -> str:
    name = _name(rng, rng.randint(1, 3))
    args = [_name(rng, 1) + str(i) for i in range(rng.randint(1, 4))]
    lines = [
        f"{indent}def {name}({', '.join(args)}, *, strict: bool = False) -> list:",
        f'{indent}    """Return the {rng.choice(WORDS)}s of {args[0]} grouped by {rng.choice(WORDS)}.',
        f"{indent}",
        f"{indent}    Raises ValueError when `strict` is set and a {rng.choice(WORDS)} is missing.",
        f'{indent}    """',
        f"{indent}    result = []",
        f"{indent}    seen: dict[str, int] = {{}}",
    ]
    for _ in range(rng.randint(2, 6)):
        var = _name(rng, 1)
        choice = rng.randrange(5)
        if choice == 0:
            lines += [
                f"{indent}    for {var} in {args[0]}:",
                f"{indent}        if {var} is None:",
                f"{indent}            if strict:",
                f'{indent}                raise ValueError(f"missing {{{var}!r}} in {name}")',
                f"{indent}            continue",
                f"{indent}        key = str({var}).lower()",
                f"{indent}        seen[key] = seen.get(key, 0) + 1",
                f"{indent}        result.append(({var}, seen[key]))",
            ]
        elif choice == 1:
            lines += [
                f"{indent}    {var} = [x * {rng.randint(2, 9)} for x in range({rng.randint(3, 50)}) if x % 2]",
                f"{indent}    result.extend(sorted({var}, reverse={rng.choice(['True', 'False'])}))",
            ]
        elif choice == 2:
            lines += [
                f"{indent}    try:",
                f"{indent}        {var} = {{k: v for k, v in seen.items() if v > {rng.randint(1, 5)}}}",
                f"{indent}    except (KeyError, TypeError) as exc:",
                f'{indent}        logger.warning("skipping %s: %s", {args[-1]!r}, exc)',
                f"{indent}        {var} = {{}}",
                f"{indent}    result.append(len({var}))",
            ]
        elif choice == 3:
            lines += [
                f"{indent}    with open(os.path.join({args[-1]}, '{var}.json'), encoding='utf-8') as handle:",
                f"{indent}        {var} = json.load(handle)",
                f"{indent}    result.append({var}.get('{rng.choice(WORDS)}', {rng.randint(0, 99)}))",
            ]
        else:
            lines += [
                f"{indent}    while len(result) < {rng.randint(4, 64)}:",
                f"{indent}        result.append(math.sqrt(len(result) + {rng.random():.3f}))",
            ]
    lines.append(f"{indent}    return result")
    return "\n".join(lines) + "\n"


def _class(rng: random.Random) -> str:
    name = _camel(rng)
    methods = "\n".join(_function(rng, "    ").replace("(", "(self, ", 1) for _ in range(rng.randint(1, 4)))
    return (
        f"@dataclasses.dataclass\nclass {name}:\n"
        f'    """A {rng.choice(WORDS)} store with lazy loading."""\n\n'
        f"    root: str\n    size: int = {rng.randint(1, 4096)}\n    tags: tuple[str, ...] = ()\n\n"
        f"{methods}"
    )


HEADER = '''"""{doc}"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os

logger = logging.getLogger(__name__)

'''


def generic_module(rng: random.Random) -> str:
    parts = [HEADER.format(doc=f"{_camel(rng)} helpers for the {rng.choice(PACKAGES)} package.")]
    for _ in range(rng.randint(2, 7)):
        parts.append(_class(rng) if rng.random() < 0.35 else _function(rng))
        parts.append("\n")
    return "\n".join(parts)


INCIDENTAL = [
    # A metrics module: "precision" without any numeric-precision meaning.
    '''
def precision_recall(tp: int, fp: int, fn: int) -> tuple[float, float]:
    """Precision and recall of one class."""
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    return precision, recall
''',
    '''
def split_in_two(items: list) -> tuple[list, list]:
    half = len(items) // 2
    return items[:half], items[half:]
''',
    '''
def describe(args) -> str:
    # fp16 checkpoints are converted elsewhere; here we only print the flag.
    return f"fp16={getattr(args, 'fp16', False)} bf16={getattr(args, 'bf16', False)}"
''',
]


TRAINING_LOOPS = [
    # correct bf16 autocast
    '''
import torch
import torch.nn.functional as F


def train_epoch(model, loader, optimizer, device="cuda"):
    model.train()
    for step, (x, y) in enumerate(loader):
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
''',
    # correct fp16 with GradScaler
    '''
import torch
from torch.amp import GradScaler


def train(model, loader, optimizer, epochs=1):
    scaler = GradScaler("cuda")
    for _ in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = torch.nn.functional.mse_loss(model(x), y)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            scaler.step(optimizer)
            scaler.update()
''',
    # fp16 autocast without a scaler (a finding)
    '''
import torch


def fit(model, batches, opt):
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            out = model(x)
            loss = (out - y).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
''',
    # deprecated API and a clip before unscale (findings)
    '''
import torch
from torch.cuda.amp import GradScaler, autocast


def run(model, data, optimizer):
    scaler = GradScaler()
    for batch in data:
        with autocast():
            loss = model(**batch).loss
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
''',
    # Lightning / HF constructors with literal precision settings
    '''
import lightning as L
from transformers import TrainingArguments


def make_trainer(max_epochs=10):
    return L.Trainer(accelerator="gpu", devices=8, precision="bf16-mixed", max_epochs=max_epochs)


def make_args(out):
    return TrainingArguments(output_dir=out, bf16=True, per_device_train_batch_size=16)
''',
    '''
import torch

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


def to_half(model):
    return model.half()
''',
]


def training_module(rng: random.Random) -> str:
    body = rng.choice(TRAINING_LOOPS)
    extra = "\n".join(_function(rng) for _ in range(rng.randint(1, 4)))
    return f'"""Training entry point for the {rng.choice(PACKAGES)} experiments."""\n' + body + "\n\n" + extra.replace(
        "logger.warning", "print"
    ).replace("json.load", "eval").replace("os.path.join", "str").replace("math.sqrt", "abs")


YAML_PRECISION = [
    "trainer:\n  accelerator: gpu\n  devices: {devices}\n  precision: bf16-mixed\n  max_epochs: {epochs}\n",
    "trainer:\n  accelerator: gpu\n  devices: {devices}\n  precision: 16\n  max_epochs: {epochs}\n",
    "compute_environment: LOCAL_MACHINE\ndistributed_type: MULTI_GPU\nmixed_precision: fp16\n"
    "num_processes: {devices}\n",
    "output_dir: runs/{name}\nper_device_train_batch_size: {batch}\nbf16: true\nfp16: false\n"
    "learning_rate: 3.0e-4\nnum_train_epochs: {epochs}\n",
]
YAML_PLAIN = (
    "data:\n  root: /datasets/{name}\n  batch_size: {batch}\n  num_workers: 8\n  shuffle: true\n"
    "model:\n  name: {name}\n  hidden: {hidden}\n  layers: {layers}\n  dropout: 0.1\n"
    "optimizer:\n  lr: 0.001\n  betas: [0.9, 0.999]\n  weight_decay: 0.01\n"
)
TOML_PRECISION = [
    '[trainer_config]\nprecision = "bf16-mixed"\nmax_epochs = {epochs}\ndevices = {devices}\n',
    '[trainer_config]\nprecision = "16"\nmax_epochs = {epochs}\n\n[trainer_config.tf32]\nmatmul_precision = "high"\n',
]
TOML_PLAIN = (
    '[data]\nroot = "/datasets/{name}"\nbatch_size = {batch}\n\n[model]\nname = "{name}"\nhidden = {hidden}\n'
    'layers = {layers}\n\n[logging]\nlevel = "INFO"\nevery_n_steps = 50\n'
)


def _json_precision(rng: random.Random) -> str:
    config = {
        "train_batch_size": rng.choice([32, 64, 256]),
        "gradient_accumulation_steps": rng.choice([1, 2, 4]),
        "optimizer": {"type": "AdamW", "params": {"lr": 3e-4, "betas": [0.9, 0.95], "eps": 1e-8}},
        "zero_optimization": {"stage": rng.choice([1, 2, 3]), "overlap_comm": True},
    }
    if rng.random() < 0.5:
        config["bf16"] = {"enabled": True}
    else:
        config["fp16"] = {"enabled": True, "loss_scale": rng.choice([0, 128]), "initial_scale_power": 16}
    return json.dumps(config, indent=2) + "\n"


def _json_plain(rng: random.Random) -> str:
    return json.dumps(
        {"name": _name(rng), "version": f"1.{rng.randint(0, 9)}.0", "labels": [_name(rng, 1) for _ in range(8)],
         "splits": {"train": 0.8, "val": 0.1, "test": 0.1}},
        indent=2,
    ) + "\n"


def _fields(rng: random.Random) -> dict:
    return {"devices": rng.choice([1, 2, 4, 8]), "epochs": rng.randint(1, 100), "name": _name(rng),
            "batch": rng.choice([8, 16, 32, 64]), "hidden": rng.choice([256, 512, 1024]),
            "layers": rng.randint(2, 48)}


def build(dest: Path, python_files: int = 3000, config_files: int = 300, seed: int = 0) -> dict:
    """Write the corpus into `dest` (replacing an older one); return its description."""
    stamp = {"version": VERSION, "python_files": python_files, "config_files": config_files, "seed": seed}
    marker = dest / ".corpus.json"
    if marker.exists():
        try:
            if json.loads(marker.read_text())["stamp"] == stamp:
                return json.loads(marker.read_text())
        except (ValueError, KeyError):
            pass
    if dest.exists():
        shutil.rmtree(dest)
    rng = random.Random(seed)
    counts = {"python": 0, "training": 0, "incidental": 0, "yaml": 0, "toml": 0, "json": 0, "with_precision": 0}
    total_bytes = 0
    for index in range(python_files):
        package = PACKAGES[index % len(PACKAGES)]
        sub = f"sub{(index // len(PACKAGES)) % 12}"
        path = dest / "src" / package / sub / f"{_name(rng, 2)}_{index}.py"
        roll = rng.random()
        if roll < 0.04:
            text = training_module(rng)
            counts["training"] += 1
        else:
            text = generic_module(rng)
            if roll < 0.14:
                text += rng.choice(INCIDENTAL)
                counts["incidental"] += 1
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        counts["python"] += 1
        total_bytes += len(text)
    for index in range(config_files):
        kind = ("yaml", "yaml", "toml", "json")[index % 4]
        precise = rng.random() < 0.5
        fields = _fields(rng)
        if kind == "yaml":
            text = (rng.choice(YAML_PRECISION).format(**fields) if precise else "") + YAML_PLAIN.format(**fields)
        elif kind == "toml":
            text = TOML_PLAIN.format(**fields) + ("\n" + rng.choice(TOML_PRECISION).format(**fields) if precise else "")
        else:
            text = _json_precision(rng) if precise else _json_plain(rng)
        path = dest / "configs" / f"group{index % 10}" / f"{fields['name']}_{index}.{kind}"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        counts[kind] += 1
        counts["with_precision"] += int(precise)
        total_bytes += len(text)
    # The project file a repository has; it also keeps the run independent of any enclosing project's config.
    (dest / "pyproject.toml").write_text(
        '[project]\nname = "corpus"\nversion = "0.0.0"\n\n[tool.precisionlint]\nrespect-gitignore = false\n',
        encoding="utf-8",
    )
    one = dest / "one.toml"
    one.write_text(
        '[trainer_config]\nprecision = "16"\nmax_epochs = 10\ndevices = 8\n\n[trainer_config.data]\n'
        'batch_size = 32\nnum_workers = 8\n',
        encoding="utf-8",
    )
    description = {"stamp": stamp, "counts": counts, "bytes": total_bytes}
    marker.write_text(json.dumps(description, indent=2), encoding="utf-8")
    return description
