"""Confidence intervals: coverage checked by simulation, verdicts and sample sizes by formula."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from loadgen.metrics.confidence import (
    Interval,
    mean_floor,
    mean_interval,
    quantile_interval,
    quantile_ranks,
    rate_interval,
    requests_needed,
    verdict,
)
from loadgen.metrics.stats import distribution_ms

TRIALS = 2000
N = 2000  # values per trial: enough for a two-sided p99 interval (at least 368 are needed)


def _bimodal_quantile(p: float) -> float:
    """The p-quantile of 0.8 N(50, 5) + 0.2 N(200, 20), by bisection on its CDF."""
    a, b = NormalDist(50, 5), NormalDist(200, 20)
    lo, hi = 0.0, 400.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.8 * a.cdf(mid) + 0.2 * b.cdf(mid) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _draw(name: str, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    if name == "exponential":
        return rng.exponential(1.0, shape)
    if name == "lognormal":
        return rng.lognormal(3.0, 0.8, shape)
    pick = rng.random(shape) < 0.8
    return np.where(pick, rng.normal(50, 5, shape), rng.normal(200, 20, shape))


def _true_quantile(name: str, p: float) -> float:
    if name == "exponential":
        return -math.log1p(-p)
    if name == "lognormal":
        return math.exp(3.0 + 0.8 * NormalDist().inv_cdf(p))
    return _bimodal_quantile(p)


@pytest.mark.parametrize("name", ["exponential", "lognormal", "bimodal"])
def test_the_95_percent_interval_covers_the_true_quantile_93_to_97_percent(name: str) -> None:
    rng = np.random.default_rng(20261130)
    samples = np.sort(_draw(name, rng, (TRIALS, N)), axis=1)
    for p in (0.5, 0.9, 0.99):
        low, high = quantile_ranks(N, p, 0.95)
        assert low is not None and high is not None
        q = _true_quantile(name, p)
        covered = (samples[:, low - 1] <= q) & (q <= samples[:, high - 1])
        share = float(covered.mean())
        assert 0.93 <= share <= 0.97, (name, p, share)


def test_ranks_match_the_textbook_table() -> None:
    # the 95 % interval for the median of 100 values is x(40)..x(61) (e.g. Conover, table A3)
    assert quantile_ranks(100, 0.5) == (40, 61)
    low, high = quantile_ranks(1_000_000, 0.99)  # a million values: near the normal approximation
    assert low is not None and high is not None
    half = 1.96 * math.sqrt(1_000_000 * 0.99 * 0.01)
    assert abs(low - (990_000 - half)) <= 2 and abs(high - (990_000 + half)) <= 2


def test_too_few_values_leave_an_end_open() -> None:
    # 32 values say nothing above their p99: the upper end needs x(u) with u > 32
    assert quantile_ranks(32, 0.99) == (30, None)
    interval = quantile_interval(np.arange(32.0), 0.99)
    assert interval.high is None and interval.low == 29.0
    assert quantile_ranks(0, 0.5) == (None, None)


def test_zero_values_beyond_the_bound_need_the_binomial_count() -> None:
    # with none beyond the bound, the bound is met once P(all N below q) <= alpha/2: p^N <= 0.025
    for p in (0.9, 0.99, 0.999):
        expected = math.ceil(math.log(0.025) / math.log(p))
        assert requests_needed(10, 0, p) == expected
        assert quantile_ranks(expected, p)[1] == expected  # u = N: x(N) is the upper end
        assert quantile_ranks(expected - 1, p)[1] is None


def test_a_share_at_the_quantile_itself_is_never_decided() -> None:
    assert requests_needed(1000, 10, 0.99, limit=10**6) is None


@pytest.mark.parametrize(
    ("bound", "small", "large"), [(7.0, "inconclusive", "met"), (3.5, "inconclusive", "missed")]
)
def test_the_same_server_met_missed_and_inconclusive_by_sample_size(
    bound: float, small: str, large: str
) -> None:
    rng = np.random.default_rng(7)
    values = rng.exponential(1.0, 20_000)  # true p99 = 4.61
    assert verdict(quantile_interval(values[:40], 0.99), bound) == small
    assert verdict(quantile_interval(values, 0.99), bound) == large
    beyond = int((values[:40] > bound).sum())
    needed = requests_needed(40, beyond, 0.99)
    assert needed is not None and needed > 40


def test_a_decided_sample_needs_no_more() -> None:
    values = np.random.default_rng(3).exponential(1.0, 5000)
    beyond = int((values > 7.0).sum())
    assert verdict(quantile_interval(values, 0.99), 7.0) == "met"
    assert requests_needed(5000, beyond, 0.99) == 5000


def test_mean_and_rate_intervals() -> None:
    rng = np.random.default_rng(11)
    hits = 0
    for _ in range(1000):
        m = mean_interval(rng.exponential(2.0, 400))
        assert m.low is not None and m.high is not None
        hits += m.low <= 2.0 <= m.high
    assert 0.92 <= hits / 1000 <= 0.97
    assert mean_interval([1.0]) == Interval(None, None, 0.95)
    r = rate_interval(400, 10.0)
    assert r.low == pytest.approx((400 - 1.96 * 20) / 10, rel=1e-3)
    assert r.high == pytest.approx((400 + 1.96 * 20) / 10, rel=1e-3)
    assert rate_interval(0, 10.0).low is None


def test_a_mean_of_durations_has_a_lower_end_no_duration_can_undercut() -> None:
    # three TTFTs as a short step on a busy machine gave them: the normal end is negative
    ttfts = [3.03, 2.0, 43.2]
    plain = mean_interval(ttfts)
    assert plain.low is not None and plain.low < 0
    eps = math.sqrt(math.log(40) / 6)
    anderson = 2.0 * (1 - eps) + (3.03 - 2.0) * max(0, 2 / 3 - eps)  # the third step adds 0
    assert mean_floor(np.array(sorted(ttfts))) == pytest.approx(anderson)
    held = mean_interval(ttfts, nonnegative=True)
    assert held.low == pytest.approx(anderson) and held.high == plain.high
    assert verdict(held, 0.0001) == "missed" and verdict(plain, 0.0001) == "inconclusive"
    # the summary's own interval is the same, in ms from ns
    d = distribution_ms([int(t * 1e6) for t in ttfts])
    assert d.ci is not None and d.ci.mean[0] == pytest.approx(anderson)


def test_anderson_bound_holds_for_few_skewed_values() -> None:
    rng = np.random.default_rng(5)
    true_mean = math.exp(0.5 * 1.5**2)  # lognormal(0, 1.5): heavy right tail
    above = 0
    for _ in range(TRIALS):
        x = np.sort(rng.lognormal(0.0, 1.5, 8))
        floor = mean_floor(x)
        assert 0.0 <= floor <= x.mean()
        above += floor > true_mean
    assert above / TRIALS <= 0.025  # one-sided at alpha/2, whatever the distribution


def test_the_normal_end_stands_where_it_is_higher() -> None:
    x = np.random.default_rng(6).normal(100.0, 5.0, 400)
    assert mean_interval(x, nonnegative=True) == mean_interval(x)  # many tight values
    assert mean_floor(np.zeros(0)) == 0.0
