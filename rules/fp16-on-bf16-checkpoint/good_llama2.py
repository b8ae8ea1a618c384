# Llama 2's Hugging Face weights are float16: fp16 training does not leave the range they were saved in.
from transformers import AutoModelForCausalLM, Trainer, TrainingArguments

model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf")
args = TrainingArguments(output_dir="out", per_device_train_batch_size=4, fp16=True)
Trainer(model=model, args=args).train()
