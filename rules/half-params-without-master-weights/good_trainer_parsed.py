# Arguments parsed from the command line may name --deepspeed or --fsdp, which keep float32 master weights.
import torch
from transformers import AutoModelForCausalLM, HfArgumentParser, Trainer, TrainingArguments

(args,) = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B", torch_dtype=torch.bfloat16)
Trainer(model=model, args=args).train()
