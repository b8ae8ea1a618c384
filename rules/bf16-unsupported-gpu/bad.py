from lightning.pytorch import Trainer
from transformers import TrainingArguments

trainer = Trainer(precision="bf16-true")
args = TrainingArguments("out", bf16=True)
