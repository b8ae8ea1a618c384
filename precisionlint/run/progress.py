"""A progress bar on stderr for long `check` runs, and complete silence otherwise.

The bar is drawn only when the stream is a terminal (never in pre-commit, CI logs or pipes, where it would be
noise) and only once the run has lasted `delay` seconds, so a quick run prints nothing at all. It redraws at
most every `interval` seconds, and erases itself when the run ends so that the findings start on a clean line.

No dependency: click has a progress bar too, but importing it costs more than this module, and `check` runs on
every commit.
"""

from __future__ import annotations

import os
import sys
import time

from precisionlint.core.light_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TextIO

DELAY = 1.0  # seconds before the bar first appears
INTERVAL = 0.1  # seconds between redraws


class Progress:
    """Counts files done; draws `[#####.....]  120/1000 files` once the run is slow enough to need it."""

    def __init__(
        self,
        total: int,
        stream: TextIO,
        *,
        delay: float | None = None,
        interval: float | None = None,
        width: int | None = None,
        clock=time.monotonic,  # type: ignore[no-untyped-def]
    ) -> None:
        self.total = max(total, 0)
        self.done = 0
        self.stream = stream
        self.delay = DELAY if delay is None else delay
        self.interval = INTERVAL if interval is None else interval
        self.clock = clock
        self.started = clock()
        self.last_draw: float | None = None
        self.shown = False
        self.width = width

    def advance(self, count: int = 1) -> None:
        self.done = min(self.done + count, self.total)
        now = self.clock()
        if now - self.started < self.delay:
            return
        if self.last_draw is not None and now - self.last_draw < self.interval and self.done < self.total:
            return
        self.last_draw = now
        self._draw()

    def _columns(self) -> int:
        if self.width is not None:
            return self.width
        try:
            return os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            return 80

    def _draw(self) -> None:
        # The widest form that fits, never a word cut in half ("12/300 fil"): the bar shrinks, then goes, then
        # the word "files"; the last column stays free so that the terminal does not wrap.
        room = self._columns() - 1
        numbers = f"{self.done:>{len(str(self.total))}}/{self.total}"
        line = ""
        for counter in (f"{numbers} files", numbers):
            bar_width = min(40, room - len(counter) - 3)
            if bar_width >= 5:
                filled = bar_width * self.done // self.total if self.total else bar_width
                line = f"[{'#' * filled}{'.' * (bar_width - filled)}] {counter}"
                break
        else:
            line = next((c for c in (f"{numbers} files", numbers) if len(c) <= room), "")
        if not line:
            return  # a terminal too narrow for even the numbers
        self._write(f"\r{line}")
        self.shown = True

    def close(self) -> None:
        """Erase the bar (if it was ever drawn) so that what follows starts at the beginning of a clean line."""
        if self.shown:
            self._write("\r\x1b[2K")
            self.shown = False

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken terminal must not stop the run
            pass

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class NoProgress:
    """The silent stand-in: same interface, draws nothing."""

    total = 0
    done = 0
    shown = False

    def advance(self, count: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> NoProgress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        pass


def is_terminal(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def progress_for(total: int, enabled: bool = True, stream: TextIO | None = None) -> Progress | NoProgress:
    """A bar on `stream` (stderr by default) when enabled and that stream is a terminal; otherwise silence.
    TERM=dumb (editors' terminals, some CI) counts as no terminal."""
    stream = sys.stderr if stream is None else stream
    if not enabled or total <= 0 or not is_terminal(stream) or os.environ.get("TERM") == "dumb":
        return NoProgress()
    return Progress(total, stream)
