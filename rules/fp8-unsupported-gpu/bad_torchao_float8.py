from torchao.float8 import Float8LinearConfig, convert_to_float8_training

config = Float8LinearConfig.from_recipe_name("rowwise")
convert_to_float8_training(model, config=config)
