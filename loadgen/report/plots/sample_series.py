"""The series of the plots drawn from the per-request samples: pure functions, samples in.

Like :mod:`loadgen.report.plots.series` (whose step order and labels they use), each
returns exactly the points handed to matplotlib:

1. :func:`cdf_series`: the CDF of TTFT or ITL, one line per step; a step
   binned in :class:`~loadgen.results.bins.ValueColumn` (more than
   :data:`~loadgen.results.bins.EXACT_UP_TO` values) through the edges of its
   histogram (:func:`cdf_binned` names those steps).
2. :func:`timeline_series`: requests in flight and output tokens/s over the
   run; server queue, KV-cache usage and GPU utilisation from telemetry.jsonl.
   :func:`step_spans` and :func:`steady_spans` shade the steps' windows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loadgen.report.plots.series import Series, curve_steps, point_label
from loadgen.results import LOG_EDGES, RunSamples, ValueColumn
from loadgen.summary import Summary

__all__ = [
    "cdf_binned",
    "cdf_series",
    "steady_spans",
    "step_spans",
    "timeline_origin_ns",
    "timeline_series",
]

_NS_PER_S = 1e9


def cdf_series(summary: Summary, samples: RunSamples, metric: str, max_points: int = 400) -> Series:
    """One empirical CDF per step: (value ms, fraction of samples <= value).

    A step with more than ``max_points`` samples is drawn through evenly spaced
    order statistics (the first and last included), so the shape is exact at
    those points and the file stays small. A binned step (:func:`cdf_binned`)
    is drawn through the edges of its log-spaced histogram: the fraction below
    each edge is exact, the values between two edges (1.2% apart) are not seen.
    """
    out: Series = {}
    for s in curve_steps(summary):
        column = samples.step(s.index).column(metric)
        if not len(column):
            continue
        if column.binned:
            out[point_label(s)] = _binned_cdf(column)
            continue
        values = np.sort(column.values())
        n = len(values)
        idx = np.unique(np.linspace(0, n - 1, min(n, max_points)).round().astype(int))
        fractions = (idx + 1) / n
        out[point_label(s)] = [
            (float(values[i]), float(f)) for i, f in zip(idx, fractions, strict=True)
        ]
    return out


def _binned_cdf(column: ValueColumn) -> list[tuple[float, float]]:
    """(min, 1/n), (edge, fraction of values below it) for each edge between the min and
    the max where the fraction changes on either side, (max, 1)."""
    counts, low, high = column.histogram()
    n = int(counts.sum())
    below = np.cumsum(counts)[:-1] / n  # below[i]: the fraction under LOG_EDGES[i]
    inside = np.flatnonzero((low < LOG_EDGES) & (high > LOG_EDGES))
    changes = np.diff(below, prepend=0.0, append=1.0)  # changes[i]: from edge i-1 to edge i
    keep = inside[(changes[inside] != 0) | (changes[inside + 1] != 0)]
    middle = [(float(LOG_EDGES[i]), float(below[i])) for i in keep]
    return [(low, 1 / n), *middle, (high, 1.0)]


def cdf_binned(summary: Summary, samples: RunSamples, metric: str) -> list[str]:
    """The labels of the steps whose CDF of ``metric`` is drawn from bins."""
    return [
        point_label(s) for s in curve_steps(summary) if samples.step(s.index).column(metric).binned
    ]


def timeline_origin_ns(summary: Summary, samples: RunSamples | None) -> int:
    """Time zero of the timeline: the run's clock anchor, or the first send if earlier."""
    candidates = [summary.clock_anchor.monotonic_ns]
    if samples is not None and len(samples.sent_ns):
        candidates.append(int(np.frombuffer(samples.sent_ns, dtype=np.int64).min()))
    candidates += [s.started_ns for s in summary.steps if s.started_ns]
    positive = [c for c in candidates if c > 0]
    return min(positive) if positive else 0


def step_spans(summary: Summary, t0_ns: int) -> list[tuple[float, float, str]]:
    """(start s, end s, load label) of each step's measured window on the timeline."""
    return [
        ((s.started_ns - t0_ns) / _NS_PER_S, (s.ended_ns - t0_ns) / _NS_PER_S, point_label(s))
        for s in summary.steps
        if s.ended_ns > s.started_ns > 0
    ]


