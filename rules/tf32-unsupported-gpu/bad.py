import torch
from transformers import TrainingArguments

torch.set_float32_matmul_precision("high")
args = TrainingArguments(output_dir="out", fp16=True, tf32=True)
