python main.py fit --config configs/large.yaml
python main.py fit --trainer.precision 16
