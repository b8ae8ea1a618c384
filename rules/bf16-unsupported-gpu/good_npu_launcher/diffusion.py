import argparse

from accelerate import Accelerator

parser = argparse.ArgumentParser()
parser.add_argument("--mixed_precision", type=str, default=None, choices=["no", "fp16", "bf16"])
args = parser.parse_args()
accelerator = Accelerator(mixed_precision=args.mixed_precision)
