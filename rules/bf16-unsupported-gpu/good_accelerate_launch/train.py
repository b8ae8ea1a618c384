from accelerate import Accelerator

accelerator = Accelerator(mixed_precision="fp16")  # the script's argument wins over the launcher's
