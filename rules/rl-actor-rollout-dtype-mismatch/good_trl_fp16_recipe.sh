# Both sides pinned to float16 on purpose.
CUDA_VISIBLE_DEVICES=0 trl vllm-serve --model Qwen/Qwen2.5-7B --dtype float16 &
CUDA_VISIBLE_DEVICES=1,2,3 accelerate launch --num_processes 3 train_grpo.py --fp16 --use_vllm
