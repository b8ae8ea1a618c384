from trl import CPOConfig

# TRL's configs subclass TrainingArguments: the same check refuses both flags at start-up.
args = CPOConfig(output_dir="out", fp16=True, bf16=True)
