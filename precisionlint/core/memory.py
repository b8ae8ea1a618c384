"""Telling a memory limit from a bug.

Under a limit on the process's memory (`ulimit -v`, RLIMIT_AS; a container's), the failure does not always come
as a MemoryError. Measured with `precisionlint check` on the example project under limits from 14 to 24 MB in
steps of 128 kB (CPython 3.11, Linux):
- MemoryError, anywhere (an import, a parser, a rule);
- ImportError "libz.so.1: failed to map segment from shared object" when an extension module is loaded;
- SystemError "<built-in function compile> returned NULL without setting an exception" and ValueError "field
  'target' is required for AnnAssign" while a module is compiled on import (CPython's compiler loses the
  MemoryError on its way out);
- SystemError "error return without exception set" when a shared library cannot be mapped on first import (at
  20 MB, a third of the runs: the failed mapping is larger than the margin below).
The first two say so themselves; a SystemError is CPython's own failure, which under an address-space limit is
the limit's doing. The others are told by the process itself: it runs under an address-space limit and its
address space is close to it. Each of these is reported as running out of memory, with the
limit to raise, never as a bug in precisionlint.
"""

from __future__ import annotations

import errno
import os
import sys

# How close to the limit the address space must be for an unexplained error to be taken for the limit's doing:
# the allocation that failed was freed as the error unwound, so the process is below the limit again, by at
# most what that allocation asked for (a module's code objects, a parser's buffers: a few MB).
_NEAR = 8 << 20


def ran_out_of_memory(exc: BaseException) -> bool:
    """Whether `exc` is the doing of a memory limit rather than a bug (see the module docstring)."""
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, OSError) and exc.errno == errno.ENOMEM:
        return True
    if isinstance(exc, ImportError) and any(
            words in str(exc) for words in ("failed to map segment", "Cannot allocate memory")):
        return True
    if isinstance(exc, SystemError) and address_space_limited(unknown=False):
        # CPython's own failure: a C function that failed without saying why ("error return without exception
        # set"). Under an address-space limit that is the limit's doing, however far below it the process is
        # again: the mapping that failed (a shared library's, loaded on first import) can be larger than _NEAR.
        return True
    return near_the_limit()


def address_space_limited(unknown: bool) -> bool:
    """Whether the process may map only so much memory (RLIMIT_AS: `ulimit -v`); `unknown` where that cannot be
    told (no such limit on this platform: False)."""
    try:
        return _address_space_limit() is not None
    except (OSError, ValueError, MemoryError):
        return unknown


def near_the_limit() -> bool:
    """The process has an address-space limit and uses all of it but _NEAR. False where this cannot be told
    (no limit, no /proc)."""
    try:
        limit = _address_space_limit()
        if limit is None:
            return False
        with open("/proc/self/statm", "rb") as statm:
            size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, MemoryError):
        return False
    return size + _NEAR >= limit


def _address_space_limit() -> int | None:
    """RLIMIT_AS's soft limit in bytes, None where there is none (or no such limit on this platform). Raises
    OSError or ValueError where it cannot be read."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return None
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    return None if limit == resource.RLIM_INFINITY else limit
