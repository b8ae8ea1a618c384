from lightning.pytorch import Trainer

trainer = Trainer(precision="16-mixed")
