from dataclasses import dataclass

from transformers import HfArgumentParser, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str


parser = HfArgumentParser((ModelArguments, TrainingArguments))
model_args, training_args = parser.parse_yaml_file("configs/args.yaml")
training_args.fp16, training_args.bf16 = False, True
