"""The read-lag histogram: p99 within one bucket above the truth, max exact, reset on take."""

from __future__ import annotations

import numpy as np

from loadgen.client.transport import ReadLag


def test_p99_is_the_upper_edge_of_its_bucket_and_max_is_exact() -> None:
    rng = np.random.default_rng(1)
    lags = rng.lognormal(mean=12, sigma=1.5, size=20_000).astype(np.int64)  # ~0.1-10 ms
    hist = ReadLag()
    for lag in lags.tolist():
        hist.add(lag)
    reads, p99, top = hist.take()
    true_p99 = float(np.percentile(lags, 99))
    assert reads == len(lags)
    assert true_p99 <= p99 <= true_p99 * 2 ** (2 / ReadLag.BUCKETS_PER_DOUBLING)
    assert top == int(lags.max())


def test_take_starts_again_and_odd_values_count() -> None:
    hist = ReadLag()
    hist.add(0)
    hist.add(-5)  # a stamp a hair after the read (two clocks): no lag
    hist.add(3_000_000)
    reads, p99, top = hist.take()
    assert (reads, top) == (3, 3_000_000)
    assert 3_000_000 <= p99 <= 3_000_000 * 2 ** (1 / ReadLag.BUCKETS_PER_DOUBLING)
    assert hist.take() == (0, 0, 0)
