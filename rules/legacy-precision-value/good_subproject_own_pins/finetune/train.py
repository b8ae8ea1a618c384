import pytorch_lightning as pl

# finetune/requirements.txt pins Lightning 1.9 for this part: it rules here, not the root's lightning>=2.1
trainer = pl.Trainer(precision=16, max_epochs=5)
