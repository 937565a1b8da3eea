"""Bounded memory for a big step's values on a plot: exact while small, counted in bins past that.

A plot needs a few thousand points, not the 12.8 million ITL values of a
100,000-request step (100 MiB as float64, 400 MiB as Python floats). The
statistics in summary.json are the run's, computed exactly from its columns;
these classes only feed the drawings.

- :class:`ValueColumn`: one metric's values (ms) of one step, kept exactly up to
  ``exact_up_to`` values (default :data:`EXACT_UP_TO`; None: always). Past that,
  the column is *binned*: its values are counted in :data:`LOG_EDGES`, a fixed
  log-spaced histogram from 1 ns to 10^7 ms, 200 bins a decade (each 1.2% wide),
  a chunk at a time, with the count, min and max kept exactly.
- :class:`StampColumn`: weighted event stamps (ns): the run's token events, for
  the timeline's output tokens/s. Exact up to ``exact_up_to`` stamps; past that
  they are summed in :class:`TimeBins`.
- :class:`TimeBins`: weights summed in bins of a fixed width from an origin (1 ms
  at first, doubled whenever the bins would pass :data:`MAX_TIME_BINS`), read
  at any edges by interpolating the cumulative weight (a bin's weight taken as
  spread evenly over it).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "EXACT_UP_TO",
    "LOG_EDGES",
    "MAX_TIME_BINS",
    "StampColumn",
    "TimeBins",
    "ValueColumn",
]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]

#: values (or stamps) a column keeps exactly; past this it is binned (and folds this many at a time)
EXACT_UP_TO = 1 << 20
#: edges (ms) of a binned column: 1 ns to 10^7 ms (2.8 h), 200 a decade
LOG_EDGES: Floats = np.logspace(-6, 7, 13 * 200 + 1)
#: most bins a :class:`TimeBins` holds (1 MiB); past it the width doubles
MAX_TIME_BINS = 1 << 17


class ValueColumn:
    """The values (ms) of one metric of one step; see the module for when it is binned."""

    __slots__ = ("_buf", "_counts", "exact_up_to", "high", "low")

    def __init__(self, exact_up_to: int | None = EXACT_UP_TO) -> None:
        self.exact_up_to = exact_up_to
        self._buf = array("d")
        self._counts: Ints | None = None  # per bin of LOG_EDGES (len + 1: below, above)
        self.low = float("inf")  # min and max of the folded values
        self.high = float("-inf")

    def append(self, value: float) -> None:
        self._buf.append(value)
        self._check()

    def extend(self, values: Iterable[float]) -> None:
        self._buf.extend(values)
        self._check()

    def _check(self) -> None:
        if self.exact_up_to is not None and len(self._buf) > self.exact_up_to:
            self._fold()

    def _fold(self) -> None:
        if not self._buf:
            return
        values = np.frombuffer(self._buf, dtype=np.float64)
        if self._counts is None:
            self._counts = np.zeros(LOG_EDGES.size + 1, dtype=np.int64)
        where = np.searchsorted(LOG_EDGES, values, side="right")
        self._counts += np.bincount(where, minlength=self._counts.size)
        self.low = min(self.low, float(values.min()))
        self.high = max(self.high, float(values.max()))
        del values, where  # a view: the buffer cannot be replaced while it lives
        self._buf = array("d")

    @property
    def binned(self) -> bool:
        return self._counts is not None

    def __len__(self) -> int:
        folded = 0 if self._counts is None else int(self._counts.sum())
        return folded + len(self._buf)

    def values(self) -> Floats:
        """Every value, in the order added (a view: do not append while it lives)."""
        if self._counts is not None:
            msg = f"a binned column ({len(self):,} values) keeps no values; read histogram()"
            raise ValueError(msg)
        return np.frombuffer(self._buf, dtype=np.float64)

    def histogram(self) -> tuple[Ints, float, float]:
        """(count per bin of :data:`LOG_EDGES`, below the first first, above the last last;
        min; max) of a binned column."""
        self._fold()
        if self._counts is None:
            raise ValueError("the column is not binned; read values()")
        return self._counts, self.low, self.high


class TimeBins:
    """Weights summed in bins ``width_ns`` wide from ``origin_ns`` (see the module)."""

    __slots__ = ("origin_ns", "weights", "width_ns")

    def __init__(self, width_ns: int = 1_000_000) -> None:
        self.width_ns = width_ns
        self.origin_ns: int | None = None
        self.weights: Floats = np.zeros(0)

    def add(self, stamps_ns: Ints, weights: Floats) -> None:
        if stamps_ns.size == 0:
            return
        if self.origin_ns is None:
            self.origin_ns = int(stamps_ns.min())
        where = (stamps_ns - self.origin_ns) // self.width_ns
        first, last = int(where.min()), int(where.max())
        if first < 0:  # earlier than the origin: move it back, whole bins
            self.origin_ns += first * self.width_ns
            self.weights = np.concatenate([np.zeros(-first), self.weights])
            where -= first
            last -= first
        while max(last + 1, self.weights.size) > MAX_TIME_BINS:
            if self.weights.size % 2:
                self.weights = np.append(self.weights, 0.0)
            self.weights = self.weights.reshape(-1, 2).sum(axis=1)
            self.width_ns *= 2
            where //= 2
            last //= 2
        if last + 1 > self.weights.size:
            self.weights = np.concatenate([self.weights, np.zeros(last + 1 - self.weights.size)])
        self.weights += np.bincount(where, weights=weights, minlength=self.weights.size)

    def between(self, edges_ns: Floats) -> Floats:
        """The weight between consecutive ``edges_ns`` (len(edges) - 1 values)."""
        if self.origin_ns is None:
            return np.zeros(max(edges_ns.size - 1, 0))
        at = np.arange(self.weights.size + 1, dtype=np.float64) * self.width_ns
        cumulative = np.concatenate([[0.0], np.cumsum(self.weights)])
        out: Floats = np.diff(np.interp(edges_ns - self.origin_ns, at, cumulative))
        return out


class StampColumn:
    """Weighted stamps (ns) added a request at a time; see the module for when it is binned."""

    __slots__ = ("_bins", "_stamps", "_weights", "count", "exact_up_to")

    def __init__(self, exact_up_to: int | None = EXACT_UP_TO) -> None:
        self.exact_up_to = exact_up_to
        self._stamps = array("q")
        self._weights = array("d")
        self._bins: TimeBins | None = None
        self.count = 0

    def extend(self, stamps_ns: list[int], weight: float) -> None:
        """Each of ``stamps_ns`` with the same ``weight``."""
        self._stamps.extend(stamps_ns)
        self._weights.extend([weight] * len(stamps_ns))
        self.count += len(stamps_ns)
        if self.exact_up_to is not None and len(self._stamps) > self.exact_up_to:
            self._fold()

    def _fold(self) -> None:
        if self._bins is None:
            self._bins = TimeBins()
        stamps = np.frombuffer(self._stamps, dtype=np.int64)
        self._bins.add(stamps, np.frombuffer(self._weights, dtype=np.float64))
        del stamps
        self._stamps, self._weights = array("q"), array("d")

    @property
    def binned(self) -> bool:
        return self._bins is not None

    def __len__(self) -> int:
        return self.count

    def between(self, edges_ns: npt.NDArray[Any]) -> Floats:
        """The summed weight of the stamps between consecutive ``edges_ns``."""
        edges = np.asarray(edges_ns, dtype=np.float64)
        if self._bins is None:
            counts, _ = np.histogram(
                np.asarray(self._stamps, dtype=float),
                bins=edges,
                weights=np.asarray(self._weights, dtype=float),
            )
            out: Floats = counts.astype(np.float64)
            return out
        self._fold()
        return self._bins.between(edges)
