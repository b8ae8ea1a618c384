"""The interpreter's signal functions and numbers, without importing the `signal` module.

`signal` is a thin wrapper around `_signal`, the interpreter's own module (built in, and loaded before any code
runs), that makes three enum classes when imported: about 1 ms, 3% of a one-file check, which uses only
getsignal, signal, setitimer and the numbers. Those are the same functions here; the numbers and the handlers
that getsignal and signal return are plain ints instead of enum members equal to them (a handler is called with
a plain int either way).
"""

try:
    import _signal as signal
except ImportError:  # an interpreter without it
    import signal  # type: ignore[no-redef]

__all__ = ["signal"]
