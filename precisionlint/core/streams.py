"""Standard output and error as the environment gives them: closed (`>&-`), full (`/dev/full`), or with an
encoding that cannot spell every file name (`PYTHONIOENCODING=cp1252`). Each is a clear one-line error with
exit code 2, or (for the encoding) output that still works, never an "internal error"."""

from __future__ import annotations

import os
import sys


def prepare() -> str | None:
    """Make the streams safe to write to; the reason the run cannot report anything, or None.

    A file name the output encoding cannot spell is written with backslash escapes (`\\u8bad`, which is also
    valid inside a JSON string) rather than failing the whole report."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:
            continue
        encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
        if encoding not in ("utf8", "utf8sig") and hasattr(stream, "reconfigure"):
            try:
                stream.reconfigure(errors="backslashreplace")
            except (ValueError, OSError, AttributeError):
                pass
    if sys.stdout is None:
        return "standard output is closed: the report cannot be written"
    return None


def write_error(message: str) -> None:
    """One line on stderr, if there is a stderr: its absence must not change the exit code."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(message)
        stream.flush()
    except (OSError, ValueError):
        pass


def describe(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def discard_stdout() -> None:
    """After a failed write: point stdout at the null device, so the interpreter's final flush of what is
    still buffered neither fails again nor prints "Exception ignored"."""
    stream = sys.stdout
    if stream is None:
        return
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        sys.stdout = None  # type: ignore[assignment]
