"""The per-request formulas of latency.py and profiles.py, over a step's columns at once.

Each function is the vectorised twin of a function on one
:class:`~loadgen.records.Record` (named in its docstring), reads the profile's
row of :data:`~loadgen.metrics.profiles.PROFILES` (no profile is named here),
and gives the same
values in the same order: integers stay int64 (stamps only subtract), the
ratios (TPOT) are one float64 division of two exact integers, as Python's
``int / int`` is. ``tests/unit/metrics/test_columns.py`` holds the two
versions to equality over every profile.

A column holds None as :data:`~loadgen.metrics.columns.NONE`; a function
returns the values of the requests that have one, in row order.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from loadgen.metrics.columns import NONE, StepColumns
from loadgen.metrics.profiles import PROFILES

__all__ = [
    "STAMP",
    "Columns",
    "e2e",
    "icl_values",
    "itl_values",
    "latency",
    "lead",
    "queue_wait",
    "tpot",
    "tpot_rows",
    "ttft",
    "ttft_from_scheduled",
    "ttft_rows",
]

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Values = Ints | Floats


class Columns:
    """The successful requests' columns, read once from a :class:`StepColumns`."""

    def __init__(self, cols: StepColumns) -> None:
        self.source = cols
        self._cache: dict[str, Ints] = {}

    def __getitem__(self, name: str) -> Ints:
        got = self._cache.get(name)
        if got is None:
            got = self._cache[name] = self.source.ok(name)
        return got

    def __len__(self) -> int:
        return self.source.ok_count


#: ``sla.ttft_of`` (and the split TTFTs) -> the column of the stamp (``FIRST_STAMP``)
STAMP = {"any": "first", "answer": "first_answer", "reasoning": "first_reasoning"}


def lead(c: Columns, profile: str, latency_from: str) -> Ints | int:
    """``Profile.lead_ns``: origin - scheduled where scheduled is known and
    ``latency_from`` is ``scheduled``; else 0."""
    if latency_from != "scheduled":
        return 0
    scheduled = c["scheduled"]
    known = scheduled != NONE
    origin = c[PROFILES[profile].counts_from]
    return np.where(known, origin - np.where(known, scheduled, 0), 0)


def ttft_rows(
    c: Columns, profile: str, stamp: str = "any", latency_from: str = "scheduled"
) -> tuple[Ints, npt.NDArray[np.bool_]]:
    """``Profile.ttft`` for every row (garbage where undefined), and where the stamp is known:
    TTFT = stamp - origin + lead."""
    t = c[STAMP[stamp]]
    origin = c[PROFILES[profile].counts_from]
    return t - origin + lead(c, profile, latency_from), t != NONE


def ttft(c: Columns, profile: str, stamp: str = "any", latency_from: str = "scheduled") -> Ints:
    """``Profile.ttft`` where the stamp is known."""
    values, has = ttft_rows(c, profile, stamp, latency_from)
    return values[has]


def e2e(c: Columns, profile: str) -> tuple[Ints, npt.NDArray[np.bool_]]:
    """``Profile.e2e`` for every row, and where it is defined: end stamp - origin."""
    p = PROFILES[profile]
    end = c[p.ends_at]
    has = np.ones(len(c), dtype=bool) if p.ends_at == "end" else end != NONE
    return end - c[p.counts_from], has


def latency(c: Columns, profile: str, latency_from: str = "scheduled") -> Ints:
    """``Profile.latency``: E2E + lead, where E2E is defined."""
    values, has = e2e(c, profile)
    return (values + lead(c, profile, latency_from))[has]


def _tpot_rows(c: Columns, profile: str) -> tuple[Floats, npt.NDArray[np.bool_]]:
    n, first, last = c["output_tokens"], c["first"], c["last"]
    rule = PROFILES[profile].tpot_rule
    if rule == "with_wait":  # (last - start) / n
        has = (last != NONE) & (n >= 1)
        return (last - c["start"]) / np.where(has, n, 1), has
    has = (n >= 2) & (first != NONE) & (last != NONE)
    if rule == "between":  # latency.tpot_ns: (last - first) / (n - 1), two stamps at least
        has &= c["stamps"] >= 2
    # vllm: ((last - start) - (first - start)) / (n - 1): the same integers
    return (last - first) / np.where(has, n - 1, 1), has


def tpot(c: Columns, profile: str) -> Floats:
    """``Profile.tpot`` where it is defined."""
    values, has = _tpot_rows(c, profile)
    return values[has]


def tpot_rows(c: Columns, profile: str) -> tuple[Floats, npt.NDArray[np.bool_]]:
    """``Profile.tpot`` for every row (garbage where undefined), and where it is defined."""
    return _tpot_rows(c, profile)


def itl_values(c: Columns, profile: str) -> Values | npt.NDArray[np.int32]:
    """``Profile.itl``: the pooled gaps, or one TPOT per request (the ``between`` rule)."""
    if PROFILES[profile].itl_rule == "per_request":
        return tpot(c, "loadgen")
    return c.source.gaps()


def icl_values(c: Columns, profile: str) -> npt.NDArray[np.int32] | Ints | None:
    """``Profile.icl``: the pooled gaps, where the profile names them ICL; else None."""
    return c.source.gaps() if PROFILES[profile].names_icl else None


def ttft_from_scheduled(c: Columns, stamp: str = "any") -> Ints:
    """``latency.ttft_from_scheduled_ns``: stamp - scheduled, where both are known."""
    t, scheduled = c[STAMP[stamp]], c["scheduled"]
    values: Ints = (t - scheduled)[(t != NONE) & (scheduled != NONE)]
    return values


def queue_wait(c: Columns) -> Ints:
    """``latency.queue_wait_ns``: start - scheduled, where scheduled is known."""
    scheduled = c["scheduled"]
    values: Ints = (c["start"] - scheduled)[scheduled != NONE]
    return values
