from accelerate import Accelerator

accelerator = Accelerator(gradient_accumulation_steps=4)
