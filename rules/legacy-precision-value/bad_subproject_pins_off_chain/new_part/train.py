import pytorch_lightning as pl

# neither old_part's pins (beside this part) nor tools/ (inside it, never imported) speak for this file
trainer = pl.Trainer(precision=16, max_epochs=5)
