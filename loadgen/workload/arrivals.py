"""Open-loop arrival schedules: offsets in ns from the step's start.

The schedule is a pure function of (rate, process, burstiness, seed): computed
up front, never from the clock, so a run can be repeated exactly.

- constant: every ``1/rate`` seconds.
- poisson: exponential gaps with mean ``1/rate``.
- gamma: gaps ~ Gamma(shape=burstiness, scale=1/(rate*burstiness)), as vLLM's
  benchmark defines it; the mean gap stays ``1/rate``, burstiness < 1 is
  burstier than Poisson, > 1 steadier, and 1 is Poisson.

The first request goes at offset 0 for constant, after one drawn gap otherwise.

Imports: numpy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["arrival_offsets_ns"]


def arrival_offsets_ns(
    rate: float,
    process: str,
    rng: np.random.Generator,
    *,
    count: int | None = None,
    duration_s: float | None = None,
    burstiness: float = 1.0,
) -> list[int]:
    """Offsets (ns) of ``count`` arrivals, or of every arrival before ``duration_s``."""
    if (count is None) == (duration_s is None):
        raise ValueError("give exactly one of count and duration_s")
    if rate <= 0 or burstiness <= 0:
        raise ValueError(f"rate and burstiness must be > 0, got {rate}, {burstiness}")
    if count is not None:
        gaps = _gaps(rate, process, rng, count, burstiness)
    else:
        horizon = float(duration_s or 0.0)
        mean = rate * horizon
        n = int(mean + 10 * np.sqrt(mean / min(burstiness, 1.0)) + 16)
        gaps = _gaps(rate, process, rng, n, burstiness)
        while gaps.sum() < horizon:  # rare: extend until the window is covered
            gaps = np.concatenate([gaps, _gaps(rate, process, rng, n, burstiness)])
    if process == "constant":
        gaps[0] = 0.0
    offsets = np.cumsum(gaps)
    if duration_s is not None:
        offsets = offsets[offsets < duration_s]
    return [int(x) for x in np.rint(offsets * 1e9)]


def _gaps(
    rate: float,
    process: str,
    rng: np.random.Generator,
    n: int,
    burstiness: float,
) -> np.ndarray:
    if process == "constant":
        return np.full(n, 1.0 / rate)
    if process == "poisson":
        return rng.exponential(1.0 / rate, size=n)
    if process == "gamma":
        return rng.gamma(shape=burstiness, scale=1.0 / (rate * burstiness), size=n)
    raise ValueError(f"unknown arrival process {process!r}")
