# the script maps the legacy spelling itself before the Trainer reads it
python overrides.py --precision 16
