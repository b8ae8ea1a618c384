"""The console script. A plain `precisionlint check ...` runs without importing click (check_options.py says
why and how); everything else, and anything the fast path does not fully understand, goes to the click CLI."""

from __future__ import annotations

import gc
import os
import sys

from precisionlint.core.memory import ran_out_of_memory  # at import: importing it when memory runs out may fail

# At import, not in main(): a signal that lands while main() imports it would print a traceback.
from precisionlint.core.signals import signal


def _stop_quietly(signum: int, frame: object) -> None:
    os.write(2, b"precisionlint: error: interrupted\n" if signum == 2 else b"precisionlint: error: terminated\n")
    os._exit(128 + signum)


def _quiet_until_installed() -> None:
    """Until the run installs its own handlers (precisionlint.core.interrupts), a Ctrl-C ends the process with one
    line and exit 130, not a traceback from whatever module was being imported at that moment."""
    for signum in (signal.SIGINT, getattr(signal, "SIGHUP", None), getattr(signal, "SIGQUIT", None)):
        if signum is None:
            continue
        try:
            if signal.getsignal(signum) in (signal.default_int_handler, signal.SIG_DFL):
                signal.signal(signum, _stop_quietly)
        except (ValueError, OSError):  # not the main thread, or not this platform's signal
            pass


# Made before any memory runs out: saying so then must not need any (check_command.OUT_OF_MEMORY's words).
_OUT_OF_MEMORY = (b"precisionlint: error: out of memory: this run needs more memory than the process may use (a "
                  b"memory limit such as `ulimit -v`?); check fewer files at a time or allow more memory\n")


def main() -> None:
    """The console script: a memory limit met anywhere, also while importing the modules of a run (where it
    need not come as a MemoryError: precisionlint.core.memory), is one line and exit code 2, never a traceback
    (the runs report it themselves where they can: check_command.internal_error)."""
    try:
        _main()
    except Exception as exc:
        if not ran_out_of_memory(exc):
            raise
        try:
            os.write(2, _OUT_OF_MEMORY)
        finally:
            os._exit(2)


def _main() -> None:
    _quiet_until_installed()
    argv = sys.argv[1:]
    if argv[:1] == ["check"]:
        # Start-up is mostly imports, and the cyclic garbage collector walks every object they have made (functions,
        # classes, tables) again and again while they are made, none of which is garbage: about a tenth of a
        # one-file check. So it is off until the command line shows a run of more than one file, whose per-file
        # analyses need it between files (the engine turns it off within each file's analysis on its own).
        gc.disable()
        from precisionlint.cli.check_options import parse_fast

        values = parse_fast(argv[1:])
        if values is None or not _one_file(values["paths"]):
            gc.enable()
        if values is not None:
            from precisionlint.cli import check_command
            from precisionlint.core.interrupts import Terminated
            from precisionlint.run.config import UsageError

            try:
                code = check_command.execute(values)
            except UsageError:
                pass  # nothing was printed yet: click says it, with the usage line
            except (KeyboardInterrupt, Terminated) as exc:
                sys.exit(check_command.interrupted(exc))
            except BrokenPipeError:
                sys.exit(check_command.EXIT_ERROR)
            except Exception as exc:
                check_command.internal_error(exc)
                sys.exit(check_command.EXIT_ERROR)
            else:
                # The run is over: what is left is the interpreter's teardown, whose garbage collections walk
                # every object still alive (a cache's entries, the findings): about a tenth of a warm run over
                # a large tree. Frozen objects are not walked; they are still freed, and atexit still runs.
                gc.freeze()
                sys.exit(code)
    from precisionlint.cli.commands import main as click_main

    click_main()


def _one_file(paths: tuple[str, ...]) -> bool:
    """Whether the command line names one regular file to check (not standard input, not a folder)."""
    return len(paths) == 1 and paths[0] != "-" and os.path.isfile(paths[0])


if __name__ == "__main__":
    main()
