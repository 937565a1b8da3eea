"""The steps of compared runs matched to each other.

Owns the matching of steps across runs: by load mode and the nearest load
value within a relative tolerance (rate 4 in one run with rate 4.1 in the
other), an ``auto`` sweep's concurrency probe only with a probe. Each match
is named by its loads (``rate 4 req/s ~ 4.1``); the gate judges the matched
pairs (:mod:`loadgen.compare.regression`), the report lays them out in
tables (:mod:`loadgen.report.documents.comparison`).
"""

from __future__ import annotations

from collections.abc import Sequence

from loadgen.compare.runs import Run
from loadgen.results import load_label, load_value
from loadgen.summary import StepSummary

__all__ = [
    "MATCH_TOLERANCE",
    "matched_steps",
]

#: Two loads match when they differ by at most this fraction of the larger one.
MATCH_TOLERANCE = 0.1


def _distance(a: StepSummary, b: StepSummary) -> float | None:
    """How far apart two steps' loads are, as a fraction of the larger; None: never matched
    (another mode, a probe with a step, a load without a value)."""
    if a.role != b.role or a.load.mode != b.load.mode:
        return None
    va, vb = load_value(a), load_value(b)
    if va is None or vb is None:
        return None
    return abs(va - vb) / (max(abs(va), abs(vb)) or 1.0)


def _nearest(
    base: Sequence[StepSummary], other: Sequence[StepSummary], tolerance: float
) -> dict[int, StepSummary]:
    """Baseline position -> the other run's step at the nearest load within ``tolerance``;
    each step is matched once, the closest pairs first (then run order)."""
    pairs = sorted(
        (d, i, j)
        for i, a in enumerate(base)
        for j, b in enumerate(other)
        if (d := _distance(a, b)) is not None and d <= tolerance
    )
    out: dict[int, StepSummary] = {}
    used: set[int] = set()
    for _d, i, j in pairs:
        if i not in out and j not in used:
            out[i] = other[j]
            used.add(j)
    return out


def _label(steps: Sequence[StepSummary | None]) -> str:
    """The baseline's load, and ``~`` each other load matched to it: ``rate 4 req/s ~ 4.1``."""
    labels: list[str] = []
    for s in steps:
        if s is not None:
            label = ("probe " if s.role == "probe" else "") + load_label(s)
            if label not in labels:
                labels.append(label)
    return " ~ ".join(labels)


def matched_steps(
    runs: Sequence[Run], *, tolerance: float = MATCH_TOLERANCE
) -> list[tuple[str, list[StepSummary | None]]]:
    """(load label, the step of each run or None) for each step of the baseline some other
    run has a match for: same mode and role (a probe only with a probe), the nearest load
    value within ``tolerance`` (a fraction of the larger load). Probes first, then the
    baseline's steps in load order.
    """
    base = sorted(
        runs[0].summary.steps,
        key=lambda s: (s.role != "probe", load_value(s) is None, load_value(s) or 0.0, s.index),
    )
    found = [_nearest(base, run.summary.steps, tolerance) for run in runs[1:]]
    out = []
    for i, b in enumerate(base):
        row: list[StepSummary | None] = [b, *(f.get(i) for f in found)]
        if any(s is not None for s in row[1:]):
            out.append((_label(row), row))
    return out
