"""precisionlint: a static linter and advisor for mixed-precision training in PyTorch."""

__version__ = "0.1.0"
