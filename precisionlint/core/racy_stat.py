"""Whether a file's stat can show its next write: the "racy git" problem, for the cache's file index and for the
context keys of results that read other files (pins, linked configs).

A file whose modification or change time is this close to the run's start may be written again within the same
timestamp tick after it was read, and its stat could not show that write: it is not trusted (racy git). File
systems keep times to the nanosecond (ext4, XFS, Btrfs, APFS, tmpfs; Linux stamps them from a clock that lags
by up to one scheduler tick, 10 ms at most), 10 ms (exFAT), 1 s (HFS+, ext3) or 2 s (FAT). A time that is a
whole second may come from a coarse one (or from an archive's extraction, whose files are old anyway): then
the wider margin holds.
"""

from __future__ import annotations

import os

RACY_SECONDS = 0.2
COARSE_RACY_SECONDS = 2.0

# In a context key: a file the findings read was changed too recently for its stat to show a further change
# (precisionlint.project.file_signature). Such results are not stored (precisionlint.run.cache).
UNSETTLED = "~unsettled"


def settled(info: os.stat_result, now_ns: int) -> bool:
    """Whether every write to this file after `now_ns` must change what stat says of it (its times moved)."""
    coarse = info.st_mtime_ns % 1_000_000_000 == 0 or info.st_ctime_ns % 1_000_000_000 == 0
    margin = COARSE_RACY_SECONDS if coarse else RACY_SECONDS
    return max(info.st_mtime_ns, info.st_ctime_ns) < now_ns - int(margin * 1e9)
