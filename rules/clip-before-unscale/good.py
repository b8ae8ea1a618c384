import torch


def train(model, loader, optimizer, accelerator):
    scaler = torch.amp.GradScaler("cuda", enabled=False)  # disabled: nothing is scaled
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=False):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()


def clip_after_step(model, loss, optimizer, scaler):
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    scaler.step(optimizer)
    scaler.update()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # not before the step: another matter


def accelerate_loop(accelerator, model, loss, optimizer):
    accelerator.backward(loss)
    accelerator.clip_grad_norm_(model.parameters(), 1.0)  # unscales first
    optimizer.step()


def scaler_off_branch(model, loss, optimizer, scaler):
    scaler.scale(loss).backward()
    if scaler.is_enabled():
        scaler.unscale_(optimizer)
    else:
        pass
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
