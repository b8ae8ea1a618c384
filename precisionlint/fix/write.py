"""Writing a changed file (`check --fix`, `check --add-noqa`, `advise --write`) without ever damaging one.

Every write of a user's file goes through write_fixed:

- The bytes written are the bytes verified: the caller passes the text that passed verification, and the
  bytes are checked to decode back to exactly that text, in the file's own encoding (a UTF-8 BOM kept, a
  Python coding declaration such as latin-1 honoured), before anything is touched (encode_fixed).
- A new file is written next to the original (same directory, so same file system), flushed to disk and given
  the original's mode and owner before the original is even looked at again, so that the moment between the
  last check of the original and its replacement is as short as a rename.
- The original must still hold exactly the bytes the change was computed from, checked under an exclusive lock
  on the file (where the platform has flock), so two precisionlint runs cannot overwrite each other with a
  stale result (FileChanged: the caller computes the change again on the new content).
- Another program's save always wins. On Linux a read lease on the original tells whether any program has it
  open for writing (an editor in the middle of a save, a program rewriting it in place: the file is left alone)
  or opens it for writing while precisionlint replaces it. The replacement is an atomic exchange (renameat2
  RENAME_EXCHANGE), which keeps the original under the temporary name; after it, the original is checked once
  more (same file, same bytes, nobody opened it for writing), and if anything changed the exchange is undone,
  so the other program's file is back in place and untouched (SaveWon: the user is told which file was left
  alone). Where the exchange is not available, a plain atomic rename is used after the same checks.
- A symbolic link is followed: the file it points to is changed and the link stays a link.
- A file with several hard links is refused (a rename would give this name a new file and leave the other
  names with the old content); so is a read-only file (no write permission bit), as ruff and black refuse
  them: the user made it read-only on purpose; so is anything but a regular file (a FIFO would block).
- SIGINT, SIGTERM, SIGHUP and SIGQUIT are held back while the original is being replaced
  (precisionlint.core.interrupts.deferred), and the temporary file never outlives a failure or a signal.
"""

from __future__ import annotations

import codecs
import errno
import os
import stat
import sys
import tempfile
from typing import Any

from precisionlint.core.bounded_read import why_not_regular
from precisionlint.core.interrupts import deferred


class WriteRefused(Exception):
    """The file is not written; the message says why, in words for the user."""


class FileChanged(Exception):
    """The file no longer holds the bytes the change was computed from (another program changed it): compute
    the change again on what it holds now."""


class SaveWon(WriteRefused):
    """Another program saved the file while it was being replaced: its save was kept and nothing was written."""

    def __init__(self) -> None:
        super().__init__("changed by another program while being written; left as that program saved it "
                         "(run again to change the new content)")


class FileBusy(FileChanged):
    """Another program has the file open for writing: it is being saved or rewritten right now."""


def encode_fixed(text: str, bom: bool, fmt: str | None = None) -> bytes:
    """The bytes of a fixed text: UTF-8 with the BOM the original had, or for a Python file with a coding
    declaration (PEP 263), that encoding. Raises WriteRefused when they would not read back as `text` (the
    verified text must be the written text)."""
    from precisionlint.sources import SourceError
    from precisionlint.sources.decoding import cookie_encoding, decode_source

    try:
        declared = cookie_encoding(text[:1024]) if fmt == "python" and not bom else None
        data = (codecs.BOM_UTF8 if bom else b"") + text.encode(declared or "utf-8")
        same = decode_source(data, "", fmt) == text  # type: ignore[arg-type]
    except (SourceError, UnicodeError, LookupError):
        same = False
    if not same:
        raise WriteRefused("the changed text would not read back as verified; not written")
    return data


def write_fixed(path: str, expected: bytes, data: bytes, done: str = "fixed") -> None:
    """Replace the file at `path` (through symbolic links), which must still hold `expected`, with `data`.
    Raises WriteRefused (SaveWon) with the reason for the user, FileChanged (FileBusy) when the change must
    be computed again, OSError when the new file cannot be written (the original is then untouched). `done`:
    what the change does, for the messages ("fixed", "changed")."""
    verb = {"fixed": "fix"}.get(done, "change")
    target = os.path.realpath(path)
    try:
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise FileChanged() from None
    temporary: str | None = None
    lease = _Lease(fd)
    try:
        info = os.fstat(fd)
        why = why_not_regular(info.st_mode)
        if why is not None:
            raise WriteRefused(f"{why}; not written")
        if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
            raise WriteRefused(f"read-only file; not {done} (make it writable to {verb} it)")
        if info.st_nlink > 1:
            raise WriteRefused(
                f"has {info.st_nlink} hard links; not {done}, so that its other names do not keep the old "
                "content (use --diff and apply the change through one name)"
            )
        with deferred():  # a signal from here on waits until the temporary file is gone or in place
            temporary = _prepared(target, data, info)
        _lock(fd)  # waiting for another run's write stays interruptible: signals are held back only below
        lease.take()
        with deferred():
            try:
                if _read_all(fd, len(expected) + 1) != expected or _inode(target) != (info.st_dev, info.st_ino):
                    raise FileChanged()
                if lease.broken():
                    raise FileBusy()
                ours = _inode(temporary)
                if _exchange(temporary, target):
                    if _original_untouched(fd, expected, info, lease) and _inode(temporary) == _ident(info):
                        return  # the original, now under the temporary name, is removed below
                    # Another program saved meanwhile: give it its file back (unless it already replaced ours).
                    if _inode(target) == ours:
                        _exchange(temporary, target)
                    raise SaveWon()
                os.replace(temporary, target)
                temporary = None
                if not _original_untouched(fd, expected, info, lease):
                    _restore(fd, target, info)
                    raise SaveWon()
            finally:
                if temporary is not None:
                    _unlink(temporary)
                    temporary = None
    finally:
        if temporary is not None:
            _unlink(temporary)
        lease.release()
        os.close(fd)  # also releases the lock, after the new file is in place


