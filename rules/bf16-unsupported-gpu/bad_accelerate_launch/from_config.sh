accelerate launch --config_file accelerate.yaml train.py
