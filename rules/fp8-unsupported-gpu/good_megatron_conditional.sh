# FP8 only when asked for (and on a GPU that runs it): chosen at run time.
EXTRA=()
if [[ "$DTYPE" == "fp8" ]]; then
    EXTRA+=("--fp8-format hybrid" "--fp8-recipe tensorwise")
fi
torchrun pretrain_gpt.py --bf16 ${WITH_MX:+--fp8-format e4m3 --fp8-recipe mxfp8} "${EXTRA[@]}"
