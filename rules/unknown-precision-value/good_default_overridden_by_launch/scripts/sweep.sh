#!/bin/bash
# the value comes from the loop: not readable here, but the default is overridden all the same
for p in 16-mixed bf16-mixed; do
    python train.py -p "$p" --max-epochs 1
done
python train.py --precision=32-true
