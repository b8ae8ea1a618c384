import pytorch_lightning as pl

from models.adapter import Encoder

trainer = pl.Trainer(precision=16, max_epochs=5)
