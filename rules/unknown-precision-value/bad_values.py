# Values Accelerate and Lightning reject, reaching them through the script.
import argparse
import os

from accelerate import Accelerator
from lightning import Trainer

parser = argparse.ArgumentParser()
parser.add_argument("--mixed_precision", default="fp16", choices=["no", "fp16", "bfloat16"])
parser.add_argument("--precision", default="bf16-mixed")
args = parser.parse_args()

accelerator = Accelerator(mixed_precision=args.mixed_precision)


def lightning_precision(device):
    if device == "cpu":
        return "bf16-mixed"
    return "mixed16"


trainer = Trainer(precision=lightning_precision(args.device))
other = Trainer(precision=os.getenv("PRECISION", "fp16"))

# a string built from a conditional at the call: each combination is a value
bits = "16" if args.precision == "half" else "bf16"
built = Trainer(precision=f"{bits}_mixed")
