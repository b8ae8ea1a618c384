python train.py --precision 16
