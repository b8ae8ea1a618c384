#!/bin/bash
# train.py's own argparse option: what it does with it is the script's business.
python train.py --tf32 True
