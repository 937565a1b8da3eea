"""Confidence intervals for percentiles, means and rates; the sample size a verdict needs.

Percentiles: distribution-free, from order statistics. With n values sorted
x(1) <= ... <= x(n), the number B of them below the true p-quantile q is
Binomial(n, p), so x(l) <= q <= x(u) holds with probability
P(l <= B <= u - 1) = F(u - 1) - F(l - 1), F the binomial CDF. The ranks are
l, the largest with F(l - 1) <= alpha/2, and u, the smallest with
F(u - 1) >= 1 - alpha/2 (each tail at most alpha/2: the interval covers q
with probability at least 1 - alpha, whatever the distribution). Too few
values for a rank (l < 1 or u > n) leaves that end open (None).

Means: the normal approximation, mean +- z * s / sqrt(n). For values that
cannot be negative (durations) the lower end is also at least Anderson's
bound, which needs nothing else: E[X] is the integral of P(X > t) over
t >= 0, and P(X > t) >= S_n(t) - eps for every t at once with probability
1 - alpha/2 (the one-sided DKW inequality, Massart's constant:
eps = sqrt(ln(2/alpha) / 2n)), so with x(0) = 0,
E[X] >= sum over k of (x(k) - x(k-1)) * max(0, (n - k + 1)/n - eps).
It decides what the approximation cannot: three TTFTs of 2, 3 and 43 ms put
the normal end at -10.5 ms and this one at 0.43 ms. Rates (events over
a window): the count as Poisson, (N +- z * sqrt(N)) / T. Proportions (k of n
answers valid): Wilson's score interval,
(p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n), p = k/n, which
keeps its coverage near 0 and 1 where the normal one collapses to a point
(100 of 100 valid is [0.963, 1] at 95%, not [1, 1]). A lower bound on a
proportion (:func:`floor_verdict`) is met when the interval's lower end
reaches it, missed when its upper end is below it.

A bound on a percentile is *met* when the interval's upper end is within
it, *missed* when its lower end is beyond it, and *inconclusive* otherwise;
:func:`requests_needed` finds the smallest sample at which the observed
share of values beyond the bound would decide it (MLPerf's early-stopping
idea applied to one bound).

The binomial CDF is summed exactly around the mode (terms further than 40
standard deviations away are below 1e-300), so a million values cost a few
thousand terms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "Interval",
    "floor_needed",
    "floor_verdict",
    "mean_floor",
    "mean_interval",
    "proportion_interval",
    "quantile_interval",
    "quantile_ranks",
    "rate_interval",
    "requests_needed",
    "verdict",
]

Verdict = Literal["met", "missed", "inconclusive"]


@dataclass(frozen=True, slots=True)
class Interval:
    """``[low, high]`` at ``confidence``; an end is None when the sample cannot give it."""

    low: float | None
    high: float | None
    confidence: float


def _binom_cdf(n: int, p: float) -> tuple[int, npt.NDArray[np.float64]]:
    """(k0, cdf) with cdf[i] = P(B <= k0 + i) for B ~ Binomial(n, p), over every k that matters.

    Below k0 the CDF is 0 and past the end it is 1 (to within 1e-300).
    """
    sd = math.sqrt(n * p * (1 - p))
    lo = max(0, int(n * p - 40 * sd - 40))
    hi = min(n, int(n * p + 40 * sd + 40))
    k = np.arange(lo, hi + 1, dtype=np.float64)
    # log pmf from log-gamma (math.lgamma, per term: numpy has none)
    lg = np.array([math.lgamma(x + 1) for x in k]) + np.array([math.lgamma(n - x + 1) for x in k])
    logpmf = math.lgamma(n + 1) - lg + k * math.log(p) + (n - k) * math.log1p(-p)
    pmf = np.exp(logpmf - logpmf.max())
    pmf /= pmf.sum()
    return lo, np.cumsum(pmf)


def quantile_ranks(n: int, p: float, confidence: float = 0.95) -> tuple[int | None, int | None]:
    """1-based ranks (l, u) of the order statistics bounding the p-quantile; None: too few."""
    if n < 1 or not 0 < p < 1:
        return None, None
    alpha = 1 - confidence
    k0, cdf = _binom_cdf(n, p)
    # l - 1: the largest k with P(B <= k) <= alpha/2 (k0 - 1 when none in the window is)
    low = k0 + int(np.searchsorted(cdf, alpha / 2, side="right"))
    # u - 1: the smallest k with P(B <= k) >= 1 - alpha/2
    up = k0 + int(np.searchsorted(cdf, 1 - alpha / 2, side="left")) + 1
    return (low if low >= 1 else None), (up if up <= n else None)


def quantile_interval(
    values: npt.ArrayLike, p: float, confidence: float = 0.95, *, presorted: bool = False
) -> Interval:
    """The distribution-free interval for the p-quantile (0 < p < 1) of ``values``."""
    x = np.asarray(values, dtype=np.float64)
    if not presorted:
        x = np.sort(x)
    low, high = quantile_ranks(len(x), p, confidence)
    return Interval(
        None if low is None else float(x[low - 1]),
        None if high is None else float(x[high - 1]),
        confidence,
    )


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def mean_interval(
    values: npt.ArrayLike, confidence: float = 0.95, *, nonnegative: bool = False
) -> Interval:
    """mean +- z * s / sqrt(n) (the normal approximation); open ends below two values.

    ``nonnegative``: the values cannot be below 0 (durations), so the lower end is
    also at least :func:`mean_floor`'s.
    """
    x = np.asarray(values, dtype=np.float64)
    if len(x) < 2:
        return Interval(None, None, confidence)
    half = _z(confidence) * float(x.std(ddof=1)) / math.sqrt(len(x))
    m = float(x.mean())
    low = max(m - half, mean_floor(np.sort(x), confidence)) if nonnegative else m - half
    return Interval(low, m + half, confidence)


def mean_floor(ascending: npt.NDArray[np.float64], confidence: float = 0.95) -> float:
    """Anderson's lower confidence bound (one-sided, at 1 - alpha/2) on the mean of a
    variable that cannot be negative, from its sorted sample; 0 for an empty one."""
    n = len(ascending)
    if n == 0:
        return 0.0
    eps = math.sqrt(math.log(2 / (1 - confidence)) / (2 * n))
    above = (n - np.arange(n, dtype=np.float64)) / n  # S_n just below x(k): (n - k + 1)/n
    steps = np.diff(ascending, prepend=0.0)
    return float(np.dot(steps, np.maximum(above - eps, 0.0)))


def rate_interval(count: int, seconds: float, confidence: float = 0.95) -> Interval:
    """Events per second over a window: the count taken as Poisson, (N +- z sqrt(N)) / T."""
    if seconds <= 0 or count < 1:
        return Interval(None, None, confidence)
    half = _z(confidence) * math.sqrt(count)
    return Interval(max(0.0, count - half) / seconds, (count + half) / seconds, confidence)


def proportion_interval(k: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson's score interval for a proportion of ``k`` successes in ``n`` trials."""
    if n < 1 or not 0 <= k <= n:
        return Interval(None, None, confidence)
    z = _z(confidence)
    p = k / n
    z2n = z * z / n
    centre = p + z2n / 2
    half = z * math.sqrt(p * (1 - p) / n + z2n / (4 * n))
    low, high = (centre - half) / (1 + z2n), (centre + half) / (1 + z2n)
    return Interval(max(0.0, low), min(1.0, high), confidence)


