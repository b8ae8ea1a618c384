import argparse

import lightning as L

parser = argparse.ArgumentParser()
parser.add_argument("--precision", default="16")
args = parser.parse_args()
if args.precision == "16":
    args.precision = "16-mixed"  # the script maps the legacy spelling itself

trainer = L.Trainer(precision=args.precision)
