"""The throughput-interactivity frontier: each step's point and the Pareto front of a run.

Owns the formulas of docs/metrics.md, "The frontier":

- interactivity of a request = output_tokens / decode time, decode time =
  (last token - first token) in seconds; defined for a successful measured
  request with output_tokens >= 2, two token stamps at least and a decode time
  > 0. A step's interactivity is the median (numpy's: the mean of the two
  middle values for an even count) over the requests that have one.
- interactivity from TPOT = 1000 / TPOT p50 (ms).
- throughput per GPU = output tokens/s / GPUs serving; the GPUs are the
  scenario's ``cost.gpus`` when given, else ``telemetry.total.gpus``.
- A point dominates another when it is at least as high on both axes and
  higher on one; the front is the points no other point dominates (equal
  points are all on it). The best point under the SLA is the step that meets
  the SLA with the most throughput (ties: the more interactive, then the first).

Pure: numbers in, numbers out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from loadgen.clock import NS_PER_S
from loadgen.metrics.columns import NONE, StepColumns
from loadgen.summary import FrontierPoint, StepSummary

__all__ = [
    "best_under_sla",
    "frontier_point",
    "interactivity",
    "pareto_front",
    "per_request_interactivity",
    "with_gpus",
]

NO_GPUS = "no GPU count: no GPU telemetry in the step and no cost.gpus in the scenario"


def per_request_interactivity(cols: StepColumns) -> npt.NDArray[np.float64]:
    """output_tokens / ((last - first) / 1e9) of each successful measured request that has
    one (two tokens, two stamps, decode time > 0), in row order."""
    n, first, last = cols.ok("output_tokens"), cols.ok("first"), cols.ok("last")
    has = (n >= 2) & (cols.ok("stamps") >= 2) & (first != NONE) & (last != NONE)
    decode = np.where(has, last - first, 0)
    has &= decode > 0
    rates: npt.NDArray[np.float64] = n[has] * NS_PER_S / decode[has].astype(np.float64)
    return rates


def interactivity(cols: StepColumns) -> tuple[float | None, int]:
    """(the median of :func:`per_request_interactivity`, how many requests it is over)."""
    rates = per_request_interactivity(cols)
    return (float(np.median(rates)) if len(rates) else None), len(rates)


def frontier_point(step: StepSummary, cols: StepColumns, cost_gpus: int | None) -> FrontierPoint:
    """The step's point from its columns and its figures (throughput, TPOT, cost, telemetry)."""
    value, count = interactivity(cols)
    point = FrontierPoint(interactivity_tok_s=value, interactivity_requests=count)
    return with_gpus(step, point, cost_gpus)


def with_gpus(step: StepSummary, point: FrontierPoint, cost_gpus: int | None) -> FrontierPoint:
    """``point`` with the figures read from the step filled in again: the TPOT speed, the
    throughput, the GPU count (after telemetry is added) and the cost."""
    tpot = step.tpot_ms.p50
    tok_s = step.throughput.output_tokens_per_s
    gpus: int | None = cost_gpus
    source = "cost.gpus" if cost_gpus else None
    total = step.telemetry.total if step.telemetry is not None else None
    if gpus is None and total is not None and total.gpus > 0:
        gpus, source = total.gpus, "telemetry"
    return point.model_copy(
        update={
            "tpot_tok_s": 1000.0 / tpot if tpot else None,
            "output_tokens_per_s": tok_s,
            "gpus": gpus,
            "gpus_from": source,
            "output_tokens_per_s_per_gpu": tok_s / gpus if gpus else None,
            "per_gpu_missing": None if gpus else NO_GPUS,
            "usd_per_million_output_tokens": (
                step.cost.usd_per_million_output_tokens if step.cost is not None else None
            ),
        }
    )


def pareto_front(points: Sequence[tuple[float | None, float | None]]) -> list[int]:
    """Indexes of the points no other dominates, by rising x (then falling y, then index);
    a point with a None coordinate is on no front."""
    known = [(x, y, i) for i, (x, y) in enumerate(points) if x is not None and y is not None]
    front: list[int] = []
    best_y = -np.inf
    last: tuple[float, float] | None = None
    # From the most interactive down: a point is on the front when it beats every point to
    # its right on throughput, or equals the last point kept (ties stay).
    for x, y, i in sorted(known, key=lambda p: (-p[0], -p[1], p[2])):
        if y > best_y or (x, y) == last:
            front.append(i)
            best_y, last = y, (x, y)
    return sorted(front, key=lambda i: (points[i][0], -(points[i][1] or 0.0), i))


def best_under_sla(
    points: Sequence[tuple[float | None, float | None]], meets: Sequence[bool]
) -> int | None:
    """The index of the point that meets the SLA with the highest y (ties: higher x, then
    the first); None when no point with a y meets it."""
    ok = [
        (y, -np.inf if x is None else x, i)
        for i, ((x, y), m) in enumerate(zip(points, meets, strict=True))
        if m and y is not None
    ]
    if not ok:
        return None
    return min(ok, key=lambda t: (-t[0], -t[1], t[2]))[2]
