# Inference: float16 weights of a bf16 checkpoint are common for generation and mostly fine.
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("Qwen/Qwen2.5-7B-Instruct")
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2.5-7B-Instruct", torch_dtype=torch.float16).cuda().eval()
with torch.no_grad():
    out = model.generate(**tokenizer("Hello", return_tensors="pt").to("cuda"), max_new_tokens=20)
