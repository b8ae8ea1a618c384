import argparse

from lightning import Trainer

parser = argparse.ArgumentParser()
parser.add_argument("--precision", default="bf16-mixed")
args = parser.parse_args()
trainer = Trainer(precision=args.precision)
