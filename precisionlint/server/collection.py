"""The cyclic garbage collector around the server's checks.

A check of a 2,000-line script makes about 100,000 objects (the tree, the script model) with the collector off
(engine/guard.py). What the server keeps of it (the text, the parsed document for verifying fixes) lives until
a few changes later and holds no reference cycle (tests/test_server_analysis.py), so reference counting frees it
when it is superseded. Yet with the collector on again after the check, the first allocation started a
collection of the youngest generation that walked every one of those objects, and they were walked again as
they aged: about 40% of a change's CPU time (a 2,000-line script, in process: 98 ms median with the collector,
60 ms without).

So the collector stays off for the whole check, and what is alive after it is frozen (gc.freeze: moved to a
generation that collections never walk; a frozen object is still freed by reference counting as soon as nothing
holds it). A cycle made meanwhile elsewhere (the protocol's thread) would be frozen with the rest, so every
SWEEP_EVERY checks the worker unfreezes everything and collects once (about 40 ms over the server's whole heap),
after the check's diagnostics are on their way: no garbage waits longer than that.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

SWEEP_EVERY = 200


class Collector:
    def __init__(self, sweep_every: int = SWEEP_EVERY) -> None:
        self.sweep_every = sweep_every
        self.checks = 0  # since the last sweep

    @contextmanager
    def check(self) -> Iterator[None]:
        """Around one check: no collection during it, and its survivors frozen after it."""
        collecting = gc.isenabled()
        gc.disable()
        try:
            yield
        finally:
            self.checks += 1
            gc.freeze()
            if collecting:
                gc.enable()

    def sweep_due(self) -> bool:
        return self.checks >= self.sweep_every

    def sweep(self) -> None:
        """Collect everything once (what was frozen too), then freeze what is left: the server's long-lived
        state, which later collections need not walk again."""
        self.checks = 0
        gc.unfreeze()
        gc.collect()
        gc.freeze()
