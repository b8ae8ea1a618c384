import torch
!deepspeed train.py --fp16
