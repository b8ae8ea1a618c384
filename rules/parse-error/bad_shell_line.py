import torch
scaler = torch.amp.GradScaler("cuda")
!deepspeed train.py --fp16
