"""Prometheus histograms out of ``/metrics`` samples: snapshots, deltas, bucket quantiles.

Owns turning a family's ``_bucket``/``_sum``/``_count`` samples into one
:class:`HistSnapshot` (its label sets summed: every engine, every model
label), the difference of two snapshots over a step (None on a counter reset:
a count, sum or bucket that went down, or a changed bucket layout), and the
approximate quantile of a delta by linear interpolation inside the bucket the
rank falls in (what PromQL's ``histogram_quantile`` does). The quantiles are
approximate: only as fine as the server's bucket bounds; the mean (sum / count)
is exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from loadgen.telemetry.prom import PromSample

__all__ = ["HistSnapshot", "hist_delta", "hist_quantile", "histograms_from"]


@dataclass(frozen=True, slots=True)
class HistSnapshot:
    """One histogram family, cumulative: ``buckets`` are (upper bound, count <= bound)
    in increasing bound order, the last bound +Inf."""

    buckets: tuple[tuple[float, float], ...]
    total: float
    count: float

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count > 0 else None


def histograms_from(samples: list[PromSample], names: set[str]) -> dict[str, HistSnapshot]:
    """The families of ``names`` found in ``samples``, each summed over its label sets."""
    buckets: dict[str, dict[float, float]] = {}
    sums: dict[str, float] = {}
    counts: dict[str, float] = {}
    for s in samples:
        if s.value != s.value:  # NaN
            continue
        base, _, part = s.name.rpartition("_")
        if base not in names:
            continue
        if part == "bucket" and "le" in s.labels:
            try:
                bound = float(s.labels["le"])
            except ValueError:
                continue
            family = buckets.setdefault(base, {})
            family[bound] = family.get(bound, 0.0) + s.value
        elif part == "sum":
            sums[base] = sums.get(base, 0.0) + s.value
        elif part == "count":
            counts[base] = counts.get(base, 0.0) + s.value
    out: dict[str, HistSnapshot] = {}
    for name, family in buckets.items():
        if name not in sums or name not in counts or math.inf not in family:
            continue
        ordered = tuple(sorted(family.items()))
        out[name] = HistSnapshot(ordered, sums[name], counts[name])
    return out


def hist_delta(before: HistSnapshot | None, after: HistSnapshot) -> HistSnapshot | None:
    """``after - before`` (``before`` None: the server's first scrape of it, counted from
    zero is not the step, so None); None on a counter reset or a changed layout."""
    if before is None:
        return None
    if [b for b, _ in before.buckets] != [b for b, _ in after.buckets]:
        return None
    diff = tuple((b, a - p) for (b, a), (_, p) in zip(after.buckets, before.buckets, strict=True))
    count, total = after.count - before.count, after.total - before.total
    if count < 0 or total < 0 or any(n < 0 for _, n in diff):
        return None
    if any(diff[i][1] < diff[i - 1][1] for i in range(1, len(diff))):
        return None  # not cumulative any more: the two scrapes straddle a restart
    return HistSnapshot(diff, total, count)


def hist_quantile(h: HistSnapshot, q: float) -> float | None:
    """Approximate ``q``-quantile (0..1) by linear interpolation in its bucket; the first
    bucket interpolates from 0, a rank in the +Inf bucket gives the highest finite bound.
    None when the histogram is empty."""
    n = h.buckets[-1][1] if h.buckets else 0.0
    if n <= 0:
        return None
    rank = q * n
    lower, below = 0.0, 0.0
    for bound, cum in h.buckets:
        if cum >= rank and cum > below:
            if math.isinf(bound):
                return lower
            return lower + (bound - lower) * (rank - below) / (cum - below)
        if not math.isinf(bound):
            lower = bound
        below = cum
    return lower