def rewrite(path: str, expected: bytes, text: str, fmt: str | None, done: str = "changed") -> None:
    """Replace the file at `path`, read as `expected`, with `text` in the file's own encoding (its BOM, a Python
    coding declaration): encode_fixed, then write_fixed."""
    write_fixed(path, expected, encode_fixed(text, expected.startswith(codecs.BOM_UTF8), fmt), done)


def _prepared(target: str, data: bytes, info: os.stat_result | None) -> str:
    """A temporary file beside `target` holding `data`, on disk, with the original's mode and owner."""
    directory, name = os.path.split(target)
    handle, temporary = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory or ".")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        mode = stat.S_IMODE(info.st_mode) if info is not None else 0o666 & ~_umask()
        os.chmod(temporary, mode)
        if info is not None and hasattr(os, "chown"):
            try:
                os.chown(temporary, info.st_uid, info.st_gid)
            except OSError:
                pass  # only root may give a file away; the mode is what matters for reading it
    except BaseException:
        _unlink(temporary)
        raise
    return temporary


def _original_untouched(fd: int, expected: bytes, info: os.stat_result, lease: _Lease) -> bool:
    """After the swap: nobody opened the original for writing, and it still holds exactly `expected`."""
    if lease.broken():
        return False
    if os.fstat(fd).st_size != len(expected):
        return False
    os.lseek(fd, 0, os.SEEK_SET)
    return _read_all(fd, len(expected) + 1) == expected


def _restore(fd: int, target: str, info: os.stat_result) -> None:
    """Without an atomic exchange: put what the other program wrote into the original back in place."""
    os.lseek(fd, 0, os.SEEK_SET)
    saved = _read_all(fd, 1 << 40)
    temporary = _prepared(target, saved, info)
    try:
        os.replace(temporary, target)
    except BaseException:
        _unlink(temporary)
        raise


class _Lease:
    """A Linux read lease on the original: taking it fails while any program has the file open for writing,
    and it is broken the moment one opens it for writing. Elsewhere (or on a file system without leases, or
    a file of another owner) it is absent and the content checks alone decide."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.held = False
        self.previous: Any = None

    def take(self) -> None:
        if not sys.platform.startswith("linux"):
            return
        import fcntl
        import signal
        import threading

        if threading.current_thread() is not threading.main_thread():
            return  # the lease-break signal can only be ignored from the main thread
        # A lease break is announced with SIGIO, whose default action ends the process: the state of the
        # lease is read instead (F_GETLEASE).
        self.previous = signal.signal(signal.SIGIO, signal.SIG_IGN)
        try:
            fcntl.fcntl(self.fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
        except OSError as exc:
            signal.signal(signal.SIGIO, self.previous)
            self.previous = None
            if exc.errno == errno.EAGAIN:
                raise FileBusy() from None  # open for writing by another program right now
            return  # no leases here (another owner, a network file system): the content checks decide
        self.held = True

    def broken(self) -> bool:
        if not self.held:
            return False
        import fcntl

        try:
            return fcntl.fcntl(self.fd, fcntl.F_GETLEASE) != fcntl.F_RDLCK
        except OSError:
            return True

    def release(self) -> None:
        if self.held:
            import fcntl

            try:
                fcntl.fcntl(self.fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
            except OSError:
                pass
            self.held = False
        if self.previous is not None:
            import signal

            signal.signal(signal.SIGIO, self.previous)
            self.previous = None


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100
_renameat2: list[Any] = []


def _exchange(first: str, second: str) -> bool:
    """Swap two names atomically (Linux renameat2 RENAME_EXCHANGE). False where it is not available."""
    if not sys.platform.startswith("linux"):
        return False
    if not _renameat2:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            function = libc.renameat2
            function.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
            _renameat2.append(function)
        except (OSError, AttributeError):
            _renameat2.append(None)
    function = _renameat2[0]
    if function is None:
        return False
    import ctypes

    if function(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
        _renameat2[0] = None  # this kernel or file system cannot: rename from now on
        return False
    raise OSError(code, os.strerror(code), second)


def _lock(fd: int) -> None:
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no advisory locks; the content check still runs
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        pass  # a file system without locks (some network mounts): the content check still runs


def _read_all(fd: int, limit: int) -> bytes:
    chunks = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def _ident(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def _inode(path: str) -> tuple[int, int] | None:
    try:
        return _ident(os.stat(path))
    except OSError:
        return None


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def write_report(path: str, text: str) -> None:
    """Create or replace an output file the user named (advise --report) with `text` (UTF-8) in one step.
    Anything but a regular file (a FIFO, a device) is refused, as is a read-only one."""
    target = os.path.realpath(path)
    try:
        info: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        info = None
    if info is not None:
        why = why_not_regular(info.st_mode)
        if why is not None:
            raise WriteRefused(f"{why}; not written")
        if not info.st_mode & 0o222 or not os.access(target, os.W_OK):
            raise WriteRefused("read-only file; not written")
    with deferred():
        temporary = _prepared(target, text.encode("utf-8"), info)
        try:
            os.replace(temporary, target)
        except BaseException:
            _unlink(temporary)
            raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
