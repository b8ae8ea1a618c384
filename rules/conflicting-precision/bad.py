from transformers import TrainingArguments

args = TrainingArguments(
    output_dir="out",
    fp16=True,
    bf16=True,
)
