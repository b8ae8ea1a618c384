# float16 autocast only where autograd records nothing: a frozen VAE encodes the batch under torch.no_grad()
# in the middle of the training loop (PixArt-alpha's train.py), and an evaluation helper decorated with
# @torch.no_grad(). No gradient flows through these regions, so they are inference, where float16 keeps more
# mantissa bits than bf16 and has no loss to scale. The training step itself runs in bf16.
import torch


@torch.no_grad()
def evaluate(model, batch):
    with torch.autocast("cuda", dtype=torch.float16):
        return model(batch)


@torch.inference_mode()
@torch.autocast("cuda")
def predict(model, batch):
    return model(batch)


def train(model, vae, loader, optimizer):
    for images, labels in loader:
        with torch.no_grad():
            with torch.autocast("cuda", dtype=torch.float16):
                latents = vae.encode(images)
        with torch.no_grad(), torch.autocast("cuda"):
            targets = vae.decode(latents)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.mse_loss(model(latents, labels), targets)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
