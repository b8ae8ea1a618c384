# Legacy spellings that reach the Trainer through the script: each is reported where it is written.
import argparse
import os
from dataclasses import dataclass, field

import click
from lightning import Trainer

parser = argparse.ArgumentParser()
parser.add_argument("--precision", default="bf16")
parser.add_argument("--fp16", action="store_true")
args = parser.parse_args()

arm = Trainer(precision=16 if args.fp16 else "32-true")
option = Trainer(precision=args.precision)


def precision_of_run():
    return "16"


helper = Trainer(precision=precision_of_run())

if args.fp16:
    chosen = 16
else:
    chosen = "bf16-mixed"
branch = Trainer(precision=chosen)

environment = Trainer(precision=os.environ.get("PRECISION", "bf16"))


@dataclass
class RunArguments:
    precision: str = field(default="16")


def from_dataclass(run_args: RunArguments):
    return Trainer(precision=run_args.precision)


class Experiment:
    def __init__(self):
        self.precision = "bf16"

    def trainer(self):
        return Trainer(precision=self.precision)


@click.command()
@click.option("--precision", default="16")
def main(precision):
    Trainer(precision=precision)
