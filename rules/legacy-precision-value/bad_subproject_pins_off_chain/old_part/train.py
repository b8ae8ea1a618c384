import pytorch_lightning as pl

# Lightning 1.8 (old_part/requirements.txt): 16 is its own spelling
trainer = pl.Trainer(precision=16, max_epochs=5)
