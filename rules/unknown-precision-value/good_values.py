# Every value that can reach the framework is one it accepts.
import argparse

from accelerate import Accelerator
from lightning import Trainer

parser = argparse.ArgumentParser()
parser.add_argument("--mixed_precision", default="bf16", choices=["no", "fp16", "bf16"])
args = parser.parse_args()

accelerator = Accelerator(mixed_precision=args.mixed_precision)
trainer = Trainer(precision="bf16-mixed" if args.mixed_precision == "bf16" else "16-mixed")
# `cfg` is not the parsed options: its `mixed_precision` is someone else's value
cfg = {"mixed_precision": "float16"}
Accelerator(mixed_precision=cfg["mixed_precision"].upper())
