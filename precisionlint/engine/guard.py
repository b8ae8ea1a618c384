"""Guards around one file's analysis: a deeper recursion limit and a CPU-time limit."""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable

from precisionlint.core.light_typing import TYPE_CHECKING
from precisionlint.sources import Limits

if TYPE_CHECKING:
    from typing import Any, ParamSpec, TypeVar

    _P = ParamSpec("_P")
    _T = TypeVar("_T")


class TimeLimitExceeded(BaseException):
    """One file took more than max-parse-time CPU seconds. A BaseException so that the loaders' and rules'
    `except Exception` cannot swallow it."""


# Python allows 1,000 frames by default. Parsers and the script model recurse once or twice per nesting level,
# so a 300-term `a + b + ...` or a long elif chain would fail at that limit. Python 3.11 runs Python-to-Python
# calls without growing the C stack, and C-level recursion (the parsers) has its own guards, so a deeper limit
# is safe on the main thread's stack (8 MB on Linux and macOS): measured, 8,000 frames of the worst case (every
# frame through C) use under 3 MB. Other threads may have small stacks, so they keep the default.
DEEP_RECURSION_LIMIT = 8000
_TIMER_STATE = {"armed": False}


def _on_timer(signum: int, frame: object) -> None:
    if _TIMER_STATE["armed"]:
        raise TimeLimitExceeded()


class Guard:
    __slots__ = ("limits", "old_limit", "old_handler", "timed", "collecting")

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.old_limit = 0
        self.old_handler: Any = None
        self.timed = False
        self.collecting = False

    def enter(self) -> None:
        threading = sys.modules.get("threading")  # not imported: no thread was started through it
        main = threading is None or threading.current_thread() is threading.main_thread()
        self.old_limit = sys.getrecursionlimit()
        if main and self.old_limit < DEEP_RECURSION_LIMIT:
            sys.setrecursionlimit(DEEP_RECURSION_LIMIT)
        seconds = self.limits.max_parse_time
        if main and seconds and seconds > 0:
            self._arm(seconds)
        # A parse allocates millions of objects that live until the file is done; the cyclic collector would
        # scan them again and again (half the time of a large file). They hold almost no cycles, so collect
        # once, after the file, instead.
        self.collecting = gc.isenabled()
        if self.collecting:
            gc.disable()

    def _arm(self, seconds: float) -> None:
        # A CPU-time timer (ITIMER_VIRTUAL, SIGVTALRM): unaffected by a loaded machine or a suspended laptop,
        # and a signal that nothing else in a linter's process uses. Only where it is free: POSIX, the main
        # thread, and no handler installed by someone else (a host program embedding the engine).
        from precisionlint.core.signals import signal

        if not hasattr(signal, "setitimer") or not hasattr(signal, "SIGVTALRM"):
            return
        if _TIMER_STATE["armed"]:
            return  # inside an outer guard (a file being fixed): its timer covers this too
        current = signal.getsignal(signal.SIGVTALRM)
        if current not in (signal.SIG_DFL, None, _on_timer):
            return
        self.old_handler = signal.signal(signal.SIGVTALRM, _on_timer)
        self.timed = True
        _TIMER_STATE["armed"] = True
        try:
            # Fire again every 50 ms after the first expiry, in case a library's bare `except:` ate the first.
            signal.setitimer(signal.ITIMER_VIRTUAL, seconds, 0.05)
        except (OverflowError, ValueError, OSError):  # an absurd limit: run without one
            _TIMER_STATE["armed"] = False

    def exit(self) -> None:
        """Undo enter(); idempotent, so that it can be finished if the timer interrupts it."""
        if self.timed:
            _TIMER_STATE["armed"] = False  # first: from here on the handler does nothing
            from precisionlint.core.signals import signal

            signal.setitimer(signal.ITIMER_VIRTUAL, 0, 0)
            signal.signal(signal.SIGVTALRM, self.old_handler if self.old_handler is not None else signal.SIG_DFL)
            self.timed = False
        if self.collecting:
            gc.enable()
            self.collecting = False
        if self.old_limit and sys.getrecursionlimit() != self.old_limit:
            sys.setrecursionlimit(self.old_limit)


def within_time_limit(limits: Limits, work: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T | None:
    """`work(*args, **kwargs)` (which never returns None) under a Guard (the deeper recursion limit, the CPU-time
    limit); None when it ran over max-parse-time, and the caller reports that. The process state is restored
    either way, also when the timer fires while it is being restored. Checking a file (engine.check) and fixing
    it (fix.apply) both run under it."""
    guard = Guard(limits)
    try:
        try:
            guard.enter()
            return work(*args, **kwargs)
        finally:
            guard.exit()
    except TimeLimitExceeded:
        while True:  # the timer may have fired inside exit(): finish restoring the process state
            try:
                guard.exit()
                break
            except TimeLimitExceeded:
                continue
    return None
