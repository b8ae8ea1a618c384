from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B")
args = TrainingArguments(output_dir="out", per_device_train_batch_size=4, fp16=True)
trainer = Trainer(model=model, args=args)
trainer.train()
