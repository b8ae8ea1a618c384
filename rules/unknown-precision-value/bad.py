import lightning as L
from accelerate import Accelerator

trainer = L.Trainer(max_epochs=3, precision="half")
accelerator = Accelerator(mixed_precision="bfloat16")
