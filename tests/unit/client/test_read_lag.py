"""Read lag: p99 and max exact (no bucket edges), reset on take."""

from __future__ import annotations

import numpy as np

from loadgen.client.transport import ReadLag


def test_p99_and_max_are_exact() -> None:
    rng = np.random.default_rng(1)
    lags = rng.lognormal(mean=12, sigma=1.5, size=20_000).astype(np.int64)  # ~0.1-10 ms
    hist = ReadLag()
    for lag in lags.tolist():
        hist.add(lag)
    reads, p99, top = hist.take()
    assert reads == len(lags)
    assert p99 == float(np.percentile(lags, 99))
    assert top == int(lags.max())


def test_a_value_at_a_power_of_two_is_not_moved_to_a_bucket_edge() -> None:
    hist = ReadLag()
    for _ in range(100):
        hist.add(3_000_000)  # between 2^21 and 2^22 ns: a histogram said 4.194304 ms
    assert hist.take() == (100, 3_000_000.0, 3_000_000)


def test_take_starts_again_and_odd_values_count() -> None:
    hist = ReadLag()
    hist.add(0)
    hist.add(-5)  # a stamp a hair after the read (two clocks): no lag
    hist.add(3_000_000)
    reads, p99, top = hist.take()
    assert (reads, top) == (3, 3_000_000)
    assert p99 == float(np.percentile([0, 0, 3_000_000], 99))
    assert hist.take() == (0, 0.0, 0)
