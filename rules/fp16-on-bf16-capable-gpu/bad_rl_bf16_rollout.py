"""A GRPO loop that samples with vLLM in bfloat16 and trains under float16 autocast: the fp16 RL recipe
(arXiv 2510.26788), which keeps the rollout's and the trainer's probabilities in one format on purpose."""
import torch
from vllm import LLM, SamplingParams

llm = LLM(model="Qwen/Qwen2.5-Math-1.5B", dtype="bfloat16", gpu_memory_utilization=0.4)
policy = torch.nn.Linear(8, 8).cuda()
optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-6)
scaler = torch.amp.GradScaler("cuda")

for prompts in [["1+1="]]:
    outputs = llm.generate(prompts, SamplingParams(temperature=1.0, logprobs=0))
    with torch.autocast("cuda", dtype=torch.float16):
        loss = policy(torch.randn(4, 8, device="cuda")).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
