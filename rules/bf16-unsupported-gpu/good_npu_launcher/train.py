from accelerate import Accelerator

accelerator = Accelerator()  # takes the launcher's --mixed_precision