def steady_spans(summary: Summary, t0_ns: int) -> list[tuple[float, float, str]]:
    """(start s, end s, load label) of each step's steady window, where the step has one:
    the part of the measured window its throughput and goodput come from."""
    return [
        ((a - t0_ns) / _NS_PER_S, (b - t0_ns) / _NS_PER_S, point_label(s))
        for s in summary.steps
        if (a := s.steady_started_ns) is not None
        and (b := s.steady_ended_ns) is not None
        and b > a > 0
    ]


def _bins(t_min: int, t_max: int, max_bins: int) -> np.ndarray[Any, np.dtype[np.float64]]:
    span = max(t_max - t_min, 1)
    n = int(min(max_bins, max(10, span / (0.1 * _NS_PER_S))))
    return np.linspace(t_min, t_min + span, n + 1)


def _in_flight(samples: RunSamples, edges: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Time-mean requests in flight per bin: the integral of the in-flight count / bin width.

    integral(t) = sum over sent < t of (t - sent) - sum over end < t of (t - end).
    """
    sent = np.sort(np.asarray(samples.sent_ns, dtype=float))
    end = np.sort(np.asarray(samples.end_ns, dtype=float))
    cum_s, cum_e = np.concatenate(([0.0], np.cumsum(sent))), np.concatenate(([0.0], np.cumsum(end)))
    k_s, k_e = np.searchsorted(sent, edges), np.searchsorted(end, edges)
    integral = (k_s * edges - cum_s[k_s]) - (k_e * edges - cum_e[k_e])
    mean: np.ndarray[Any, Any] = np.diff(integral) / np.diff(edges)
    return mean


def timeline_series(
    summary: Summary,
    samples: RunSamples | None,
    telemetry: list[dict[str, Any]],
    max_bins: int = 400,
) -> Series:
    """x = seconds since :func:`timeline_origin_ns`.

    ``in flight``: time-mean requests in flight per bin (warm-up included);
    ``output tokens/s``: token events per bin weighted by tokens per event (a run of
    more than :data:`~loadgen.results.bins.EXACT_UP_TO` token events: from 1 ms bins or
    wider, :class:`~loadgen.results.bins.TimeBins`);
    from telemetry.jsonl, when present: ``server running``, ``server waiting``,
    ``KV cache usage`` (%) and ``GPU<n> util`` (%) per GPU.
    """
    t0 = timeline_origin_ns(summary, samples)
    out: Series = {}
    if samples is not None and len(samples.sent_ns):
        sent = np.frombuffer(samples.sent_ns, dtype=np.int64)
        end = np.frombuffer(samples.end_ns, dtype=np.int64)
        edges = _bins(int(sent.min()), int(end.max()), max_bins)
        mids = ((edges[:-1] + edges[1:]) / 2 - t0) / _NS_PER_S
        out["in flight"] = list(
            zip(mids.tolist(), _in_flight(samples, edges).tolist(), strict=True)
        )
        rate = samples.tokens.between(edges) / (np.diff(edges) / _NS_PER_S)
        out["output tokens/s"] = list(zip(mids.tolist(), rate.tolist(), strict=True))
    out.update(_telemetry_timeline(telemetry, t0))
    return out


def _telemetry_timeline(rows: list[dict[str, Any]], t0: int) -> Series:
    out: Series = {}

    def add(label: str, t: Any, value: Any, scale: float = 1.0) -> None:
        if isinstance(t, int) and isinstance(value, int | float) and not isinstance(value, bool):
            out.setdefault(label, []).append(((t - t0) / _NS_PER_S, float(value) * scale))

    gpu_names: dict[tuple[str, int], str] = {}
    for row in rows:
        kind, t = row.get("type"), row.get("t_ns")
        if kind == "server":
            add("server running", t, row.get("running"))
            add("server waiting", t, row.get("waiting"))
            add("KV cache usage", t, row.get("kv_usage"), 100.0)
        elif kind == "gpu" and isinstance(row.get("gpu"), int):
            key = (str(row.get("source")), int(row["gpu"]))
            name = gpu_names.setdefault(key, f"GPU{len(gpu_names)} util")
            add(name, t, row.get("util_gpu_pct"))
    return {k: sorted(v) for k, v in out.items()}
