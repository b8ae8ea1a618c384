# Values that never reach the Trainer, or reach it already in Lightning 2.x spelling: nothing to report.
import argparse

from lightning import Trainer

DEBUG = False

parser = argparse.ArgumentParser()
parser.add_argument("--precision", default="bf16-mixed", choices=["bf16-mixed", "16-mixed", "32-true"])
parser.add_argument("--half", action="store_true")
args = parser.parse_args()

# every arm is a 2.x spelling
both_arms = Trainer(precision="16-mixed" if args.half else "32-true")
from_option = Trainer(precision=args.precision)

# an assignment that every path passes hides the earlier one
value = 16
value = "16-mixed"
hidden = Trainer(precision=value)

# a branch that cannot run
if DEBUG:
    debug_value = 16
else:
    debug_value = "bf16-mixed"
unreachable = Trainer(precision=debug_value)

# a table whose legacy entry no choice of the option can pick
TABLE = {"old": 16, "bf16-mixed": "bf16-mixed", "16-mixed": "16-mixed", "32-true": "32-true"}
looked_up = Trainer(precision=TABLE[args.precision])


def run(precision):
    # a parameter with no default and no caller in this file (a test's parametrization, another module)
    return Trainer(precision=precision)
