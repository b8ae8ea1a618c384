from setuptools import setup

setup(name="transformer_engine", version="2.20.0.dev0")
