"""Run the per-file work over several processes while keeping the output order deterministic."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Below this many files a pool costs more (process start, pickling) than it saves.
MIN_FILES_FOR_POOL = 200


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _strip(result: Any) -> Any:
    # Parsed documents stay in the worker: only findings travel back.
    if getattr(result, "document", None) is not None:
        result.document = None
    return result


def _work(args: tuple[Callable[..., Any], Any, Any]) -> Any:
    func, item, options = args
    return _strip(func(item, options))


def map_ordered(func: Callable[[T, Any], R], items: Sequence[T], options: Any, jobs: int) -> list[R]:
    if jobs <= 1 or len(items) < MIN_FILES_FOR_POOL:
        return [func(item, options) for item in items]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    try:
        context = multiprocessing.get_context("fork")
    except ValueError:  # no fork on this platform
        return [func(item, options) for item in items]
    chunksize = max(8, len(items) // (jobs * 8))
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        return list(pool.map(_work, [(func, item, options) for item in items], chunksize=chunksize))
