import lightning as L
from accelerate import Accelerator
from transformers import TrainingArguments

trainer = L.Trainer(accelerator="gpu", precision="16-mixed")
accelerator = Accelerator(mixed_precision="fp16")
args = TrainingArguments(output_dir="out", fp16=True)
