# A helper that builds whichever recipe its caller configures offers a choice made elsewhere.
from transformer_engine.common import recipe


def get_recipe(name):
    if name == "delayed":
        return recipe.DelayedScaling()
    if name == "mxfp8":
        return recipe.MXFP8BlockScaling()
    return recipe.Float8BlockScaling()
