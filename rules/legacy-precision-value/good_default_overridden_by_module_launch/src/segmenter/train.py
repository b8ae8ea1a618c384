import argparse

from lightning import Trainer

parser = argparse.ArgumentParser()
# "16" is a legacy value, but every launch line passes --precision: the default never runs
parser.add_argument("--precision", default="16")
args = parser.parse_args()
trainer = Trainer(precision=args.precision)
