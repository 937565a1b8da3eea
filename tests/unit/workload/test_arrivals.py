"""Arrival schedules: seeded, with the mean and spread of gaps the processes promise.

Tolerances are five standard errors from theory: a sample mean of n gaps with
CV c is off by c / sqrt(n) (relative); a sample standard deviation by
sqrt((kurtosis - 1) / 4n), where a Gamma(k) gap has kurtosis 3 + 6 / k
(exponential: k = 1, kurtosis 9). A count in a window of a renewal process of
rate r and gap CV c has mean r T and variance about r T c^2.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from loadgen.workload.arrivals import arrival_offsets_ns, ramped_offsets_ns
from loadgen.workload.plan import step_rng

NS = 1_000_000_000
N = 20_000


def gaps_s(offsets: list[int]) -> np.ndarray:
    """The gaps (s) of a schedule that starts with one drawn gap after 0."""
    return np.diff(np.asarray(offsets, dtype=np.float64), prepend=0.0) / NS


def rng(seed: int = 7) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize("process", ["poisson", "gamma", "constant"])
def test_same_seed_same_schedule_and_seed_zero_is_a_seed(process: str) -> None:
    def draw(seed: int) -> list[int]:
        return arrival_offsets_ns(20.0, process, step_rng(seed, 0, 1), count=50, burstiness=0.5)

    assert draw(0) == draw(0)
    assert len(draw(0)) == 50
    if process != "constant":
        assert draw(0) != draw(1)  # 0 is a seed like any other, not "no seed"
    else:
        assert draw(0) == draw(1)  # nothing random to seed


def test_constant_starts_at_zero_with_exact_gaps() -> None:
    assert arrival_offsets_ns(4.0, "constant", rng(), count=5) == [
        0,
        NS // 4,
        NS // 2,
        3 * NS // 4,
        NS,
    ]


@pytest.mark.parametrize(
    ("process", "shape"),
    [("poisson", 1.0), ("gamma", 1.0), ("gamma", 0.25), ("gamma", 4.0)],
)
def test_gap_mean_and_cv_match_the_process(process: str, shape: float) -> None:
    rate = 50.0
    offsets = arrival_offsets_ns(rate, process, rng(), count=N, burstiness=shape)
    gaps = gaps_s(offsets)
    assert len(gaps) == N and np.all(gaps >= 0)
    cv = 1.0 / math.sqrt(shape)  # Gamma(k): CV = 1/sqrt(k); exponential: 1
    mean_tol = 5 * cv / math.sqrt(N)
    std_tol = 5 * math.sqrt((2 + 6 / shape) / (4 * N))
    assert gaps.mean() == pytest.approx(1 / rate, rel=mean_tol)
    assert gaps.std(ddof=1) / gaps.mean() == pytest.approx(cv, rel=std_tol + mean_tol)


def test_first_random_arrival_comes_after_a_gap_not_at_zero() -> None:
    firsts = [arrival_offsets_ns(10.0, "poisson", rng(s), count=1)[0] for s in range(200)]
    assert min(firsts) > 0
    # the first arrival is one exponential gap: mean 0.1 s, CV 1
    assert np.mean(firsts) / NS == pytest.approx(0.1, rel=5 / math.sqrt(200))


@pytest.mark.parametrize(("process", "shape"), [("poisson", 1.0), ("gamma", 0.25)])
def test_window_holds_the_expected_count_and_nothing_after_it(process: str, shape: float) -> None:
    rate, window = 200.0, 50.0
    offsets = arrival_offsets_ns(rate, process, rng(3), duration_s=window, burstiness=shape)
    expected = rate * window
    assert abs(len(offsets) - expected) < 5 * math.sqrt(expected / shape)
    assert offsets == sorted(offsets)
    assert offsets[-1] < window * NS
    # the window is filled to its end, not cut short by the draw
    assert offsets[-1] > (window - 1.0) * NS


def test_window_is_covered_when_the_first_draw_falls_short() -> None:
    class ShortGaps:
        """Gaps a hundredth of the mean: the first batch ends long before the window."""

        def exponential(self, scale: float, size: int) -> np.ndarray:
            return np.full(size, scale / 100)

    offsets = arrival_offsets_ns(10.0, "poisson", ShortGaps(), duration_s=2.0)  # type: ignore[arg-type]
    # gaps of 1 ms over 2 s: 1999 arrivals at 1, 2, ... 1999 ms (2000 ms is not before 2 s)
    assert len(offsets) == 1999
    assert offsets[-1] == 1999 * NS // 1000


def test_constant_window_has_rate_times_duration_arrivals() -> None:
    # 0.1 added ten times is a hair under 1.0: the arrival at 1 s is not before 1 s
    for rate, window in [(10.0, 1.0), (7.0, 1.0), (10.0, 3.0), (50.0, 4.0), (3.0, 1.0)]:
        offsets = arrival_offsets_ns(rate, "constant", rng(), duration_s=window)
        assert len(offsets) == math.ceil(rate * window)
        assert offsets[-1] < window * NS


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"count": 3, "duration_s": 1.0}, "exactly one of count and duration_s"),
        ({}, "exactly one of count and duration_s"),
        ({"count": 3, "rate": 0.0}, "must be > 0"),
        ({"count": 3, "rate": -1.0}, "must be > 0"),
        ({"count": 3, "burstiness": 0.0}, "must be > 0"),
        ({"count": 3, "process": "uniform"}, "unknown arrival process 'uniform'"),
    ],
)
def test_bad_arguments(kwargs: dict[str, object], says: str) -> None:
    args: dict[str, object] = {"rate": 5.0, "process": "poisson", **kwargs}
    with pytest.raises(ValueError, match=says):
        arrival_offsets_ns(rng=rng(), **args)  # type: ignore[arg-type]


def test_ramp_by_hand() -> None:
    # R = 2: u < 1 goes to sqrt(2 R u) = sqrt(4u); u >= 1 to u + 1
    steady = [0, NS // 4, NS, 3 * NS]
    assert ramped_offsets_ns(steady, 2.0) == [0, NS, 2 * NS, 4 * NS]
    assert ramped_offsets_ns(steady, 0.0) == steady
    assert ramped_offsets_ns(steady, -1.0) == steady
    assert ramped_offsets_ns(steady, 0.0) is not steady  # a copy: the caller's list is its own


def test_ramp_follows_the_linear_intensity() -> None:
    """Arrivals before t < R: rate t^2 / 2R on average (Poisson counts: sd = sqrt(mean))."""
    rate, ramp = 1000.0, 4.0
    steady = arrival_offsets_ns(rate, "poisson", rng(11), duration_s=20.0)
    ramped_ns = ramped_offsets_ns(steady, ramp)
    ramped = np.asarray(ramped_ns) / NS
    for t in (1.0, 2.0, 3.0, 4.0):
        expected = rate * t * t / (2 * ramp)
        assert abs(np.sum(ramped < t) - expected) < 5 * math.sqrt(expected)
    # after the ramp every gap is as drawn (to the rounding of a nanosecond)
    after = [i for i, u in enumerate(steady) if u >= ramp / 2 * NS]
    shifted = [ramped_ns[i] - steady[i] for i in after]
    assert max(shifted) - min(shifted) <= 1 and abs(shifted[0] - ramp / 2 * NS) <= 1
