"""Summary statistics over raw values: no bucketing, every value counts.

Percentiles use numpy's default linear interpolation (as vLLM's benchmark
does); std is the population standard deviation.

The values (a list, or a numpy array of any integer or float type) are
turned into one float64 array of milliseconds, and that one array is all
the memory the statistics take: the standard deviation is numpy's own
formula worked in place, the percentiles partition the array in place. The
numbers are bit for bit those of ``np.asarray(values, float64) / 1e6`` with
``.mean()``, ``.std()`` and ``np.percentile``.

An integer array of more than ``bigstats.CHUNKED_ABOVE`` values (2**24: the
pooled ITL gaps of a step of some 130,000 128-token requests) is not copied
at all: loadgen.metrics.bigstats reads it in chunks, with exact count, min,
max and percentiles and a mean and std within float rounding of numpy's.

Each distribution carries confidence intervals (``Distribution.ci``): every
percentile's from order statistics (loadgen.metrics.confidence; the ranks'
values found by partitioning the same array, or by bigstats' selection for a
huge one), the mean's by the normal approximation, its lower end raised to
Anderson's distribution-free bound where that is higher (the values are
durations: none is negative). That bound sorts the sample, so it is taken up
to :data:`MEAN_FLOOR_UP_TO` values; past that the normal end is the higher, and
is only kept from going below 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from statistics import NormalDist
from typing import cast

import numpy as np
import numpy.typing as npt

from loadgen.metrics import bigstats
from loadgen.metrics.confidence import mean_floor, quantile_ranks
from loadgen.summary import Distribution, Intervals
from loadgen.vocab import PERCENTILE_OF, PERCENTILES

#: the default confidence level of every interval (sla.confidence sets it for a run)
CONFIDENCE = 0.95

#: Anderson's bound on the mean is computed for samples up to this size (a sort each):
#: it can only beat the normal end for few or very skewed values
MEAN_FLOOR_UP_TO = 100_000

__all__ = ["CONFIDENCE", "MEAN_FLOOR_UP_TO", "distribution_ms"]


def distribution_ms(
    values_ns: Sequence[float] | npt.NDArray[np.number], confidence: float = CONFIDENCE
) -> Distribution:
    """Statistics of nanosecond values, reported in milliseconds, with ``confidence`` intervals."""
    if len(values_ns) == 0:
        return Distribution()
    if (
        isinstance(values_ns, np.ndarray)
        and values_ns.dtype.kind == "i"
        and values_ns.size > bigstats.CHUNKED_ABOVE
    ):
        ints = cast("bigstats.Ints", values_ns)  # not copied
        d = bigstats.big_distribution_ms(ints)
        floor = 0.0 if d.min is not None and d.min >= 0 else None  # too many to sort
        d.ci = _intervals(
            d, confidence, lambda ks: bigstats.order_statistics(ints, ks), 1e6, floor=floor
        )
        return d
    a = _ms(values_ns)
    n = a.size
    mean, lo, hi = a.mean(), a.min(), a.max()
    # np.std: sqrt(sum((a - mean)**2) / n), the mean kept as a 1-element array
    a -= np.add.reduce(a, keepdims=True) / n
    np.square(a, out=a)
    std = np.sqrt(np.add.reduce(a) / n)
    a = _ms(values_ns, out=a)
    pct = np.percentile(a, PERCENTILES, overwrite_input=True)
    d = Distribution(
        count=int(n),
        mean=float(mean),
        std=float(std),
        min=float(lo),
        max=float(hi),
        **{k: float(v) for k, v in zip(PERCENTILE_OF, pct, strict=True)},
    )

    def select(ranks: list[int]) -> dict[int, float]:
        a.partition(ranks)  # in place, O(n): the values at those ranks as if sorted
        return {k: float(a[k]) for k in ranks}

    floor = None  # values that can be negative: the normal end alone
    if lo >= 0:
        floor = 0.0
        if n <= MEAN_FLOOR_UP_TO:
            a.sort()
            floor = mean_floor(a, confidence)
    d.ci = _intervals(d, confidence, select, 1.0, floor=floor)
    return d


def _intervals(
    d: Distribution,
    confidence: float,
    select: Callable[[list[int]], Mapping[int, float]],
    scale: float,
    *,
    floor: float | None,
) -> Intervals:
    """Each percentile's order-statistic interval (loadgen.metrics.confidence) and the mean's.

    ``select`` gives the values at 0-based ranks of the sorted sample; ``scale``
    turns them into ms; ``floor``: the least the mean's lower end may be (Anderson's
    bound, or 0 for a sample too big to sort), None for values that may be negative.
    """
    n = d.count
    ranks = {p: quantile_ranks(n, p / 100, confidence) for p in PERCENTILES}
    wanted = sorted({r - 1 for pair in ranks.values() for r in pair if r is not None})
    found = select(wanted) if wanted else {}

    def value(rank: int | None) -> float | None:
        return None if rank is None else found[rank - 1] / scale

    half = None
    if n > 1 and d.std is not None:
        # the standard error: the sample std (n - 1) over sqrt(n) = the population std / sqrt(n - 1)
        half = NormalDist().inv_cdf(0.5 + confidence / 2) * d.std / math.sqrt(n - 1)
    mean: list[float | None] = [None, None]
    if half is not None and d.mean is not None:
        low = d.mean - half
        mean = [low if floor is None else max(low, floor), d.mean + half]
    pairs = {k: [value(ranks[p][0]), value(ranks[p][1])] for k, p in PERCENTILE_OF.items()}
    return Intervals(confidence=confidence, mean=mean, **pairs)


def _ms(
    values_ns: Sequence[float] | npt.NDArray[np.number],
    out: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """values / 1e6 as a new float64 array (or into ``out``): each made float64, then divided."""
    src = values_ns if isinstance(values_ns, np.ndarray) else np.asarray(values_ns, np.float64)
    if out is None:
        out = np.empty(src.shape, dtype=np.float64)
    np.divide(src, 1e6, out=out, dtype=np.float64)
    return out
