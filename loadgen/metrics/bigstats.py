"""Statistics of a very large integer array without a float copy of it: the pooled ITL gaps
of a million-request step (127 million values for 128-token answers).

:func:`loadgen.metrics.stats.distribution_ms` turns its values into one float64
array of milliseconds; for 127 million gaps that is 1 GiB more than the
int32 gaps themselves. Above :data:`CHUNKED_ABOVE` integer values it calls
:func:`big_distribution_ms` instead, which reads the array a chunk at a time:

- count, min, max: exact, as numpy gives them;
- percentiles: exact, numpy's linear interpolation (``np.percentile``) between
  the same two order statistics with the same weight; the order statistics
  are found by histogram passes (16 bits of the value range per pass), not by
  sorting a copy;
- mean: the exact integer sum divided once (correctly rounded), where numpy
  sums floats pairwise: the two may differ in the last digit or two
  (relative 1e-15);
- std: sqrt(sum((x - mean)^2) / n) over float64 chunks, summed chunk by
  chunk: likewise within relative 1e-12 of numpy's.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from loadgen.summary import Distribution
from loadgen.vocab import PERCENTILE_OF, PERCENTILES

__all__ = ["CHUNK", "CHUNKED_ABOVE", "big_distribution_ms", "order_statistics", "percentiles_ms"]

#: integer arrays longer than this take the chunked path (2**24: 128 MiB as float64)
CHUNKED_ABOVE = 1 << 24
#: values read at a time
CHUNK = 1 << 20
#: histogram buckets per pass (bits of the value range resolved at a time)
_BITS = 16

Ints = npt.NDArray[np.signedinteger[Any]]


def _chunks(a: Ints) -> list[Ints]:
    return [a[i : i + CHUNK] for i in range(0, a.size, CHUNK)]


def big_distribution_ms(values_ns: Ints) -> Distribution:
    """Statistics of integer nanosecond values, reported in milliseconds (see the module)."""
    n = int(values_ns.size)
    if n == 0:
        return Distribution()
    total = sum(int(c.sum(dtype=np.int64)) for c in _chunks(values_ns))
    mean = total / (n * 1_000_000)
    squares = 0.0
    for c in _chunks(values_ns):
        x = c / 1e6
        x -= mean
        squares += float(np.dot(x, x))
    return Distribution(
        count=n,
        mean=mean,
        std=math.sqrt(squares / n),
        min=int(values_ns.min()) / 1e6,
        max=int(values_ns.max()) / 1e6,
        **dict(zip(PERCENTILE_OF, percentiles_ms(values_ns), strict=True)),
    )


def percentiles_ms(values_ns: Ints) -> list[float]:
    """``np.percentile(values / 1e6, PERCENTILES)`` (linear), from order statistics."""
    n = int(values_ns.size)
    q = np.true_divide(np.asarray(PERCENTILES, dtype=np.float64), 100)
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    gamma = virtual - previous
    below = [min(int(p), n - 1) for p in previous]
    above = [min(int(p) + 1, n - 1) for p in previous]
    ranked = order_statistics(values_ns, sorted({*below, *above}))
    out = []
    for lo_rank, hi_rank, g in zip(below, above, gamma.tolist(), strict=True):
        a, b = ranked[lo_rank] / 1e6, ranked[hi_rank] / 1e6
        diff = b - a  # numpy's _lerp: from the nearer end
        out.append(b - diff * (1 - g) if g >= 0.5 else a + diff * g)
    return out


def order_statistics(values: Ints, ranks: list[int]) -> dict[int, int]:
    """The values at 0-based ``ranks`` of the sorted array, without sorting it or copying it."""
    found: dict[int, int] = {}
    _select(values, ranks, int(values.min()), int(values.max()), found, 0)
    return found


def _select(
    values: Ints, ranks: list[int], lo: int, hi: int, found: dict[int, int], below: int
) -> None:
    """Resolve ``ranks`` (global) among the values in [lo, hi], ``below`` values lying under lo."""
    if lo == hi:
        found.update((r, lo) for r in ranks)
        return
    shift = max(0, (hi - lo).bit_length() - _BITS)
    counts = np.zeros(((hi - lo) >> shift) + 1, dtype=np.int64)
    for c in _chunks(values):
        inside = c[(c >= lo) & (c <= hi)].astype(np.int64)
        counts += np.bincount((inside - lo) >> shift, minlength=counts.size)
    ends = np.cumsum(counts) + below  # global rank just past each bucket
    by_bucket: dict[int, list[int]] = {}
    for r in ranks:
        by_bucket.setdefault(int(np.searchsorted(ends, r, side="right")), []).append(r)
    for bucket, rs in by_bucket.items():
        start = int(ends[bucket - 1]) if bucket else below  # global rank of its first value
        b_lo = lo + (bucket << shift)
        b_hi = min(hi, b_lo + (1 << shift) - 1)
        if b_lo == b_hi:
            found.update((r, b_lo) for r in rs)
        elif int(counts[bucket]) <= CHUNK:
            held = np.sort(np.concatenate([c[(c >= b_lo) & (c <= b_hi)] for c in _chunks(values)]))
            found.update((r, int(held[r - start])) for r in rs)
        else:
            _select(values, rs, b_lo, b_hi, found, start)
