from setuptools import setup

REQUIREMENTS = ["torch>=1.13", "numpy"]

setup(name="ranged", install_requires=REQUIREMENTS, python_requires=">=3.9")
