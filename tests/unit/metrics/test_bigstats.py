"""A very large integer array (the pooled ITL gaps of a million-request step) is summarised
in chunks, without a float copy: count, min, max and percentiles exactly numpy's, mean and
std within float rounding of numpy's. The size limits are lowered here so small arrays take
the chunked path."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from loadgen.metrics import bigstats, summarize_step
from loadgen.metrics.columns import StepColumns
from loadgen.metrics.profiles import PROFILES
from loadgen.metrics.stats import distribution_ms
from loadgen.scenario import SlaSpec
from loadgen.summary import LoadPoint
from loadgen.vocab import PERCENTILE_OF, PERCENTILES

from .step_oracle import summarize_step_reference
from .test_columns import random_step


@pytest.fixture
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bigstats, "CHUNKED_ABOVE", 50)
    monkeypatch.setattr(bigstats, "CHUNK", 64)


def arrays() -> list[Any]:
    rng = np.random.default_rng(0)
    mostly_zero = np.zeros(5000, dtype=np.int32)  # a burst: most events share a read
    mostly_zero[::9] = rng.integers(0, 10**6, mostly_zero[::9].size)
    return [
        rng.integers(0, 2**31 - 1, 51).astype(np.int32),
        rng.integers(0, 2**31 - 1, 4099).astype(np.int32),
        mostly_zero,
        rng.integers(-(2**50), 2**50, 3001),  # int64, negative too
        rng.integers(0, 3, 2000) * 10**9 + rng.integers(0, 2, 2000),  # few distinct values
        np.full(777, 12345, dtype=np.int64),
    ]


@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize("values", arrays(), ids=lambda a: f"{a.dtype}-{a.size}")
def test_chunked_statistics_match_numpy(values: Any) -> None:
    a = np.asarray(values, dtype=np.float64) / 1e6
    d = distribution_ms(values)
    assert (d.count, d.min, d.max) == (a.size, a.min(), a.max())
    keys = list(PERCENTILE_OF)
    assert [getattr(d, k) for k in keys] == np.percentile(a, PERCENTILES).tolist()
    assert d.mean == pytest.approx(a.mean(), rel=1e-14, abs=1e-12)
    assert d.std == pytest.approx(a.std(), rel=1e-9, abs=1e-9)


@pytest.mark.usefixtures("small_chunks")
def test_order_statistics_are_those_of_the_sorted_array() -> None:
    values = arrays()[2]
    ranks = [0, 1, 17, 4443, 4444, 4999]
    assert bigstats.order_statistics(values, ranks) == {r: np.sort(values)[r] for r in ranks}


@pytest.mark.usefixtures("small_chunks")
@pytest.mark.parametrize("profile", ["loadgen", "vllm"])
def test_a_chunked_step_differs_only_in_means_and_stds(profile: str) -> None:
    records = random_step(0, 300, open_loop=False)
    load = LoadPoint(mode="concurrency", concurrency=4)
    kw: dict[str, Any] = {"profile": PROFILES[profile]}
    ref = summarize_step_reference(0, load, records, SlaSpec(), **kw).model_dump()
    new = summarize_step(0, load, StepColumns.of(records), SlaSpec(), **kw).model_dump()
    for key in ("throughput", "throughput_whole"):  # newer than the oracle
        if new[key] is not None:
            new[key]["requests_per_s_ci"] = None
    new["sessions"] = None  # newer too (tests/unit/metrics/test_sessions.py)
    new["client_error"] = None  # ... and this (tests/unit/metrics/test_client_error.py)
    assert new["itl_ms"]["count"] > bigstats.CHUNKED_ABOVE
    chunked = [k for k, d in new.items() if isinstance(d, dict) and d.get("count", 0) > 50]
    assert {"itl_ms", "ttft_ms", "e2e_ms"} <= set(chunked)
    for key in chunked:
        for stat in ("mean", "std"):
            assert new[key].pop(stat) == pytest.approx(ref[key].pop(stat), rel=1e-12)
        # the mean's interval follows the mean and std; the percentiles' are exact
        assert new[key]["ci"].pop("mean") == pytest.approx(ref[key]["ci"].pop("mean"), rel=1e-12)
    assert new == ref


@pytest.mark.usefixtures("small_chunks")
def test_a_chunked_means_interval_never_ends_below_zero() -> None:
    gaps = np.zeros(60, dtype=np.int64)  # a burst: most tokens share a read, one waited
    gaps[0] = 10**9
    d = distribution_ms(gaps)
    assert d.ci is not None and d.ci.mean[1] is not None
    half = d.ci.mean[1] - d.mean  # type: ignore[operator]
    assert d.mean - half < 0  # the normal end would be below zero
    assert d.ci.mean[0] == 0.0
