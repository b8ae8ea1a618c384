"""Measure the real device: what it is, how fast each matmul format runs, how exact each one is, and whether the
card is as fast as it should be.

The only package of precisionlint that imports torch, and only inside functions, so that `check` and plain
`advise --gpu` never pay for it. Rooms:

    device.py    the devices and the Backend interface the probe measures through (CPU, CUDA via torch.cuda)
    kernels.py   the matmul of each format (fp32, tf32, bf16, fp16, fp8 with per-tensor scales)
    timing.py    warm-up until the speed settles, one event pair per timed batch, median and spread
    numerics.py  each format against a float64 product (PyTorch's TF32 note), fp16 loss scaling
    monitor.py   SM clock, throttle reasons, power and other processes from nvidia-smi, when present
    shapes.py    the user's matmul shapes (config.json or MxNxK) and their static alignment check
    judge.py     each figure against the datasheet peak and the best published measurement
    measure.py   run_probe: all of the above within a time budget
    report.py    the self-contained HTML report (inline SVG)
    results.py   the records (plain dataclasses with a JSON form) everything downstream reads

Each room imports only the rooms listed above it (results at the bottom); this file re-exports nothing.
"""
