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


def program() -> None:
    """The console script and `python -m precisionlint`: main(), and a one-file check ends without the
    interpreter's teardown (_exit_without_teardown). main() itself ends every run with SystemExit, for a caller
    in the same process."""
    global _ENDS_PROCESS
    _ENDS_PROCESS = True
    try:
        main()
    except SystemExit as done:
        if _ONE_FILE_RUN and isinstance(done.code, int):
            _exit_without_teardown(done.code)  # returns only where it cannot
        raise


# Whether this process's command line is a check of one file (set by _main): what program() may end at once.
_ONE_FILE_RUN = False
# Whether main() was called by program(), which ends a one-file check without the interpreter's teardown.
_ENDS_PROCESS = False


def main() -> None:
    """A memory limit met anywhere, also while importing the modules of a run (where it
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
        global _ONE_FILE_RUN
        _ONE_FILE_RUN = values is not None and _one_file(values["paths"])
        if not _ONE_FILE_RUN:
            gc.enable()
        elif _ENDS_PROCESS and not (values is not None and (values["fix"] or values["diff"] or values["add_noqa"])):
            # The file's parsed tree is freed with the process, not before (program()). Not where the file is
            # checked again after fixes or comments are applied: each check's tree would be kept.
            from precisionlint.engine.results import keep_until_exit

            keep_until_exit()
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
                _end_if_out_of_memory(check_command.EXIT_ERROR)
                sys.exit(check_command.EXIT_ERROR)
            else:
                _end_if_out_of_memory(code)
                # The run is over: what is left is the interpreter's teardown, whose garbage collections walk
                # every object still alive (a cache's entries, the findings): about a tenth of a warm run over
                # a large tree. Frozen objects are not walked; they are still freed, and atexit still runs.
                gc.freeze()
                sys.exit(code)
    from precisionlint.cli.commands import main as click_main

    click_main()


def _end_if_out_of_memory(code: int) -> None:
    """Where the run has said it ran out of memory, end now: the teardown, under the same limit, can print a
    `MemoryError` line for each object it fails to free, after the one line said (as main()'s own handler ends)."""
    from precisionlint.cli import check_command

    if check_command.said_out_of_memory():
        os._exit(code)


def _exit_without_teardown(code: int) -> None:
    """End a one-file check without the interpreter's teardown, which frees one by one every object of the hundred
    modules the run imported: 5 million instructions, more than checking a small file takes (mypy ends its runs
    so too). What a normal exit does before the teardown is done first, in its order: the exit functions (atexit:
    a coverage tool's, a test's probe), then the standard streams are flushed; every file the run wrote it has
    closed. Where one of them cannot be done as at a normal exit, this returns and the exit is a normal one."""
    import atexit

    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)  # CPython's, as a normal exit runs them
    if run_exit_functions is None or _threads_to_wait_for():
        return
    run_exit_functions()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):  # a closed pipe or stream: the normal exit's own flush says so, as always
        return
    os._exit(code)


def _threads_to_wait_for() -> bool:
    """Whether a normal exit would first wait for another thread or run threading's own exit functions (which
    it does before atexit's). Where threading is imported (a site .pth can import it at every start) but the main
    thread is the only one and no such function is registered, there is nothing to wait for."""
    threading = sys.modules.get("threading")
    if threading is None:
        return False
    return threading.active_count() > 1 or bool(getattr(threading, "_threading_atexits", True))


def _one_file(paths: tuple[str, ...]) -> bool:
    """Whether the command line names one regular file to check (not standard input, not a folder)."""
    return len(paths) == 1 and paths[0] != "-" and os.path.isfile(paths[0])


if __name__ == "__main__":
    main()
