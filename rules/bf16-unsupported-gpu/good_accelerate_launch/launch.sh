accelerate launch --mixed_precision bf16 train.py
accelerate launch --mixed_precision "$MIXED" diffusion.py
accelerate launch diffusion.py --mixed_precision $MIXED
# The script's option, given on the line, wins over the launcher's flag.
accelerate launch --mixed_precision bf16 diffusion.py --mixed_precision fp16
# The flag replaces the config file's bf16 for the one run that reads it.
accelerate launch --config_file accelerate.yaml --mixed_precision fp16 train.py
