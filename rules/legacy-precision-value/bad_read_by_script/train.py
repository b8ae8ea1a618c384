import argparse

import yaml
from lightning import Trainer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="configs/train.yaml")
    args = parser.parse_args()
    with open(args.config) as f:
        cfg = yaml.safe_load(f)
    trainer = Trainer(precision=cfg["train"]["precision"], max_epochs=3)
    options = cfg["trainer"]
    return trainer, Trainer(**options)
