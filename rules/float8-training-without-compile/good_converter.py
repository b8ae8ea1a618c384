"""A model converter that a training recipe calls; the recipe compiles (per its config)."""
from torchao.float8 import Float8LinearConfig, convert_to_float8_training


def convert(model, recipe_name: str = "tensorwise"):
    convert_to_float8_training(model, config=Float8LinearConfig.from_recipe_name(recipe_name))
    return model
