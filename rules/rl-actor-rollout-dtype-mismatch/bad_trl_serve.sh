# Server mode: the vLLM server generates in float16, the trainer computes log-probabilities in bf16.
CUDA_VISIBLE_DEVICES=0 trl vllm-serve --model Qwen/Qwen2.5-7B --dtype float16 &
CUDA_VISIBLE_DEVICES=1,2,3 accelerate launch --num_processes 3 train_grpo.py --bf16 --use_vllm