def floor_verdict(interval: Interval, bound: float) -> Verdict:
    """A lower bound on a proportion: met (lower end at or above), missed (upper end below)."""
    if interval.low is not None and interval.low >= bound:
        return "met"
    if interval.high is not None and interval.high < bound:
        return "missed"
    return "inconclusive"


def floor_needed(
    n: int, k: int, bound: float, confidence: float = 0.95, *, limit: int = 10**9
) -> int | None:
    """The smallest sample that would decide a lower bound on a proportion at the share
    ``k / n`` seen; None when that share sits at the bound or more than ``limit`` are needed."""
    if n < 1:
        return None
    share = k / n

    def decided(size: int) -> bool:
        interval = proportion_interval(round(size * share), size, confidence)
        return floor_verdict(interval, bound) != "inconclusive"

    size = n
    while not decided(size):
        size *= 2
        if size > limit:
            return None
    lo, hi = size // 2, size
    if hi == n:
        return n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if decided(mid):
            hi = mid
        else:
            lo = mid
    return hi


def verdict(interval: Interval, bound: float) -> Verdict:
    """A percentile bound: met (upper end within), missed (lower end beyond), or inconclusive."""
    if interval.high is not None and interval.high <= bound:
        return "met"
    if interval.low is not None and interval.low > bound:
        return "missed"
    return "inconclusive"


def requests_needed(
    n: int, beyond: int, p: float, confidence: float = 0.95, *, limit: int = 10**9
) -> int | None:
    """The smallest sample that would decide a bound on the p-quantile.

    ``beyond`` of ``n`` values exceeded the bound; at the same share, a
    sample of N has ``round(N * beyond / n)`` beyond it, and the verdict is
    decided when the upper rank falls among the values within the bound
    (met: u <= N - k) or the lower rank among those beyond it (missed:
    l > N - k). None when the share sits exactly at 1 - p (no sample
    decides it) or when more than ``limit`` would be needed.
    """
    if n < 1:
        return None
    share = beyond / n

    def decided(size: int) -> bool:
        k = round(size * share)
        low, high = quantile_ranks(size, p, confidence)
        within = size - k
        return (high is not None and high <= within) or (low is not None and low > within)

    if decided(n):
        return n
    size = n
    while not decided(size):
        size *= 2
        if size > limit:
            return None
    lo, hi = size // 2, size  # not decided at lo, decided at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if decided(mid):
            hi = mid
        else:
            lo = mid
    return hi
