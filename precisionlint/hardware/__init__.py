"""What each accelerator can do natively, and how fast: the table behind the hardware rules and `advise`.

    gpu.py         Gpu (one card: capability, native formats, peaks), FORMATS, UnknownGpuError
    table.py       the GPU table itself (data) with each card's spellings
    names.py       a name as people or drivers write it -> the table's card; suggestions
    capability.py  cards outside the table, from their compute capability or gfx ISA (`cc8.9`, `gfx942`)
    targets.py     the run's target GPUs: names, custom-gpus, `auto`
    detect.py      this machine's GPUs (nvidia-smi; PyTorch only through a function passed in from above)
    achievable.py  the best published matmul measurements the probe judges a card against

No module here imports torch or anything above this layer. Import the module that holds a name; this file
re-exports nothing.
"""
