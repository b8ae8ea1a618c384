# A fork of optimum-habana, the interface of Transformers to Habana Gaudi: its DeepSpeed configs are written for
# Gaudi (HPU), not for the target GPUs, so what those GPUs lack says nothing about them.
from setuptools import find_namespace_packages, setup

setup(
    name="optimum-habana",
    packages=find_namespace_packages(include=["optimum*"]),
    install_requires=["transformers >= 4.55.0, < 4.56.0", "optimum >= 2.0.0, < 2.1.0", "torch"],
)
