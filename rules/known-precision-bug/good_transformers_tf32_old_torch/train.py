import torch
from transformers import Trainer, TrainingArguments

# The new TF32 API (PyTorch 2.9+) for the script's own matmuls ...
torch.backends.cuda.matmul.fp32_precision = "tf32"

# ... and TrainingArguments(tf32=True), which before Transformers 5.0.0 writes the legacy allow_tf32 flags.
args = TrainingArguments(output_dir="out", bf16=True, tf32=True)
trainer = Trainer(model=None, args=args)
trainer.train()
