"""Summary statistics over raw values: no bucketing, every value counts.

Percentiles use numpy's default linear interpolation (as vLLM's benchmark
does); std is the population standard deviation.

Imports: numpy, loadgen.summary.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loadgen.summary import PERCENTILES, Distribution

__all__ = ["distribution_ms"]


def distribution_ms(values_ns: Sequence[float]) -> Distribution:
    """Statistics of nanosecond values, reported in milliseconds."""
    if not values_ns:
        return Distribution()
    a = np.asarray(values_ns, dtype=np.float64) / 1e6
    pct = np.percentile(a, PERCENTILES)
    keys = ["p" + f"{p:g}".replace(".", "_") for p in PERCENTILES]
    return Distribution(
        count=int(a.size),
        mean=float(a.mean()),
        std=float(a.std()),
        min=float(a.min()),
        max=float(a.max()),
        **{k: float(v) for k, v in zip(keys, pct, strict=True)},
    )
