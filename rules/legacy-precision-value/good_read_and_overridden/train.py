# The script writes the precision the Trainer reads: the 16 of the YAML never reaches it.
import sys

import yaml
from lightning import Trainer

cfg = yaml.safe_load(open("configs/train.yaml"))
cfg["trainer"]["precision"] = sys.argv[1]
trainer = Trainer(**cfg["trainer"])
