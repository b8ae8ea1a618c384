import torch


def scaler_switch(model, loss, optimizer, scaler):
    scaler.scale(loss).backward()
    if scaler.is_enabled():
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()


def flag_switch(model, loader, optimizer, use_amp):
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        if use_amp:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
        lr_scheduler.step()


def gan(generator, discriminator, opt_g, opt_d, scaler, real, noise):
    with torch.autocast("cuda", dtype=torch.float16):
        loss_d = discriminator(real).mean() - discriminator(generator(noise).detach()).mean()
    scaler.scale(loss_d).backward()
    scaler.step(opt_d)
    scaler.update()
    # the generator trains in float32, without the scaler
    loss_g = -discriminator(generator(noise)).mean()
    loss_g.backward()
    opt_g.step()


def disabled(model, loss, optimizer):
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    scaler.scale(loss).backward()
    optimizer.step()


def scaled_name_in_one_branch(model, batch, optimizer, scaler, use_amp):
    loss = model(batch).loss
    if use_amp:
        loss = scaler.scale(loss)
        loss.backward()
        scaler.step(optimizer)
        scaler.update()
    else:
        loss.backward()  # `loss` is the unscaled tensor on this path
        optimizer.step()
