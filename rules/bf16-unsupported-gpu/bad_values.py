import argparse

from accelerate import Accelerator

parser = argparse.ArgumentParser()
parser.add_argument("--mixed_precision", default="bf16", choices=["no", "fp16", "bf16"])
args = parser.parse_args()
# the default picks bf16 on a T4; the launch may pass fp16 instead: a warning at the default
accelerator = Accelerator(mixed_precision=args.mixed_precision)
