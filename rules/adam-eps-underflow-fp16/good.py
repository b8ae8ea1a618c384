import torch


def main():
    model = Net().cuda().half()
    ok = torch.optim.Adam(model.parameters(), eps=1e-4)
    fused = torch.optim.AdamW(model.parameters(), fused=True)  # fused kernels compute in float32
    sgd = torch.optim.SGD(model.parameters(), lr=0.1)
    return ok, fused, sgd


def bf16():
    model = Net().cuda().to(torch.bfloat16)  # bfloat16 has float32's exponent range: 1e-8 is representable
    return torch.optim.Adam(model.parameters())


def fp32():
    model = Net().cuda()
    return torch.optim.Adam(model.parameters())


def unknown(model, eps):
    model.half()
    return torch.optim.Adam(model.parameters(), eps=eps)
