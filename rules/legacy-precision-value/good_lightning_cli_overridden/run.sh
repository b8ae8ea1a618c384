python main.py fit --config configs/large.yaml --trainer.precision 16-mixed
