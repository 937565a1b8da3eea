"""A fixed-bucket histogram that takes a whole request's values in one call.

``prometheus_client.Histogram.observe`` takes a lock and a label lookup per
value; a request's inter-token gaps are hundreds of values, so the exporter
keeps its own counts and bins one request's gaps with numpy at once (see
:meth:`Hist.observe_ns`). Prometheus's rule: a value counts in every bucket
whose upper bound ``le`` it does not exceed.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from prometheus_client.utils import floatToGoString

__all__ = ["Hist"]

_NS_PER_S = 1e9
#: below this many values a Python loop is cheaper than a numpy round trip
_NUMPY_FROM = 24


@dataclass(slots=True)
class Hist:
    bounds: tuple[float, ...]  # upper bounds, seconds, increasing; +Inf is implied
    counts: list[int] = field(default_factory=list)  # per bucket, the last one +Inf
    total_s: float = 0.0

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.bounds) + 1)

    def observe_s(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total_s += value

    def observe_ns(self, values_ns: Sequence[int] | np.ndarray) -> None:
        """Many values in nanoseconds (one request's gaps)."""
        if len(values_ns) < _NUMPY_FROM:
            for v in values_ns:
                self.observe_s(float(v) / _NS_PER_S)
            return
        s = np.asarray(values_ns, dtype=np.float64) / _NS_PER_S
        idx = np.searchsorted(np.asarray(self.bounds), s, side="left")
        add = np.bincount(idx, minlength=len(self.counts))
        self.counts = [c + int(a) for c, a in zip(self.counts, add, strict=True)]
        self.total_s += float(s.sum())

    @property
    def count(self) -> int:
        return sum(self.counts)

    def cumulative(self) -> list[tuple[str, float]]:
        """``(le, observations <= le)`` pairs, ``+Inf`` last: the exposition's buckets."""
        out: list[tuple[str, float]] = []
        running = 0
        for le, c in zip((*map(floatToGoString, self.bounds), "+Inf"), self.counts, strict=True):
            running += c
            out.append((le, float(running)))
        return out
