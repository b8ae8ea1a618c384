#!/usr/bin/env bash
accelerate launch --num_processes 4 train.py --precision 16-mixed
