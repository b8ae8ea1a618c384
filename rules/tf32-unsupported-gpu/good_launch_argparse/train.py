import argparse

parser = argparse.ArgumentParser()
parser.add_argument("--tf32", default="False")
args = parser.parse_args()
