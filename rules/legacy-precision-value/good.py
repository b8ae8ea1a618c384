from lightning.pytorch import Trainer

trainer = Trainer(precision="bf16-mixed")
