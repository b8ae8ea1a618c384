import argparse

import pytorch_lightning as L

parser = argparse.ArgumentParser()
parser.add_argument("--precision", default=32)
parser.add_argument("--epochs", type=int, default=10)
args = parser.parse_args()

trainer = L.Trainer(max_epochs=args.epochs, precision=args.precision)
