torchrun --nproc_per_node 8 pretrain_gpt.py \
    --bf16 \
    --fp8-format e4m3 \
    --fp8-recipe mxfp8 \
    --fp8-param-gather
