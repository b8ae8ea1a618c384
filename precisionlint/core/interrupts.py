"""Ctrl-C, SIGTERM and the death of the parent: a run stops promptly, says so in one line, and leaves nothing
behind.

- SIGINT raises KeyboardInterrupt and SIGTERM raises Terminated in the main thread; the command turns them into
  exit codes 130 and 143 (128 + the signal number, as shells report a process killed by the signal).
- While a fixed file is being written (`deferred()`), a signal is held back and raised as soon as the write is
  complete, so an interrupted `--fix` leaves each file either as it was or fully fixed, and no temporary file.
- A second signal while the first is still being handled (workers being stopped, output being flushed) ends
  the process at once, so a second Ctrl-C never waits on anything.
- Pool workers ignore SIGINT (the terminal sends it to the whole process group; the parent decides), are
  killed by the parent when it stops early (`stop_all`), and ask the kernel to kill them when the parent
  dies, even by SIGKILL or the OOM killer (`die_with_parent`: PR_SET_PDEATHSIG on Linux, a watching thread
  elsewhere), so that no worker outlives the run holding its stdout open.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.core.signals import signal  # the signal module's functions, without its enums

if TYPE_CHECKING:
    from typing import Any

EXIT_SIGINT = 128 + 2
EXIT_SIGTERM = 128 + 15


class Terminated(BaseException):  # noqa: N818 - named like KeyboardInterrupt, its SIGTERM counterpart
    """SIGTERM (or SIGHUP, SIGQUIT) arrived. A BaseException, as KeyboardInterrupt is, so that no `except
    Exception` swallows it. `signum` says which."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(signum)
        self.signum = signum


class _State:
    depth = 0  # nesting of deferred() sections
    pending: int | None = None  # a signal that arrived inside one
    received = 0  # signals handled so far


def _handle(signum: int, frame: object) -> None:
    _State.received += 1
    if _State.depth:
        if _State.pending is None:
            _State.pending = signum
        return
    if _State.received > 1:
        # The first signal is still being handled: leave now, without waiting for anything.
        _flush_quietly()
        os._exit(exit_code_for(signum))
    _raise(signum)


def _raise(signum: int) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def exit_code_for(signum: int) -> int:
    """128 + the signal's number, as a shell reports a process the signal killed (130, 143, 129 for SIGHUP)."""
    return 128 + int(signum)


# The signals that end a run: Ctrl-C, kill, a closed terminal (SIGHUP), Ctrl-\ (SIGQUIT, which would also dump
# core). Each is held back during a write like the others, so none leaves a temporary file or a half-written one.
_STOPPING = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
                  if hasattr(signal, name))


def install() -> None:
    """Handle SIGINT and SIGTERM in this process (main thread only). A signal the parent set to be ignored
    (a shell's background job ignores SIGINT) stays ignored."""
    threading = sys.modules.get("threading")  # not imported unless a thread was started through it
    if threading is not None and threading.current_thread() is not threading.main_thread():
        return
    _State.received = 0  # a new run (a host may run several in one process)
    _State.pending = None
    for signum in _STOPPING:
        try:
            if signal.getsignal(signum) == signal.SIG_IGN:
                continue
            signal.signal(signum, _handle)
        except (ValueError, OSError):  # pragma: no cover - not a platform with this signal
            pass


@contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT, SIGTERM, SIGHUP and SIGQUIT back for the duration of the block (a file write that must
    complete or be undone); the held signal is raised when the block ends."""
    _State.depth += 1
    try:
        yield
    finally:
        _State.depth -= 1
        if _State.depth == 0 and _State.pending is not None:
            signum, _State.pending = _State.pending, None
            _raise(signum)


def _flush_quietly() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass


# ---------------------------------------------------------------------------------------------------------------
# Pool workers
# ---------------------------------------------------------------------------------------------------------------

_PARENT = {"pid": 0}
_POOLS: list[Any] = []  # worker pools started by this run (each has a stop()), stopped by stop_all()


def track(pool: Any) -> None:
    _POOLS.append(pool)


def untrack(pool: Any) -> None:
    if pool in _POOLS:
        _POOLS.remove(pool)


def stop_all() -> None:
    """Kill the workers of every pool this process started (the interrupt may have landed outside the pool's
    own code)."""
    while _POOLS:
        _POOLS.pop().stop()


def before_fork() -> None:
    """Call in the parent before workers fork: they compare their parent with this to notice its death."""
    _PARENT["pid"] = os.getpid()


def die_with_parent() -> None:
    """In a worker: ignore SIGINT, SIGHUP and SIGQUIT (a terminal sends them to the whole group; the parent
    handles them), and end when the parent ends, however it ends."""
    for signum in _STOPPING:
        signal.signal(signum, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    parent = _PARENT["pid"] or os.getppid()
    if not _kernel_kills_orphan():
        _watch_parent(parent)
    if os.getppid() != parent:  # the parent died before the request above took effect
        os._exit(1)


def _kernel_kills_orphan() -> bool:
    """Ask Linux to SIGKILL this process when the thread that forked it ends (prctl PR_SET_PDEATHSIG). The
    pool forks from the main thread, so that is when the parent process ends."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        return bool(libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    import threading

    def watch() -> None:
        import time

        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
