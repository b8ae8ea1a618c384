python main.py fit --config fit.yaml --trainer.precision 16-mixed
