import torch


def benchmark_forward_backward(fn, x, amp=False, amp_dtype=torch.float16):
    # a helper whose caller picks the dtype (a benchmark times the backward; nothing is trained here)
    with torch.autocast(device_type="cuda", dtype=amp_dtype, enabled=amp):
        y = fn(x)
    y.backward(torch.randn_like(y))
