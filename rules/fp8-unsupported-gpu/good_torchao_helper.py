# A library helper (Accelerate's convert_model_to_fp8_ao, torchao's MoE training config): it builds the float8
# config for a caller that chose FP8, and nothing in the file trains. Which GPU runs it is the caller's choice.
from dataclasses import dataclass

from torchao.float8 import Float8LinearConfig, convert_to_float8_training


def convert_model_to_fp8(model, config=None, module_filter_func=None):
    convert_to_float8_training(model, module_filter_fn=module_filter_func, config=config)


@dataclass
class MoETrainingConfig:
    float8_linear_recipe: str = "rowwise"

    def __post_init__(self):
        self._float8_linear_config = Float8LinearConfig.from_recipe_name(self.float8_linear_recipe)
