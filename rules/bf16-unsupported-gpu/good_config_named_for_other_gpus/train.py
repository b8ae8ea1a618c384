import sys

# The config is picked by the GPU family the job runs on: with T4s, t4_config.json (fp16); the A100 and H100
# files' bf16 never runs on a T4.
gpu_family = sys.argv[1]
config_file_name = f"config/{gpu_family}_config.json"
