"""Small statistics helpers for the benchmark table."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile (0 < q <= 100) of ``values``."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100.0 * len(ordered)))
    return ordered[rank - 1]


def growth_exponent(size_a: float, time_a: float, size_b: float, time_b: float) -> float:
    """``k`` in time ∝ size**k through two points: 1.0 is linear growth."""
    return math.log(time_b / time_a) / math.log(size_b / size_a)
