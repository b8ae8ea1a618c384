import pytorch_lightning as pl

trainer = pl.Trainer(precision=16, max_epochs=5)
