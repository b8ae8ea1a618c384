import torch


def train(model, loader, optimizer):
    device = torch.device("cuda") if torch.cuda.is_available() else torch.device("mps")
    model.to(device)
    for x in loader:
        # float16 is the arm taken off CUDA and CPU (on MPS here); torch's GradScaler supports MPS too
        with torch.autocast(device_type=device.type,
                            dtype=torch.bfloat16 if device.type in ["cuda", "cpu"] else torch.float16):
            loss = model(x.to(device)).mean()
        loss.backward()
        optimizer.step()
