#!/bin/bash
python train.py --precision bf16-mixed
python train.py "$@"
