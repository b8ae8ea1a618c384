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


def actor_critic_with_two_scalers(policy, critic, opt_p, opt_c, batch):
    # One scaler per model; the clip applies to the policy, whose scaler was unscaled just before.
    scaler_p = torch.amp.GradScaler("cuda")
    scaler_c = torch.amp.GradScaler("cuda")
    with torch.autocast("cuda", dtype=torch.float16):
        lp = policy(batch).mean()
        lc = critic(batch).mean()
    scaler_p.scale(lp).backward()
    scaler_c.scale(lc).backward()
    scaler_p.unscale_(opt_p)
    torch.nn.utils.clip_grad_norm_(policy.parameters(), 0.5)
    scaler_p.step(opt_p)
    scaler_c.step(opt_c)
    scaler_p.update()
    scaler_c.update()
