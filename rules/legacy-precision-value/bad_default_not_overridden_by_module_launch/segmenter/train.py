import argparse

from lightning import Trainer

parser = argparse.ArgumentParser()
# one launch line passes --precision, the other (a `python -m` line) runs with this default
parser.add_argument("--precision", default="16")
args = parser.parse_args()
trainer = Trainer(precision=args.precision)
