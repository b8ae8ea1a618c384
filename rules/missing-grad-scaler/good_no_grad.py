# float16 autocast only under torch.no_grad(): a frozen encoder turns the batch into features mid-loop. No
# gradient flows back through those features, so no float16 gradient can underflow and no GradScaler is needed;
# the trained part runs in bfloat16.
import torch


def train(model, encoder, loader, optimizer):
    for images, labels in loader:
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
            features = encoder(images)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.cross_entropy(model(features), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
