#!/bin/bash
python segmenter/train.py --precision bf16-mixed
python -m segmenter.train --seed 1
