"""Ready-to-paste configuration for the recommendation, in each framework's own spelling."""

from __future__ import annotations

from precisionlint.advise.recommendation import Recommendation, recommendation_settings

SNIPPET_TITLES = {
    "trainer_config": "[trainer_config] TOML",
    "lightning_yaml": "Lightning YAML (LightningCLI)",
    "lightning_python": "Lightning Trainer(...)",
    "transformers": "Hugging Face TrainingArguments",
    "accelerate": "Accelerate config (accelerate config / --config_file)",
    "deepspeed": "DeepSpeed JSON",
    "pytorch": "Plain PyTorch",
}


def snippets(rec: Recommendation) -> dict[str, str]:
    """Ready-to-paste configuration for each framework, keyed as in SNIPPET_TITLES."""
    tf32 = rec.tf32_matmul_precision
    accelerator = "gpu" if rec.device == "gpu" else "cpu"
    set_tf32 = f'torch.set_float32_matmul_precision("{tf32}")\n' if tf32 else ""
    tf32_comment = {
        "high": "# TF32 for float32 matmuls: call torch.set_float32_matmul_precision(\"high\") at start-up",
        "highest": "# float32 matmuls stay IEEE (PyTorch's default, \"highest\")",
        None: ("# float32 matmul precision unset: autocast runs the matmuls in 16 bits" if rec.tf32_available
               else "# no TF32 on this hardware: leave the float32 matmul precision unset"),
    }[tf32]
    unset_toml = ("# tf32_matmul_precision: unset (autocast runs the matmuls in 16 bits)" if rec.tf32_available
                  else "# tf32_matmul_precision: leave unset (no TF32 here)")

    toml = f'[trainer_config]\nprecision = "{rec.precision}"\n'
    toml += f'tf32_matmul_precision = "{tf32}"\n' if tf32 else unset_toml + "\n"

    yaml = f"trainer:\n  accelerator: {accelerator}\n  precision: {rec.precision}\n{tf32_comment}\n"

    lightning = (f"{'import torch' + chr(10) if set_tf32 else ''}import lightning as L\n\n{set_tf32}"
                 f'trainer = L.Trainer(accelerator="{accelerator}", precision="{rec.precision}")\n')

    hf_args = ['output_dir="out"']
    if rec.dtype == "bf16":
        hf_args.append("bf16=True")
    elif rec.dtype == "fp16":
        hf_args.append("fp16=True")
    if rec.device == "cpu":
        hf_args.append("use_cpu=True")
    if tf32 == "high":
        hf_args.append("tf32=True")
    elif tf32 == "highest":
        hf_args.append("tf32=False")
    transformers = ("from transformers import TrainingArguments\n\n"
                    f"args = TrainingArguments({', '.join(hf_args)})\n")

    mixed = recommendation_settings(rec)["mixed_precision"]
    accelerate = f"mixed_precision: {mixed}\n"
    if rec.device == "cpu":
        accelerate += "use_cpu: true\n"
    accelerate += f"{tf32_comment}\n# or on the command line: accelerate launch --mixed_precision {mixed} train.py\n"

    if rec.dtype == "fp16":
        deepspeed = ('{\n  "fp16": {\n    "enabled": true,\n    "loss_scale": 0,\n    "initial_scale_power": 16,\n'
                     '    "loss_scale_window": 1000,\n    "hysteresis": 2,\n    "min_loss_scale": 1\n  },\n'
                     '  "bf16": {"enabled": false}\n}\n')
    else:
        on = "true" if rec.dtype == "bf16" else "false"
        deepspeed = f'{{\n  "fp16": {{"enabled": false}},\n  "bf16": {{"enabled": {on}}}\n}}\n'

    if rec.fp8:
        # Transformers has no FP8 argument: bf16 in the arguments, FP8 from the Accelerate launch.
        launch = "# FP8: accelerate launch --mixed_precision fp8 train.py\n"
        transformers = transformers.replace("args = ", launch + "args = ")
        accelerate = ("mixed_precision: fp8  # needs Transformer Engine, torchao or MS-AMP installed\n"
                      "# or on the command line: accelerate launch --mixed_precision fp8 train.py\n")
        # DeepSpeed has no FP8 switch: its bf16 block, and FP8 from Transformer Engine layers in the model.
    return {
        "trainer_config": toml,
        "lightning_yaml": yaml,
        "lightning_python": lightning,
        "transformers": transformers,
        "accelerate": accelerate,
        "deepspeed": deepspeed,
        "pytorch": _pytorch_loop(rec),
    }


def _pytorch_loop(rec: Recommendation) -> str:
    device = "cuda" if rec.device == "gpu" else "cpu"
    head = "import torch\n\n"
    if rec.tf32_matmul_precision:
        head += f'torch.set_float32_matmul_precision("{rec.tf32_matmul_precision}")\n'
    if rec.dtype == "fp16":
        return head + (
            f'scaler = torch.amp.GradScaler("{device}")\n'
            "for inputs, targets in loader:\n"
            "    optimizer.zero_grad(set_to_none=True)\n"
            f'    with torch.autocast(device_type="{device}", dtype=torch.float16):  # forward and loss only\n'
            "        loss = loss_fn(model(inputs), targets)\n"
            "    scaler.scale(loss).backward()\n"
            "    scaler.unscale_(optimizer)  # before clipping, so the threshold applies to true gradients\n"
            "    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)\n"
            "    scaler.step(optimizer)  # skips the step if gradients overflowed\n"
            "    scaler.update()\n"
        )
    if rec.fp8:
        return head + (
            "import transformer_engine.pytorch as te\n"
            "from transformer_engine.common.recipe import DelayedScaling, Format\n\n"
            "recipe = DelayedScaling(fp8_format=Format.HYBRID)  # e4m3 forward, e5m2 gradients\n"
            "for inputs, targets in loader:  # the model's layers are te.Linear / te.TransformerLayer\n"
            "    optimizer.zero_grad(set_to_none=True)\n"
            f'    with torch.autocast(device_type="{device}", dtype=torch.bfloat16):  # forward and loss only\n'
            "        with te.fp8_autocast(enabled=True, fp8_recipe=recipe):  # FP8 matmuls in te layers\n"
            "            outputs = model(inputs)\n"
            "        loss = loss_fn(outputs, targets)\n"
            "    loss.backward()  # no GradScaler: the recipe scales each tensor\n"
            "    optimizer.step()\n"
        )
    if rec.dtype == "bf16":
        return head + (
            "for inputs, targets in loader:\n"
            "    optimizer.zero_grad(set_to_none=True)\n"
            f'    with torch.autocast(device_type="{device}", dtype=torch.bfloat16):  # forward and loss only\n'
            "        loss = loss_fn(model(inputs), targets)\n"
            "    loss.backward()  # no GradScaler: bf16 has float32's exponent range\n"
            "    optimizer.step()\n"
        )
    return head + (
        "for inputs, targets in loader:  # float32 weights and math, no autocast\n"
        "    optimizer.zero_grad(set_to_none=True)\n"
        "    loss = loss_fn(model(inputs), targets)\n"
        "    loss.backward()\n"
        "    optimizer.step()\n"
    )
