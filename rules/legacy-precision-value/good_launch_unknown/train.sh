PRECISION=${PRECISION:-16-mixed}
python train.py --precision "$PRECISION"
