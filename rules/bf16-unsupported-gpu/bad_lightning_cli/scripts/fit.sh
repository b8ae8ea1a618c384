cd "$(dirname "$0")/.."
python main.py fit -c configs/fit.yaml
