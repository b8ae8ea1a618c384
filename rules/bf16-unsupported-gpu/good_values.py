import argparse

from accelerate import Accelerator

parser = argparse.ArgumentParser()
parser.add_argument("--mixed_precision", default="fp16", choices=["no", "fp16", "bf16"])
args = parser.parse_args()
# bf16 is only a choice the launch may make, not a value the script writes for itself
accelerator = Accelerator(mixed_precision=args.mixed_precision)
