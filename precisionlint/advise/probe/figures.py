"""How a measured figure is written: to the digits its batches support.

A median of timed batches is only as good as the batches agree. On a busy machine the slowest batch of a format
can take several times the fastest (a CPU run here saw batch spreads of 94% and 423%), and a ratio of two such
medians printed as "14x" claims two digits that the next run contradicts (12x, then 6.1x). So a figure from a
timing whose batches spread more than UNRELIABLE_SPREAD is written with one significant digit, marked
unreliable, and given with the range its batches allow. A percentage of a reference is rounded to the nearest
ten the same way.

Text only: the JSON keeps every figure at full precision, with `reliable` beside it, for tools to judge.
"""

from __future__ import annotations

import math

from precisionlint.advise.probe.results import UNRELIABLE_SPREAD, Timing

RERUN_HINT = "rerun on an idle machine or with a larger --budget"


def one_digit(value: float) -> str:
    """14.2 -> '10', 2.6 -> '3', 0.43 -> '0.4', 0.0607 -> '0.06': one significant digit, never an exponent."""
    if value <= 0 or not math.isfinite(value):
        return f"{value:g}"
    exponent = math.floor(math.log10(value))
    rounded = round(value, -exponent)
    if rounded >= 1:
        return f"{rounded:.0f}"
    return f"{rounded:.{-exponent}f}"


def times(value: float) -> str:
    """A ratio as the reports write it: '2.6x', '14x'."""
    return f"{value:.2g}x" if value < 10 else f"{value:.0f}x"


def spreads_text(*timings: Timing) -> str:
    """'the batches spread 423% (fp32) and 94% (bf16)', or with a figure from one batch 'the batches spread 2%
    (bf16); fp32 had one timed batch'."""
    spread = [f"{t.spread:.0%} ({t.fmt})" for t in timings if len(t.samples_s) != 1]
    single = [f"{t.fmt} had one timed batch" for t in timings if len(t.samples_s) == 1]
    return "; ".join(([f"the batches spread {' and '.join(spread)}"] if spread else []) + single)


def ratio_text(fast: Timing, slow: Timing) -> tuple[str, str]:
    """The speed of `fast` over `slow` and its caveat: ('2.6x', '') for steady timings, else ('about 10x',
    'unreliable: the batches spread 423% (fp32) and 94% (bf16), so anywhere from 2.7x to 52x; rerun ...')."""
    ratio = fast.tflops / slow.tflops
    if fast.reliable and slow.reliable:
        return times(ratio), ""
    if len(fast.samples_s) < 2 or len(slow.samples_s) < 2:  # one batch has no range to give
        return f"about {one_digit(ratio)}x", f"unreliable: {spreads_text(slow, fast)}; {RERUN_HINT}"
    fast_low, fast_high = fast.tflops_range
    slow_low, slow_high = slow.tflops_range
    low, high = fast_low / slow_high, fast_high / slow_low
    return (f"about {one_digit(ratio)}x",
            f"unreliable: {spreads_text(slow, fast)}, so anywhere from {times(low)} to {times(high)}; {RERUN_HINT}")


def percent_text(fraction: float, reliable: bool) -> str:
    """'92%', or 'about 90%' from an unreliable timing (the caller says why once, not per percentage)."""
    if reliable:
        return f"{fraction:.0%}"
    return f"about {round(fraction * 10) * 10:.0f}%"


def unreliable_note(fmt: str, spread: float, batches: int | None = None) -> str:
    """'' for a steady timing, else why its figures are rounded or to be doubted, for a parenthesis."""
    if batches == 1:
        return f"unreliable: one timed batch of {fmt}, so how much it varies is unknown; {RERUN_HINT}"
    if spread <= UNRELIABLE_SPREAD:
        return ""
    return f"unreliable: the {fmt} batches spread {spread:.0%}, more than {UNRELIABLE_SPREAD:.0%}; {RERUN_HINT}"
