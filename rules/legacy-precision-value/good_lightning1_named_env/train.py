from pytorch_lightning import Trainer

trainer = Trainer(accelerator="gpu", devices=1, precision=16)
