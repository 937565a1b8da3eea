"""Open-loop arrival schedules: offsets in ns from the step's start.

The schedule is a pure function of (rate, process, burstiness, seed): computed
up front, never from the clock, so a run can be repeated exactly.

- constant: every ``1/rate`` seconds.
- poisson: exponential gaps with mean ``1/rate``.
- gamma: gaps ~ Gamma(shape=burstiness, scale=1/(rate*burstiness)), as vLLM's
  benchmark defines it; the mean gap stays ``1/rate``, burstiness < 1 is
  burstier than Poisson, > 1 steadier, and 1 is Poisson.

The first request goes at offset 0 for constant, after one drawn gap otherwise.

A ramp-up (``ramp_s``) makes the rate rise linearly from 0 to ``rate`` over
the first ``ramp_s`` seconds: the schedule drawn at the full rate is laid on
the cumulative intensity Lambda(t) = rate·t²/(2·ramp_s) for t < ramp_s, then
rate·ramp_s/2 + rate·(t - ramp_s) (time change of a point process; for Poisson
this is exactly the inhomogeneous Poisson process of that rate).
"""

from __future__ import annotations

import numpy as np

__all__ = ["arrival_offsets_ns", "ramped_offsets_ns"]


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
    offsets = np.rint(np.cumsum(gaps) * 1e9)
    if duration_s is not None:
        # compared in ns: a float sum a hair short of the end (0.1 added ten times) is at the end
        offsets = offsets[offsets < round(duration_s * 1e9)]
    return [int(x) for x in offsets]


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


def ramped_offsets_ns(offsets_ns: list[int], ramp_s: float) -> list[int]:
    """``offsets_ns`` drawn at a steady rate, moved onto a linear ramp of ``ramp_s``.

    A steady-rate arrival at time u (rate·u arrivals expected before it) goes
    where the ramped intensity has accumulated as many; the rate cancels out. After
    the ramp every gap is as drawn; the ramp adds ``ramp_s / 2`` to later offsets.
    """
    if ramp_s <= 0:
        return list(offsets_ns)
    u = np.asarray(offsets_ns, dtype=np.float64) / 1e9
    half = ramp_s / 2.0
    t = np.where(u < half, np.sqrt(np.maximum(u, 0.0) * 2.0 * ramp_s), u + half)
    return [int(x) for x in np.rint(t * 1e9)]
