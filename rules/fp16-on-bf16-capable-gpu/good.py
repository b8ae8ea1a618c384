import lightning as L
from accelerate import Accelerator

trainer = L.Trainer(accelerator="gpu", precision="bf16-mixed")
accelerator = Accelerator(mixed_precision="bf16")
