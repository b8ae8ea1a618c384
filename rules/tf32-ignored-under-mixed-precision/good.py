# Lightning's own advice: set the matmul precision once, whatever the Trainer precision. Not the same object.
import torch
import lightning as L

torch.set_float32_matmul_precision("high")
trainer = L.Trainer(precision="bf16-mixed")
