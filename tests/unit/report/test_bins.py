"""Big steps on a plot: values binned past a bound, with what is exact kept exact."""

from __future__ import annotations

import numpy as np
import pytest

from loadgen.records import Record
from loadgen.report.plots import cdf_figure, sample_series, timeline_figure
from loadgen.results.bins import LOG_EDGES, MAX_TIME_BINS, StampColumn, TimeBins, ValueColumn
from loadgen.results.samples import RunSamples, samples_from_records
from loadgen.summary import Summary

from .conftest import MS


def _lognormal(n: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).lognormal(1.0, 0.8, n)


def test_a_column_is_exact_up_to_its_bound_then_binned() -> None:
    values = _lognormal(1_000)
    small = ValueColumn(exact_up_to=1_000)
    small.extend(values.tolist())
    assert not small.binned and list(small.values()) == values.tolist()
    big = ValueColumn(exact_up_to=300)
    for v in values:
        big.append(float(v))
    assert big.binned and len(big) == 1_000
    with pytest.raises(ValueError, match="binned"):
        big.values()
    counts, low, high = big.histogram()
    assert (low, high) == (values.min(), values.max())
    # every bin's count is the count of the values in it
    expected = np.bincount(np.searchsorted(LOG_EDGES, values, side="right"), minlength=counts.size)
    assert counts.tolist() == expected.tolist()


def test_a_binned_cdf_is_exact_at_its_edges(run_data: tuple[Summary, list[Record]]) -> None:
    summary, records = run_data
    exact = samples_from_records(records, exact_up_to=None)
    binned = samples_from_records(records, exact_up_to=10)  # every step's TTFT: 20 values
    assert sample_series.cdf_binned(summary, exact, "ttft_ms") == []
    assert sample_series.cdf_binned(summary, binned, "ttft_ms") == ["c=1", "c=4", "c=16"]
    series = sample_series.cdf_series(summary, binned, "ttft_ms")
    for s in summary.steps[:3]:
        values = np.sort(exact.step(s.index).values("ttft_ms"))
        points = series[sample_series.point_label(s)]
        assert points[0] == (values[0], 1 / len(values)) and points[-1] == (values[-1], 1.0)
        for x, f in points[1:-1]:
            assert x in LOG_EDGES
            assert f == np.searchsorted(values, x, side="left") / len(values)
        assert len(points) < 2 * len(values) + 2  # flat stretches between bins left out


def test_the_cdf_figure_says_which_steps_are_binned(
    run_data: tuple[Summary, list[Record]],
) -> None:
    summary, records = run_data
    title = cdf_figure.draw_cdf(summary, samples_from_records(records))._suptitle
    assert title is not None and "bins" not in title.get_text()
    fig = cdf_figure.draw_cdf(summary, samples_from_records(records, exact_up_to=50))
    assert fig._suptitle is not None
    text = fig._suptitle.get_text()
    assert "from log-spaced bins" in text and "ITL of c=1, c=4, c=16" in text  # 80 gaps each
    assert "TTFT" not in text.splitlines()[-1]  # 20 values a step: exact


def test_time_bins_widen_and_keep_every_weight() -> None:
    bins = TimeBins(width_ns=MS)
    late = np.arange(10, 20, dtype=np.int64) * 1_000 * MS  # 10 s .. 19 s
    bins.add(late, np.ones(late.size))
    early = np.arange(0, 10, dtype=np.int64) * 1_000 * MS  # before the origin: moved back
    bins.add(early, np.full(early.size, 2.0))
    assert bins.width_ns == MS and bins.weights.size <= MAX_TIME_BINS
    far = np.array([400 * 1_000 * MS])  # 400 s at 1 ms: more than MAX_TIME_BINS bins
    bins.add(far, np.array([5.0]))
    assert bins.width_ns == 4 * MS and bins.weights.size <= MAX_TIME_BINS
    assert bins.weights.sum() == 10 + 20 + 5
    edges = np.array([-1.0, 9.5e9, 19.5e9, 401e9])
    assert bins.between(edges).tolist() == pytest.approx([20.0, 10.0, 5.0])


def test_binned_stamps_draw_the_exact_timeline_closely(
    run_data: tuple[Summary, list[Record]],
) -> None:
    summary, records = run_data
    exact = sample_series.timeline_series(summary, samples_from_records(records), [])
    binned_samples = RunSamples(tokens=StampColumn(exact_up_to=25))  # 25 of 300 token events
    for r in records:
        binned_samples.add(r)
    assert binned_samples.tokens.binned and not samples_from_records(records).tokens.binned
    binned = sample_series.timeline_series(summary, binned_samples, [])
    assert binned["in flight"] == exact["in flight"]  # from every request's interval
    a = np.array([y for _, y in exact["output tokens/s"]])
    b = np.array([y for _, y in binned["output tokens/s"]])
    assert b.sum() == pytest.approx(a.sum())  # no token lost
    # a 1 ms bin across an edge of the 0.1 s bins holds one token event at most (they are 2 ms
    # apart): at most one token moves, 10 tokens/s
    assert np.abs(b - a).max() <= 10 + 1e-9
    title = timeline_figure.draw_timeline(summary, binned_samples, [])._suptitle
    assert title is not None and "output tokens/s from time bins" in title.get_text()


def test_stamps_past_the_bound_are_folded_a_chunk_at_a_time() -> None:
    column = StampColumn(exact_up_to=4)
    for start in range(0, 30, 3):
        column.extend([start * MS, (start + 1) * MS, (start + 2) * MS], 0.5)
    assert column.binned and len(column) == 30
    assert column.between(np.array([0.0, 15e6, 30e6])).tolist() == pytest.approx([7.5, 7.5])
