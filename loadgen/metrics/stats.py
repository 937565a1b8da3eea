"""Summary statistics over raw values: no bucketing, every value counts.

Percentiles use numpy's default linear interpolation (as vLLM's benchmark
does); std is the population standard deviation.

The values (a list, or a numpy array of any integer or float type) are
turned into one float64 array of milliseconds, and that one array is all
the memory the statistics take: the standard deviation is numpy's own
formula worked in place, the percentiles partition the array in place. The
numbers are bit for bit those of ``np.asarray(values, float64) / 1e6`` with
``.mean()``, ``.std()`` and ``np.percentile``.

An integer array of more than ``bigstats.CHUNKED_ABOVE`` values (2**24: the
pooled ITL gaps of a step of some 130,000 128-token requests) is not copied
at all: loadgen.metrics.bigstats reads it in chunks, with exact count, min,
max and percentiles and a mean and std within float rounding of numpy's.

Imports: numpy, loadgen.summary, loadgen.metrics.bigstats.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
import numpy.typing as npt

from loadgen.metrics import bigstats
from loadgen.summary import PERCENTILES, Distribution

__all__ = ["distribution_ms"]


def distribution_ms(values_ns: Sequence[float] | npt.NDArray[np.number]) -> Distribution:
    """Statistics of nanosecond values, reported in milliseconds."""
    if len(values_ns) == 0:
        return Distribution()
    if (
        isinstance(values_ns, np.ndarray)
        and values_ns.dtype.kind == "i"
        and values_ns.size > bigstats.CHUNKED_ABOVE
    ):
        return bigstats.big_distribution_ms(cast("bigstats.Ints", values_ns))  # not copied
    a = _ms(values_ns)
    n = a.size
    mean, lo, hi = a.mean(), a.min(), a.max()
    # np.std: sqrt(sum((a - mean)**2) / n), the mean kept as a 1-element array
    a -= np.add.reduce(a, keepdims=True) / n
    np.square(a, out=a)
    std = np.sqrt(np.add.reduce(a) / n)
    a = _ms(values_ns, out=a)
    pct = np.percentile(a, PERCENTILES, overwrite_input=True)
    keys = ["p" + f"{p:g}".replace(".", "_") for p in PERCENTILES]
    return Distribution(
        count=int(n),
        mean=float(mean),
        std=float(std),
        min=float(lo),
        max=float(hi),
        **{k: float(v) for k, v in zip(keys, pct, strict=True)},
    )


def _ms(
    values_ns: Sequence[float] | npt.NDArray[np.number],
    out: npt.NDArray[np.float64] | None = None,
) -> npt.NDArray[np.float64]:
    """values / 1e6 as a new float64 array (or into ``out``): each made float64, then divided."""
    src = values_ns if isinstance(values_ns, np.ndarray) else np.asarray(values_ns, np.float64)
    if out is None:
        out = np.empty(src.shape, dtype=np.float64)
    np.divide(src, 1e6, out=out, dtype=np.float64)
    return out
