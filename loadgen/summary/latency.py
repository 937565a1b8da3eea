"""Latency statistics in ``summary.json``: one metric's distribution and its intervals.

Owns :class:`Distribution` (count, mean, std, min, the percentiles of
:data:`loadgen.vocab.PERCENTILES`, max) and its confidence :class:`Intervals`;
their field order is :data:`loadgen.vocab.DISTRIBUTION_STATS`. Milliseconds.
"""

from __future__ import annotations

from loadgen.strict import Strict

__all__ = ["Distribution", "Intervals"]


class Intervals(Strict):
    """Confidence intervals, ``[low, high]`` in ms; an end is None where the sample is too small
    to give it (docs/metrics.md: percentiles from order statistics, the mean by the normal
    approximation)."""

    confidence: float
    mean: list[float | None]
    p50: list[float | None]
    p90: list[float | None]
    p95: list[float | None]
    p99: list[float | None]
    p99_9: list[float | None]


class Distribution(Strict):
    """Summary statistics of one latency metric, in ms. Empty when ``count`` is 0."""

    count: int = 0
    mean: float | None = None
    std: float | None = None
    min: float | None = None
    p50: float | None = None
    p90: float | None = None
    p95: float | None = None
    p99: float | None = None
    p99_9: float | None = None
    max: float | None = None
    ci: Intervals | None = None
