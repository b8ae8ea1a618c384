"""Honest timing of one matmul: warm up until the speed settles, then time repeated batches.

A GPU that was idle runs its first milliseconds at a low clock and cuBLAS picks its kernel on the first call, so
the first batches are slow. The warm-up times batches until two in a row agree within SETTLE_TOLERANCE (the
clock has settled), bounded by a share of the time; then `repeats` batches are timed, each by one event pair
(Backend.time_batch), and the median and the spread of those batches are kept.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from precisionlint.advise.probe.device import Backend

REPEAT_TARGET_S = 0.05  # one timed batch lasts about this long (enough matmuls that event resolution vanishes)
MAX_INNER = 64
MIN_REPEATS, MAX_REPEATS = 3, 15
SETTLE_TOLERANCE = 0.03  # two consecutive warm-up batches within 3% of each other: the clock has settled
WARMUP_SHARE = 0.3  # at most this share of a format's time goes to the warm-up
MAX_WARMUP_BATCHES = 12


@dataclass(frozen=True)
class Measurement:
    samples_s: tuple[float, ...]  # seconds per call, one value per timed batch
    inner: int
    warmup_batches: int
    settled: bool

    @property
    def median_s(self) -> float:
        return statistics.median(self.samples_s)


def measure(backend: Backend, fn: Callable[[], Any], share_s: float,
            now: Callable[[], float] = time.perf_counter) -> Measurement:
    """Time `fn` on `backend` within about `share_s` seconds of wall time, warm-up included.

    The figures come from the backend's timer (CUDA events on a GPU); the planning (how many calls per batch,
    how many batches fit) uses the wall time of each batch, which is never shorter: for a small matmul on a
    fast GPU the Python launch, not the kernel, takes the time."""
    began = now()
    end = began + share_s
    wall = 0.0

    def batch(inner: int) -> float:
        nonlocal wall
        started = now()
        seconds = backend.time_batch(fn, inner)
        wall = max((now() - started) / inner, seconds, 1e-9)
        return seconds

    with backend.active():
        fn()  # kernel selection, cuBLAS workspace, allocator: not timed
        backend.synchronize()
        estimate = max(batch(1), 1e-9)
        if wall < REPEAT_TARGET_S / 4:  # one call can be dominated by a batch's fixed start-up cost
            estimate = max(min(estimate, batch(4)), 1e-9)
        inner = max(1, min(MAX_INNER, int(REPEAT_TARGET_S / wall)))

        # Warm-up batches until two consecutive ones agree, or the warm-up's share of the time is spent.
        warmup_end = began + share_s * WARMUP_SHARE
        previous = current = estimate
        batches = 0
        settled = False
        while batches < MAX_WARMUP_BATCHES and (batches == 0 or now() + inner * wall < warmup_end):
            current = batch(inner)
            batches += 1
            if batches > 1 and abs(current - previous) <= SETTLE_TOLERANCE * min(current, previous):
                settled = True
                break
            previous = current

        remaining = max(end - now(), 0.0)
        repeats = int(remaining / (inner * wall))
        if repeats < MIN_REPEATS:  # a slow format: fewer calls per batch rather than fewer batches
            inner = max(1, int(remaining / (MIN_REPEATS * wall)))
            repeats = max(1, min(MIN_REPEATS, int(remaining / (inner * wall))))
        repeats = min(repeats, MAX_REPEATS)
        samples: list[float] = []
        for _ in range(repeats):
            if len(samples) >= MIN_REPEATS and now() + inner * wall > end:
                break  # the batches ran slower than planned: keep to the share
            samples.append(backend.time_batch(fn, inner))
    return Measurement(tuple(samples), inner, batches, settled)
