# Megatron-style: the recipe is built only when the run's configuration asks for it.
import transformer_engine
from transformer_engine.common import recipe


def get_fp4_recipe(config):
    if config.fp4_recipe == "nvfp4":
        return recipe.NVFP4BlockScaling()
    return None
