"""Reading a file the user did not name (a pin file, a linked config, a configuration found by walking up, a cache
entry, the file advise is to change): a regular file only, and never more than a limit.

A repository can commit a symbolic link named `requirements.txt` that points at /dev/zero, or create a FIFO
named `pyproject.toml`: a plain `open().read()` would then read without end (and hold Ctrl-C off while the C
read runs) or block forever. Here the file is opened non-blocking (opening a FIFO returns at once), what was
opened is checked to be a regular file, and at most `limit` bytes are read: a longer file is an error, never a
partial read taken for the whole.

Errors are OSError subclasses whose strerror says what is wrong, so callers that already handle an unreadable
file (`except OSError`) handle these too.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat

_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_CHUNK = 1 << 20


class NotRegularFile(OSError):
    """The path names a FIFO, a device, a socket or a directory (perhaps through a symbolic link)."""


class TooLarge(OSError):
    """The file holds more bytes than the caller's limit."""


def why_not_regular(mode: int) -> str | None:
    """None for a regular file, else what the file is, in words for the user."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISFIFO(mode):
        return "is a FIFO (named pipe), not a regular file"
    if stat.S_ISSOCK(mode):
        return "is a socket, not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is a device, not a regular file"
    return "not a regular file"


def read_bytes(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file at `path` (symbolic links followed), at most `limit` of them. Raises
    NotRegularFile, TooLarge, or the OSError of opening or reading."""
    fd = os.open(path, _FLAGS)
    try:
        return read_descriptor(fd, limit)
    finally:
        os.close(fd)


def read_descriptor(fd: int, limit: int) -> bytes:
    """As read_bytes, from an open descriptor (read from its current position)."""
    info = os.fstat(fd)
    why = why_not_regular(info.st_mode)
    if why is not None:
        raise NotRegularFile(errno.EINVAL, why)
    if info.st_size > limit:
        raise TooLarge(errno.EFBIG, f"is {info.st_size:,} bytes, over the {limit:,}-byte limit")
    chunks = []
    remaining = limit + 1  # one more: a file that grew past the limit since fstat is caught
    while remaining > 0:
        chunk = os.read(fd, min(remaining, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    data = b"".join(chunks)
    if len(data) > limit:
        raise TooLarge(errno.EFBIG, f"is over the {limit:,}-byte limit")
    return data


def read_text(path: str | os.PathLike[str], limit: int, errors: str = "strict") -> str:
    """The UTF-8 text of the regular file at `path` (a leading BOM dropped), read as read_bytes reads it.
    Universal newlines are not applied: the text is the file's."""
    data = read_bytes(path, limit)
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    return data.decode("utf-8", errors)


def is_regular_file(path: str | os.PathLike[str]) -> bool:
    """Whether `path` names a regular file (symbolic links followed); False when it cannot be stat'ed."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
