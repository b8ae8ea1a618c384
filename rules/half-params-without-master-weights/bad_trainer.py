from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B", dtype="bfloat16")
args = TrainingArguments(output_dir="out", per_device_train_batch_size=8, bf16=True)
Trainer(model=model, args=args, train_dataset=dataset).train()
